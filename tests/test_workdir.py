"""Reading a workdir's saved config across schema changes."""

import json

from attn_jax import config as config_lib
from attn_jax.runs import workdir


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
  assert cfg.model.embed_init_std == config_lib.EMBED_INIT_STD['imdb']
  assert 'obsolete' not in cfg and 'obsolete_too' not in cfg.model
