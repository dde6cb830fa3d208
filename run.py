"""Train (or restore) a model and evaluate it.

    python run.py --config=configs/imdb_bilstm.py [--config.KEY=VALUE ...] [--workdir=DIR]

A config variant follows a colon (`configs/sst_bilstm.py:smoke`). Data come
from $ATTN_JAX_DATA or --config.data.manual_dir (see README.md).
"""

import importlib.util
import os
import sys

from absl import app, flags, logging
from ml_collections import config_flags

from attn_jax import config as config_lib, pipeline
from attn_jax.errors import AttnJaxError

_CONFIG = config_flags.DEFINE_config_file(
    'config', None, 'Config file, e.g. configs/imdb_bilstm.py or configs/sst_bilstm.py:smoke.',
    lock_config=True)
_WORKDIR = flags.DEFINE_string(
    'workdir', None, 'Where checkpoints and results go (default: workdirs/<name>_<attention>_<projection>).')
flags.mark_flag_as_required('config')


def _load_config_file(spec: str):
  path, _, variant = spec.partition(':')
  module_spec = importlib.util.spec_from_file_location('_attn_jax_config', path)
  module = importlib.util.module_from_spec(module_spec)
  module_spec.loader.exec_module(module)
  return module.get_config(variant) if variant else module.get_config()


def _config_spec(argv):
  """The value of --config (`--config=F` or `--config F`), or None."""
  for i, arg in enumerate(argv):
    if arg.startswith('--config='):
      return arg.split('=', 1)[1]
    if arg == '--config' and i + 1 < len(argv):
      return argv[i + 1]
  return None


def _fail(message):
  print(f'error: {message}', file=sys.stderr)
  sys.exit(2)


def _parse_flags(argv):
  """absl's parser, with config-file problems reported in one line."""
  spec = _config_spec(argv)
  if spec and not os.path.isfile(spec.partition(':')[0]):
    _fail(f'config file {spec.partition(":")[0]!r} not found; the configs are in configs/ '
          '(e.g. --config=configs/sst_bilstm.py)')
  try:
    return app.parse_flags_with_usage(argv)
  except AttnJaxError as e:  # raised by get_config, e.g. an unknown variant
    _fail(e)
  except (KeyError, AttributeError):
    overrides = [a[len('--config.'):].split('=', 1)[0] for a in argv if a.startswith('--config.')]
    message = spec and config_lib.unknown_override(_load_config_file(spec), overrides)
    if not message:
      raise
    _fail(message)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {argv[1:]}')
  logging.set_verbosity(logging.WARNING)
  cfg = _CONFIG.value
  workdir = _WORKDIR.value or pipeline.default_workdir(cfg)
  print(f'workdir: {workdir}')
  try:
    pipeline.run(cfg, workdir)
  except AttnJaxError as e:
    _fail(e)


if __name__ == '__main__':
  app.run(main, flags_parser=_parse_flags)
