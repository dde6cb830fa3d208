"""Datasets by registry: each module under attn_jax/data/datasets declares its
files, builder, protocol, texts, classes and defaults, and the loader, the
configs, the vectors' corpus and `aj.explain` ask the registry — so a new
dataset needs no edit anywhere else (the last test adds one); bAbI and SNLI
as J&W prepare them, on the files in ../shared/data when they are here."""

import dataclasses
import os

import numpy as np
import pytest

from attn_jax import config as config_lib, papers
from attn_jax.core.errors import ConfigError, DataError
from attn_jax.core.registry import DATASETS
from attn_jax.data import builders, jain_wallace_protocol as jain_wallace, sources
from attn_jax.data.dataset import load_dataset
from attn_jax.data.datasets import babi, snli
from attn_jax.data.datasets.dataset_spec import DatasetSpec, corpus_sources, with_files
from attn_jax.vectors import corpus

REAL_DATA = os.environ.get(sources.ENV_VAR)
needs_data = pytest.mark.skipif(not REAL_DATA, reason='set ATTN_JAX_DATA to read ../shared/data')


def test_the_datasets_and_what_they_declare():
  shipped = ('synthetic', 'sst', 'imdb', '20news', 'agnews', 'imdb_ratings', '20news_topics',
             'babi1', 'babi2', 'babi3', 'snli')
  assert tuple(n for n in DATASETS.names() if n in shipped) == shipped
  assert config_lib.choices()['data.dataset'] == DATASETS.names() == config_lib.DATASETS
  assert corpus_sources() == ('sst', 'imdb', '20news', 'agnews')
  for spec in DATASETS.values():
    assert spec.paper is None or spec.paper in papers.PAPERS
    assert (spec.prepare is None) == (spec.generate is not None), spec.name
    raw = DATASETS[spec.raw_name]
    assert raw.source is not None or spec.generate is not None, spec.name
    assert set(raw.reference) <= set(raw.source.files if raw.source else ()), spec.name
    assert len(spec.texts) in (1, 2) and spec.num_classes >= 2
  assert [d.name for d in DATASETS.values() if d.paired] == ['babi1', 'babi2', 'babi3', 'snli']
  assert {d.name for d in DATASETS.values() if d.hierarchical} == {'imdb_ratings', '20news_topics'}
  assert len(with_files()) == 8


def test_an_unknown_dataset_is_one_line_with_the_choices():
  with pytest.raises(ConfigError, match="unknown dataset 'babi4'.*choose from .*babi3"):
    config_lib.default_config('babi4', 'bilstm')


def test_a_dataset_added_in_one_place_loads_configures_and_feeds_the_corpus(tmp_path):
  """A registered dataset is all the loader, the config and the vectors need."""
  def prepare(raw, wanted):
    split = jain_wallace.TokenizedSplit([r['text'].split() for r in raw['train']],
                                        np.array([r['label'] for r in raw['train']], np.int32),
                                        [r['id'] for r in raw['train']])
    return jain_wallace.Prepared({s: split for s in wanted}, split.docs, min_df=1, classes=('a', 'b'))

  records = [{'id': f'd{i}', 'text': f'w{i} w{i + 1} w{i + 2}', 'label': i % 2} for i in range(6)]
  spec = DatasetSpec(name='toy', paper=None, order=99, title='toy', prepare=prepare,
                     tokenizer=str.split, classes=('a', 'b'), raw='sst',
                     corpus_text=lambda r: r['text'])
  with DATASETS.registered(spec):
    cfg = config_lib.default_config('toy', 'bilstm', 'smoke')
    assert cfg.model.classes == 2 and 'toy' in config_lib.choices()['data.dataset']
    config_lib.validate(cfg)
    assert 'toy' in corpus_sources()
    assert [t for _, _, t in corpus.raw_texts('toy', {'train': records})][0] == 'w0 w1 w2'
    original = builders.load
    builders.load = lambda name, *_: ({'train': records}, {'standard': True, 'files': {}, 'notes': []})
    try:
      data = load_dataset(cfg.data, ('train', 'test'))
    finally:
      builders.load = original
    assert data.num_classes == 2 and len(data.splits['test']) == 6 and data.classes == ('a', 'b')
  assert 'toy' not in DATASETS


def test_babi_passages_questions_answers_and_evidence_as_jw_prepare_them():
  story = ['Mary moved to the bathroom.', 'John went to the hallway.', 'Mary travelled to the office.']
  records = [{'id': 'q1', 'story': story, 'line_numbers': [1, 2, 4], 'question': 'Where is Mary?',
              'answer': 'office', 'supporting': [4, 1]}]
  split = babi._tokenized(records)  # pylint: disable=protected-access
  assert split.docs[0] == ('Mary moved to the bathroom . John went to the hallway . '
                           'Mary travelled to the office').split(' ')
  assert split.queries[0] == ['Where', 'is', 'Mary']
  assert babi.ANSWERS[split.labels[0]] == 'office'
  # Lines 1 and 4: the first and third statements' words, not the ' . ' between.
  assert [split.docs[0][i] for i in split.evidence[0]] == 'Mary moved to the bathroom Mary travelled to the office'.split()
  with pytest.raises(DataError, match="answer 'Paris' is not a word of tasks 1-3"):
    babi._tokenized([dict(records[0], answer='Paris')])  # pylint: disable=protected-access


def test_a_babi_file_that_is_not_in_the_format_names_the_line(tmp_path):
  path = tmp_path / 'qa1_single-supporting-fact_train.txt'
  path.write_text('1 Mary moved to the bathroom.\n2 Where is Mary?\tbathroom\t3\n')
  with pytest.raises(DataError, match=r'line 2: supporting line\(s\) \[3\] are not statements'):
    babi.parse(str(path))
  path.write_text('Mary moved to the bathroom.\n')
  with pytest.raises(DataError, match='line 1 does not start with a line number'):
    babi.parse(str(path))


def test_snli_words_and_labels_as_jw_prepare_them():
  assert snli.words('Two  dogs run 4 miles in 1999.') == ['two', 'dogs', 'run', 'qqq', 'miles', 'in', 'qqq', '.']
  raw = {s: [{'id': '1', 'premise': 'A man sleeps.', 'hypothesis': 'A man is awake.', 'gold_label': 'contradiction'},
             {'id': '2', 'premise': 'A dog.', 'hypothesis': 'An animal.', 'gold_label': '-'}]
         for s in ('dev', 'test')}
  prepared = snli.prepare(raw, ('dev', 'test'))
  assert len(prepared.splits['test']) == 1 and prepared.splits['test'].labels.tolist() == [0]
  assert prepared.splits['test'].queries[0] == ['a', 'man', 'is', 'awake', '.']
  with pytest.raises(DataError, match=r'SNLI: the train split is not here .*snli_1\.0\.zip'):
    snli.prepare(raw, ('train', 'dev', 'test'))


@needs_data
def test_babi_from_the_shared_files(tmp_path):
  cfg = config_lib.default_config('babi1', 'bilstm').data
  cfg.tfds_data_dir = str(tmp_path / 'tfds')
  data = load_dataset(cfg)
  assert {s: len(v) for s, v in data.splits.items()} == {'train': 8500, 'dev': 1500, 'test': 1000}
  assert len(data.vocab) == 24 and data.num_classes == 36  # J&W's printed qa1 vocabulary: 24
  assert data.source['standard']
  test = data.splits['test']
  assert all(len(q) >= 3 for q in test.queries) and all(len(e) for e in test.evidence)
  # Every question fits the query positions its model reads; a spec that
  # declares fewer is refused at load, naming the split and the length.
  assert max(len(q) for s in data.splits.values() for q in s.queries) <= babi.MAX_QUESTION_TOKENS
  narrow = dataclasses.replace(DATASETS['babi1'], name='babi1_narrow', raw='babi1', source=None, builder=None,
                               max_query_tokens=4)
  with DATASETS.registered(narrow):
    cfg.dataset = 'babi1_narrow'
    with pytest.raises(DataError, match=r'babi1_narrow/train: a query of 5 tokens .*longer than the 4'):
      load_dataset(cfg)
  with pytest.warns(builders.NonstandardDataWarning, match='the 1k release .*J&W trained on the 10k'):
    raw, record = builders.load('babi3', None, str(tmp_path / 'tfds'))
  assert len(raw['train']) == 1000 and not record['standard']


@needs_data
def test_snli_dev_and_test_load_and_train_is_one_line(tmp_path):
  cfg = config_lib.default_config('snli', 'bilstm').data
  cfg.tfds_data_dir = str(tmp_path / 'tfds')
  with pytest.raises(DataError, match='SNLI: the train split is not here'):
    load_dataset(cfg)
  raw, record = builders.load('snli', None, cfg.tfds_data_dir)
  assert {s: len(v) for s, v in raw.items()} == {'dev': 10000, 'test': 10000}
  prepared = DATASETS['snli'].prepare(raw, ('dev', 'test'))
  assert (len(prepared.splits['dev']), len(prepared.splits['test'])) == (9842, 9824)
  assert record['standard'] and any('snli_1.0_train.jsonl' in n for n in record['notes'])
