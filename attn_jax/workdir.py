"""What a workdir holds besides checkpoints, and whether it fits a config.

    <workdir>/config.json    the resolved config the model was trained with
    <workdir>/vocab.json     the vocabulary, ids in order
    <workdir>/data.json      fingerprint and sizes of the prepared splits
"""

import os

import ml_collections

from attn_jax import atomic_io, config as config_lib
from attn_jax.data.dataset import Dataset
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.errors import CheckpointError


def paths(workdir: str) -> dict[str, str]:
  return {name: os.path.join(workdir, f'{name}.json') for name in ('config', 'vocab', 'data', 'eval')}


def check_config(cfg: ml_collections.ConfigDict, workdir: str) -> None:
  """Raises CheckpointError if the workdir was made with a different config.

  Only keys that change the trained model count (`config.RUNTIME_KEYS` and
  the analysis settings may differ).
  """
  if not os.path.exists(paths(workdir)['config']):
    return
  saved = config_lib.training_items(load_config(workdir))
  wanted = config_lib.training_items(cfg)
  differing = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
  if differing:
    shown = '; '.join(f'{k}: workdir has {saved.get(k)!r}, config asks {wanted.get(k)!r}'
                      for k in differing[:6])
    raise CheckpointError(
        f'{workdir} holds a model trained with a different config ({shown}). '
        'Pass a new --workdir, or override the config back to what the workdir has.')


def read_workdir_json(workdir: str, name: str):
  """A JSON file of the workdir; CheckpointError if it is missing or damaged."""
  path = paths(workdir)[name]
  try:
    return atomic_io.read_json(path)
  except (OSError, ValueError) as e:
    raise CheckpointError(
        f'{path} is missing or damaged ({type(e).__name__}: {e}); the workdir cannot be '
        'trusted: train again in a new --workdir') from e


def check_data(dataset: Dataset, workdir: str) -> None:
  """Raises CheckpointError if the workdir's model saw other prepared data."""
  if not os.path.exists(paths(workdir)['data']):
    return
  saved = read_workdir_json(workdir, 'data')
  if saved.get('fingerprint') != dataset.fingerprint:
    raise CheckpointError(
        f'the prepared {dataset.name} data (fingerprint {dataset.fingerprint}) differs from '
        f'the data the model in {workdir} was trained on ({saved.get("fingerprint")}): the '
        'source files or the preprocessing changed. Use a new --workdir to retrain, or '
        'restore the original files.')


def write_description(cfg: ml_collections.ConfigDict, dataset: Dataset, workdir: str) -> None:
  """Writes config.json, vocab.json and data.json if they are not there yet."""
  p = paths(workdir)
  if not os.path.exists(p['config']):
    atomic_io.atomic_write(p['config'], lambda f: f.write(cfg.to_json_best_effort(indent=2, sort_keys=True)))
  if not os.path.exists(p['vocab']):
    dataset.vocab.save(p['vocab'])
  if not os.path.exists(p['data']):
    atomic_io.write_json(p['data'], dataset.summary())


def _overlay(cfg: ml_collections.ConfigDict, saved: dict) -> None:
  for key, value in saved.items():
    if key not in cfg:
      continue  # dropped from the schema since: nothing reads it any more
    if isinstance(value, dict) and isinstance(cfg.get(key), ml_collections.ConfigDict):
      _overlay(cfg[key], value)
    else:
      cfg[key] = tuple(value) if isinstance(value, list) else value


def load_config(workdir: str) -> ml_collections.ConfigDict:
  """The workdir's config: today's defaults overlaid with the saved values, so
  keys added to the schema since the model was trained take their default
  and keys removed since are ignored."""
  if not os.path.exists(paths(workdir)['config']):
    raise CheckpointError(f'{workdir} holds no trained model (no config.json); train one with '
                          f'`python run.py --config=... --workdir={workdir}`')
  saved = read_workdir_json(workdir, 'config')
  try:
    cfg = config_lib.default_config(saved['data']['dataset'], saved['model']['encoder'])
    _overlay(cfg, saved)
  except (KeyError, TypeError, AttributeError) as e:
    raise CheckpointError(f'{paths(workdir)["config"]} is not an attn-jax config ({e}); '
                          'train again in a new --workdir') from e
  return cfg


def load_vocab(workdir: str) -> Vocabulary:
  tokens = read_workdir_json(workdir, 'vocab')
  return Vocabulary.from_tokens(tokens, paths(workdir)['vocab'])
