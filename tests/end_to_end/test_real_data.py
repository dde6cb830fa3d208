"""The J&W protocol on the real files: split sizes, classes, vocabularies.

Runs when ATTN_JAX_DATA points at the data folder (CI: ../shared/data).
J&W's numbers (their code's preprocessing, `successar/AttentionExplanation`;
SST's also W&P Table 1) are exact for SST; for the others the
tokenisation differs slightly from J&W's spaCy / Keras pipelines.
"""

import json
import os

import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.data import builders, jain_wallace_protocol as jain_wallace
from attn_jax.data.dataset import load_dataset
from attn_jax.core.errors import DataError
from attn_jax.core.registry import STAGES
from conftest import REAL_DATA, requires_real_data
import helpers

pytestmark = requires_real_data


def data_config(dataset, tfds_dir):
  cfg = config_lib.default_config(dataset, 'bilstm').data
  cfg.tfds_data_dir = tfds_dir
  return cfg


def sizes(data):
  return {s: (len(v), int((v.labels == 0).sum()), int((v.labels == 1).sum())) for s, v in data.splits.items()}


def test_sst_is_exactly_jain_and_wallace(tfds_dir):
  data = load_dataset(data_config('sst', tfds_dir))
  assert sizes(data) == {'train': (6355, 3034, 3321), 'dev': (821, 397, 424), 'test': (1725, 863, 862)}
  assert len(data.vocab) == 13826


@pytest.mark.heavy
def test_imdb_follows_the_protocol(tfds_dir):
  data = load_dataset(data_config('imdb', tfds_dir))
  n_train, n_dev, n_test = (len(data.splits[s]) for s in ('train', 'dev', 'test'))
  assert abs(n_test - 4356) < 30  # J&W (Keras tokens): 4356 = 2184 / 2172
  assert 0.79 < n_train / (n_train + n_dev) < 0.81 and 20000 < n_train + n_dev < 22000
  assert abs(len(data.vocab) - 12487) < 200
  assert all(len(s) - 2 < 400 for split in data.splits.values() for s in split.sequences)
  assert abs(np.mean([len(s) - 2 for s in data.splits['test'].sequences]) - 179) < 5  # W&P Table 1


def test_20news_hockey_vs_baseball(tfds_dir):
  data = load_dataset(data_config('20news', tfds_dir))
  n_test, neg, pos = sizes(data)['test']
  assert abs(n_test - 357) < 15 and abs(neg - pos) <= 2  # J&W HEAD: 357 = 179 / 178
  assert abs(len(data.vocab) - 6515) < 300
  assert all(6 < len(s) - 2 < 500 for split in data.splits.values() for s in split.sequences)


def test_ag_news_test_split_and_missing_train(tfds_dir):
  raw = builders.load_raw('agnews', REAL_DATA, tfds_dir)
  test = jain_wallace.ag_news(raw, ('test',)).splits['test']
  assert (len(test), int((test.labels == 0).sum()), int((test.labels == 1).sum())) == (3798, 1900, 1898)
  with pytest.raises(DataError, match='train.csv'):
    load_dataset(data_config('agnews', tfds_dir))


@pytest.mark.heavy
@pytest.mark.usefixtures('optax_promotion')
@pytest.mark.parametrize('dataset', ['sst', 'imdb', '20news'])
def test_smoke_training_on_real_data(dataset, tfds_dir, tmp_path):
  cfg = config_lib.default_config(dataset, 'bilstm', 'smoke')
  cfg.data.tfds_data_dir = tfds_dir
  cfg.train.progress = False
  # Every analysis stage runs end to end on one real dataset (a config's
  # default is its own paper's); the others train only.
  # Every stage but those that need known evidence, which SST does not give (tests/analysis/test_evidence.py).
  cfg.analyses = ','.join(s for s in config_lib.ANALYSES if not STAGES[s].needs_evidence) if dataset == 'sst' else ''
  results = helpers.run(cfg, tmp_path)
  assert results['n'] == 64 and 0.0 <= results['accuracy'] <= 1.0
  assert (tmp_path / 'checkpoints' / 'best').is_dir()
  if dataset == 'sst':
    kendall = json.loads(open(os.path.join(helpers.stage_dir(tmp_path, 'kendall'), 'summary.json')).read())
    assert kendall['documents'] == 64 and os.path.exists(os.path.join(helpers.stage_dir(tmp_path, 'erasure'), 'results.npz'))
