"""The dataset entry point: checks on documents, fingerprint, word vectors."""

import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.data import dataset as dataset_lib
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.data.word_vectors import load_word_vectors
from attn_jax.core.errors import DataError


def synthetic_cfg():
  return config_lib.default_config('synthetic', 'bilstm', 'smoke').data


def test_synthetic_dataset_is_deterministic_and_labelled_by_planted_words():
  a, b = dataset_lib.load_dataset(synthetic_cfg()), dataset_lib.load_dataset(synthetic_cfg())
  assert a.fingerprint == b.fingerprint and len(a.splits['train']) == 64
  for seq, label in zip(a.splits['train'].sequences, a.splits['train'].labels):
    words = a.vocab.decode(seq)
    assert any(w.startswith('good' if label else 'bad') for w in words)
    assert not any(w.startswith('bad' if label else 'good') for w in words)


def test_fingerprint_changes_with_any_label():
  data = dataset_lib.load_dataset(synthetic_cfg())
  splits = dict(data.splits)
  test = splits['test']
  splits['test'] = dataset_lib.EncodedSplit(test.sequences, 1 - test.labels, test.ids)
  assert dataset_lib.fingerprint(data.vocab, splits) != data.fingerprint


@pytest.mark.parametrize('doc', [[], ['only']])
def test_empty_and_one_token_documents_are_refused(doc):
  vocab = Vocabulary.build([['a', 'b']], 1)
  with pytest.raises(DataError, match="document 'd2' has"):
    dataset_lib.encode_documents([['a', 'b'], ['b', 'a'], doc], vocab, ['d0', 'd1', 'd2'])


def test_word_vectors_file(tmp_path):
  vocab = Vocabulary.build([['cat', 'dog', 'emu']], 1)
  path = tmp_path / 'vec.txt'
  path.write_text('3 2\ncat 0.5 1.5\nzebra 1 1\ndog -1 2\n')
  matrix, found = load_word_vectors(str(path), vocab, 2)
  assert found == 2 and matrix.dtype == np.float32
  np.testing.assert_array_equal(matrix[vocab.encode(['cat'])[1]], [0.5, 1.5])
  assert not matrix[vocab.encode(['emu'])[1]].any() and not matrix[0].any()
  path.write_text('cat 0.5 1.5 3\n')
  with pytest.raises(DataError, match='vec.txt:1: 3 numbers after the word, expected 2'):
    load_word_vectors(str(path), vocab, 2)
  path.write_text('cat 0.5 x\n')
  with pytest.raises(DataError, match='not a number'):
    load_word_vectors(str(path), vocab, 2)
  with pytest.raises(DataError, match='cannot be read'):
    load_word_vectors(str(tmp_path / 'missing.txt'), vocab, 2)
  for empty in ('', '3 2\n'):  # a 0-byte file, a header alone: refused, not zeros for every word
    path.write_text(empty)
    with pytest.raises(DataError, match='holds no vectors'):
      load_word_vectors(str(path), vocab, 2)


def test_summary_records_the_source_and_the_fingerprint_ignores_it():
  data = dataset_lib.load_dataset(synthetic_cfg())
  assert data.source == {'standard': True, 'files': {}, 'notes': []}
  assert data.summary()['source'] == data.source
  assert dataset_lib.fingerprint(data.vocab, data.splits) == data.fingerprint
