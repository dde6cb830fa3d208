"""Reading a workdir's saved config across schema changes."""

import json

import pytest

from attn_jax import config as config_lib
from attn_jax.config.serrano_smith_config import ss_config
from attn_jax.core.errors import ConfigError
from attn_jax.core.registry import DATASETS
from attn_jax.workdirs import workdir


def test_saved_config_survives_added_and_removed_keys(tmp_path):
  saved = json.loads(config_lib.default_config('imdb', 'cnn').to_json())
  del saved['model']['embed_init_std']     # a key added to the schema later
  saved['obsolete'] = 'x'                  # a key removed from the schema since
  saved['model']['obsolete_too'] = 3
  saved['train']['learning_rate'] = 0.01
  saved['model']['cnn_kernel_sizes'] = [1, 3]
  (tmp_path / 'config.json').write_text(json.dumps(saved))
  cfg = workdir.load_config(str(tmp_path))
  config_lib.validate(cfg)
  assert cfg.train.learning_rate == 0.01 and tuple(cfg.model.cnn_kernel_sizes) == (1, 3)
  assert cfg.model.embed_init_std == DATASETS['imdb'].embed_init_std
  assert 'obsolete' not in cfg and 'obsolete_too' not in cfg.model


def test_a_key_added_with_a_changed_default_loads_at_the_value_that_trained_the_model(tmp_path):
  """A config saved before `train.optimizer`, `train.sort_ties` and
  `model.lstm_biases` existed describes a model trained as those keys' old
  values train (`config.ADDED_KEYS`), not as today's defaults would."""
  cfg = config_lib.default_config('sst', 'bilstm')
  saved = json.loads(cfg.to_json())
  del saved['train']['optimizer'], saved['train']['sort_ties'], saved['model']['lstm_biases']
  saved['train']['epochs'] = 3
  (tmp_path / 'config.json').write_text(json.dumps(saved))
  loaded = workdir.load_config(str(tmp_path), strict=False)
  assert (loaded.train.optimizer, loaded.train.sort_ties, loaded.model.lstm_biases) == ('amsgrad', 'stable', 1)
  assert loaded.train.epochs == 3
  assert (cfg.train.optimizer, cfg.train.sort_ties, cfg.model.lstm_biases) == ('torch_amsgrad', 'random', 2)
  # Saved keys keep their saved values, whatever ADDED_KEYS says.
  saved['model']['lstm_biases'] = 2
  (tmp_path / 'config.json').write_text(json.dumps(saved))
  assert workdir.load_config(str(tmp_path), strict=False).model.lstm_biases == 2


def test_a_value_renamed_since_loads_as_todays_name_and_keys_as_before(tmp_path):
  """S&S's scorer was saved as model.attention='han' before it was called
  'context' (`config.RENAMED_VALUES`): such a workdir loads, validates and
  is keyed (training digest, result items) exactly as a config of today."""
  cfg = ss_config('imdb_ratings', 'flan', 'rnn')
  assert cfg.model.attention == 'context'
  saved = json.loads(cfg.to_json())
  saved['model']['attention'] = 'han'
  (tmp_path / 'config.json').write_text(json.dumps(saved))
  loaded = workdir.load_config(str(tmp_path), strict=False)
  config_lib.validate(loaded)
  assert loaded.model.attention == 'context'
  assert workdir.training_digest(loaded) == workdir.training_digest(cfg)
  assert config_lib.result_items(cfg)['model.attention'] == 'han'  # the name it was first keyed with
  cfg.model.attention = 'han'  # the old name given today: one line with the new one
  with pytest.raises(ConfigError, match="'han' is now called 'context'"):
    config_lib.validate(cfg)
