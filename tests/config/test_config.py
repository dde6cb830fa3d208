"""Configs: every file loads and validates; bad keys and values are named."""

import glob
import importlib.util
import os
import re
import subprocess
import sys

import pytest
import helpers

from attn_jax import config as config_lib
from attn_jax.core.errors import ConfigError

ROOT = helpers.ROOT
CONFIG_FILES = sorted(glob.glob(os.path.join(ROOT, 'configs', '*.py')))


def load(path, variant=''):
  spec = importlib.util.spec_from_file_location('cfg', path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module.get_config(variant)


def test_the_config_matrix_exists():
  names = {os.path.basename(p)[:-3] for p in CONFIG_FILES}
  for dataset in ('sst', 'imdb', '20news'):
    for encoder in ('bilstm', 'cnn', 'average', 'transformer'):
      assert f'{dataset}_{encoder}' in names
  assert 'synthetic' in names


@pytest.mark.parametrize('path', CONFIG_FILES, ids=os.path.basename)
@pytest.mark.parametrize('variant', list(config_lib.VARIANTS))
def test_every_config_validates(path, variant):
  config_lib.validate(load(path, variant))


def test_jw_recipe_defaults():
  cfg = load(os.path.join(ROOT, 'configs', 'imdb_bilstm.py'))
  assert (cfg.train.epochs, cfg.train.batch_size, cfg.train.learning_rate, cfg.train.weight_decay) == (8, 32, 1e-3, 1e-5)
  assert (cfg.model.encoder, cfg.model.attention, cfg.model.projection) == ('bilstm', 'tanh', 'softmax')
  assert (cfg.model.embed_dim, cfg.model.hidden_dim, cfg.train.select_on) == (300, 128, 'dev')


def test_keys_added_later_leave_older_results_keyed_as_they_were():
  cfg = config_lib.default_config('sst', 'bilstm')
  items = config_lib.training_items(cfg)
  # At their defaults: as before they existed. Three defaults changed on
  # 2026-11-26 (PyTorch's AMSGrad rule; equal lengths in random order; the
  # LSTM's two biases): new models are keyed apart from the ones trained
  # before, which keep their keys.
  changed = {'train.optimizer', 'train.sort_ties', 'model.lstm_biases'}
  assert set(config_lib.ADDED_KEYS) & set(items) == changed
  assert (items['train.optimizer'], items['train.sort_ties'], items['model.lstm_biases']) == (
      'torch_amsgrad', 'random', 2)
  cfg.train.optimizer, cfg.train.sort_ties, cfg.model.lstm_biases = 'amsgrad', 'stable', 1
  assert not changed & set(config_lib.training_items(cfg))
  cfg.train.attention_lr_scale, cfg.train.update_only = 10.0, 'attention'
  items = config_lib.training_items(cfg)
  assert items['train.attention_lr_scale'] == 10.0 and items['train.update_only'] == 'attention'


@pytest.mark.parametrize('encoder', ['cnn', 'average'])
def test_an_lstm_key_leaves_models_without_an_lstm_keyed_as_they_were(encoder):
  # The LSTM's second bias changed the BiLSTM's default; a CNN or Average
  # model trained before it is today's model, keyed the same.
  cfg = config_lib.default_config('sst', encoder)
  assert 'model.lstm_biases' not in config_lib.training_items(cfg)
  before = config_lib.training_items(cfg)
  cfg.model.lstm_biases = 1
  assert config_lib.training_items(cfg) == before
  assert config_lib.training_items(config_lib.default_config('sst', 'bilstm'))['model.lstm_biases'] == 2


def test_a_qa_models_query_width_is_the_datasets_and_changes_no_trained_model():
  cfg = config_lib.default_config('babi3', 'bilstm')
  assert cfg.model.query_width == 16 and config_lib.default_config('sst', 'bilstm').model.query_width is None
  before = config_lib.training_items(cfg)
  cfg.model.query_width = 32  # wider: the same states, more work
  config_lib.validate(cfg)
  assert config_lib.training_items(cfg) == before
  cfg.model.query_width = 8
  with pytest.raises(ConfigError, match=r"model.query_width=8 is narrower than babi3's queries, up to 16 tokens"):
    config_lib.validate(cfg)
  snli = config_lib.default_config('snli', 'bilstm')
  assert snli.model.query_width is None
  snli.model.query_width = 16
  with pytest.raises(ConfigError, match="narrower than snli's queries, of any length: it declares no longest"):
    config_lib.validate(snli)
  sst = config_lib.default_config('sst', 'bilstm')
  sst.model.query_width = 16
  with pytest.raises(ConfigError, match='but sst has no queries'):
    config_lib.validate(sst)


@pytest.mark.parametrize('key,value,message', [
    ('model.encoder', 'gru', 'choose from bilstm, cnn, average, transformer'),
    ('model.projection', 'entmax', 'choose from softmax, sparsemax, sparsegen, uniform'),
    ('model.sparsegen_lambda', 1.0, 'must be < 1'),
    ('train.epochs', 1, 'epochs must be >= 2'),
    ('train.attention_lr_scale', 0.0, 'attention_lr_scale must be > 0'),
])
def test_invalid_values_are_named(key, value, message):
  cfg = config_lib.default_config('sst', 'bilstm')
  section, name = key.split('.')
  cfg[section][name] = value
  with pytest.raises(ConfigError, match=message):
    config_lib.validate(cfg)


def test_unknown_key_is_named_with_the_valid_ones():
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.train.lr = 0.1
  with pytest.raises(ConfigError, match=r"unknown config key 'train.lr'.*train.learning_rate"):
    config_lib.validate(cfg)


def run_cli(*args):
  return subprocess.run([sys.executable, os.path.join(ROOT, 'run.py'), *args],
                        capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_cli_names_an_unknown_override_without_a_traceback():
  result = run_cli('--config=configs/synthetic.py:smoke', '--config.train.epoch=3')
  assert result.returncode == 2
  assert "unknown config key 'train.epoch' (did you mean 'train.epochs'?)" in result.stderr
  assert 'Traceback' not in result.stderr


def test_cli_names_a_missing_config_file():
  result = run_cli('--config', 'configs/nope.py:smoke')
  assert result.returncode == 2 and "config file 'configs/nope.py' not found" in result.stderr
  assert 'Traceback' not in result.stderr


def test_cli_names_an_invalid_value_and_variant():
  result = run_cli('--config=configs/synthetic.py:smoke', '--config.model.attention=general',
                   '--workdir=/nonexistent/never-written')
  assert result.returncode == 2 and "model.attention='general' is not valid" in result.stderr
  result = run_cli('--config=configs/synthetic.py:tiny')
  assert result.returncode == 2 and "unknown config variant 'tiny'" in result.stderr


def test_from_file_builds_what_run_py_builds(tmp_path, monkeypatch):
  """The notebooks' way in: FILE[:VARIANT] plus dotted overrides, from any folder."""
  cfg = config_lib.from_file('configs/sst_bilstm.py:smoke', {'train.epochs': 3, 'analysis.max_docs': 16,
                                                             'model.embeddings_file': None})
  expected = load(os.path.join(ROOT, 'configs', 'sst_bilstm.py'), 'smoke')
  expected.train.epochs, expected.analysis.max_docs = 3, 16
  assert cfg.to_dict() == expected.to_dict()
  monkeypatch.chdir(tmp_path)  # not the checkout: the path is found from the checkout's root
  assert config_lib.from_file('configs/synthetic.py').name == 'synthetic_bilstm'


@pytest.mark.parametrize('spec, overrides, message', [
    ('configs/nope.py', {}, "config file 'configs/nope.py' not found"),
    ('configs/synthetic.py:tiny', {}, "unknown config variant 'tiny'"),
    ('configs/synthetic.py', {'train.epoch': 3}, "unknown config key 'train.epoch' (did you mean 'train.epochs'?)"),
    ('configs/synthetic.py', {'train.epochs': 'three'}, "train.epochs='three' is not valid"),
    ('configs/synthetic.py', {'model.attention': 'general'}, "model.attention='general' is not valid"),
    ('configs/synthetic.py', {'analysis.max_docs': 5, 'analysis.sample_docs': 5},
     'analysis.sample_docs (a seeded sample), not both'),
])
def test_from_file_names_what_is_wrong(spec, overrides, message):
  with pytest.raises(ConfigError, match=re.escape(message)):
    config_lib.from_file(spec, overrides)


# What config/keys.py listed centrally before the registries declared their
# own added and runtime keys: results keyed then must stay valid, so the
# derived lists must hold every entry, at the same value.
KEYED_BEFORE_THE_REGISTRIES = {
    'added': {'experiment.guides.every_adversary': False, 'model.lstm_biases': 1,
              'model.cnn_dropout': 0.0, 'model.transformer_norm': 'post', 'train.update_only': None,
              'analysis.sample_docs': None, 'model.init': 'torch'},
    'runtime': {'analysis.loo.docs_per_chunk', 'analysis.adversarial.batch_size', 'train.progress'},
    'encoder': {'model.lstm_biases': ('bilstm',), 'model.transformer_norm': ('transformer',)}}


def test_added_and_runtime_keys_derive_from_their_owners():
  from attn_jax.config import keys  # pylint: disable=g-import-not-at-top
  added, runtime, encoders = keys.added_keys(), keys.runtime_keys(), keys.encoder_keys()
  assert KEYED_BEFORE_THE_REGISTRIES['added'].items() <= added.items()
  assert KEYED_BEFORE_THE_REGISTRIES['runtime'] <= runtime
  assert KEYED_BEFORE_THE_REGISTRIES['encoder'].items() <= encoders.items()
  assert config_lib.ADDED_KEYS == added and config_lib.RUNTIME_KEYS == runtime
  cfg = config_lib.default_config('sst', 'bilstm')
  flat = dict(config_lib.flat_items(cfg))
  assert set(added) <= set(flat) and runtime <= set(flat) | {'analysis.loo.docs_per_chunk'}
  # A section's added key at its old value, or a runtime key, keys no result.
  items = config_lib.result_items(cfg)
  assert 'analysis.loo.docs_per_chunk' not in items and 'experiment.guides.every_adversary' not in items
  cfg.experiment.guides.every_adversary = True
  assert config_lib.result_items(cfg)['experiment.guides.every_adversary'] is True


def test_experiments_on_a_model_of_many_classes_are_refused_in_one_line():
  cfg = config_lib.default_config('babi1', 'bilstm')
  cfg.experiments = 'uniform'
  with pytest.raises(ConfigError, match="experiment 'uniform' is for binary models over words, not a model of 36"):
    config_lib.validate(cfg)
  cfg.experiments, cfg.analyses = '', 'gradient,loo,erasure'  # S&S's erasure takes any model
  config_lib.validate(cfg)


def test_usable_stages_follow_the_model_and_the_data():
  from attn_jax.config.serrano_smith_config import ss_config  # pylint: disable=g-import-not-at-top
  binary, qa = config_lib.default_config('sst', 'bilstm'), config_lib.default_config('babi1', 'bilstm')
  assert 'evidence' not in config_lib.usable_stages(binary)  # SST names no evidence
  assert {'evidence', 'kendall'} <= set(config_lib.usable_stages(qa)) and 'importance' not in config_lib.usable_stages(qa)
  assert config_lib.usable_stages(ss_config('imdb_ratings', 'han', 'conv')) == ('erasure',)  # a HAN: sentences
