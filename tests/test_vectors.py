"""In-domain word vectors: the corpus holds out the target's dev and test
text, training is deterministic, and a config naming them builds, caches and
loads them."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest

from attn_jax.runs import initial_params as initial_params_lib
from attn_jax import config as config_lib
from attn_jax.data.dataset import load_dataset
from attn_jax.core.errors import ConfigError
from attn_jax.models import build_model
from attn_jax.vectors import build, corpus, fasttext
from conftest import requires_real_data

gensim = pytest.importorskip('gensim')


def sst_record(split, number, text, label=4):
  return {'id': f'{split}/{number}', 'text': text, 'label': label, 'tree': ''}


FAKE = {
    'sst': {'train': [sst_record('train', i, f'a good film number {i} indeed') for i in range(6)]
                     + [sst_record('train', 9, 'the very same words as a test one', 0)],
            'dev': [sst_record('dev', i, f'dev sentence {i} with enough words here', i % 2 * 4)
                    for i in range(7)],
            'test': [sst_record('test', 0, 'the very same words as a test one', 0)]
                    + [sst_record('test', i, f'test sentence {i} with many words in it' + ' too' * i,
                                  i % 2 * 4) for i in range(1, 8)]},
    'imdb': {'train': [{'id': 'train/pos/1', 'text': 'A great movie<br />I loved it', 'label': 1}],
             'test': [{'id': 'test/neg/2', 'text': 'Dev words? No: the very same words as a test one',
                       'label': 0}]},
}


def test_the_corpus_holds_out_the_targets_dev_and_test_text():
  out = io.StringIO()
  stats = corpus.write_corpus('sst', ('sst', 'imdb'), FAKE.__getitem__, out)
  lines = out.getvalue().splitlines()
  # SST dev and test are held out whole; the train sentence equal to a test
  # sentence is held out too; other datasets' text is tokenised as SST's.
  assert stats['sst'] == {'documents': 6, 'tokens': 36, 'held_out': 16}
  assert 'test/0' in corpus.held_out('sst', FAKE['sst'])[0]
  assert not any('dev sentence' in l or 'test sentence' in l for l in lines)
  assert 'the very same words as a test one' not in lines
  assert 'a great movie br i loved it' in lines
  assert stats['imdb']['held_out'] == 0  # a document of another dataset is kept unless identical
  assert 'dev words no the very same words as a test one' in lines
  stats = corpus.write_corpus('sst', ('imdb',), lambda name: {
      **FAKE, 'imdb': {'test': [{'id': 'test/x', 'text': 'The very SAME words, as a test one!'}]}}[name],
      io.StringIO())
  assert stats['imdb'] == {'documents': 0, 'tokens': 0, 'held_out': 1}


RECIPE = {'epochs': 2, 'window': 3, 'min_count': 1, 'sg': 0, 'negative': 3, 'min_n': 2,
          'max_n': 3, 'seed': 5}


def tiny_corpus(tmp_path):
  text = tmp_path / 'corpus.txt'
  rng = np.random.default_rng(0)
  words = [f'w{i}' for i in range(60)]
  text.write_text('\n'.join(' '.join(rng.choice(words, 12)) for _ in range(300)) + '\n')
  return str(text)


def test_training_is_deterministic_given_the_seed(tmp_path):
  text = tiny_corpus(tmp_path)
  a = fasttext.train_vectors(text, 8, RECIPE)
  b = fasttext.train_vectors(text, 8, RECIPE)
  c = fasttext.train_vectors(text, 8, {**RECIPE, 'seed': 6})
  np.testing.assert_array_equal(a.vectors, b.vectors)
  assert not np.array_equal(a.vectors, c.vectors)


def test_training_is_deterministic_across_processes(tmp_path):
  """Python's string hashing changes per process; the vectors must not."""
  text = tiny_corpus(tmp_path)
  script = ('import sys, hashlib; from attn_jax.vectors import fasttext; '
            f'wv = fasttext.train_vectors({text!r}, 8, {RECIPE!r}); '
            'print(hashlib.sha256(wv.vectors.tobytes() + " ".join(wv.index_to_key).encode()).hexdigest())')
  digests = {subprocess.run([sys.executable, '-c', script], env={**os.environ, 'PYTHONHASHSEED': seed},
                            capture_output=True, text=True, check=True).stdout.strip() for seed in ('1', '2')}
  assert len(digests) == 1


def test_bad_corpora_are_refused():
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.vectors.corpora = 'sst,wikipedia'
  with pytest.raises(ConfigError, match='vectors.corpora'):
    build.corpora(cfg)


@requires_real_data
def test_a_config_naming_in_domain_vectors_builds_caches_and_loads_them(tfds_dir, tmp_path):
  cfg = config_lib.default_config('sst', 'bilstm', 'smoke')
  cfg.data.tfds_data_dir = tfds_dir
  cfg.data.max_docs_per_split = None  # the vocabulary of the real train split
  cfg.model.embeddings_file = build.IN_DOMAIN
  cfg.vectors.update(corpora='sst', epochs=1, directory=str(tmp_path))
  cfg.train.progress = False
  data = load_dataset(cfg.data)
  logs = []
  path = build.ensure_vectors(cfg, data.vocab, logs.append)
  info = build.describe(path)
  assert info['corpus']['sst'] == {'documents': 8544, 'tokens': info['corpus_tokens'], 'held_out': 3311}
  assert 0.1 < info['coverage'] < 1 and info['recipe']['dim'] == 16
  assert build.ensure_vectors(cfg, data.vocab, logs.append) == path  # cached: not built again
  assert sum('building' in line for line in logs) == 1
  model = build_model(cfg.model, len(data.vocab))
  table = np.asarray(initial_params_lib.initial_params(model, cfg, data, lambda _: None)['embedding']['table'])
  assert np.count_nonzero(np.any(table != 0, axis=1)) == info['words_with_vectors']
  with open(path, 'a') as f:
    f.write('tampered 1\n')
  assert build.describe(path) is None  # a changed file is not trusted: it is built again
