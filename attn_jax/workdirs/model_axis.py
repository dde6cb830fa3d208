"""A model axis: several models of one architecture trained as one program.

`config.sweep` declares it: `'seed=0,1,2,3,4'` gives five models that differ
in their seed; several space-separated keys give the product of their values
(`'seed=0,1 train.learning_rate=1e-3,3e-4'`: four models). Each model is an
ordinary run with its own config and workdir, `<workdir>/<name>/` (name from
its values, e.g. `seed3`), which `restore()` and every analysis stage read as
they read any run; the group's stacked training state lives in
`<workdir>/checkpoints/latest`. Only keys that leave the program's shapes and
structure alone may vary (`PER_MODEL_KEYS`). Models of one program share the
batch order (`train.batch_seed`, recorded in each model's config), so model
`seed3` is exactly `run.py --config.seed=3 --config.train.batch_seed=B`; with
`train.batch_order='own'` each model draws its order from its own seed, as
separate runs of J&W's code do, and `seed3` is `run.py --config.seed=3`.
"""

import itertools
import os

import ml_collections

from attn_jax import config as config_lib
from attn_jax.core.errors import ConfigError
from attn_jax.training.trainer import Member, batch_seed

# Keys that change a model's starting point, its optimiser's numbers or its
# sparsegen λ (a traced value: `trainer.projection_values`), not the shapes or
# structure of the program (vectors.* only shape the initial embeddings).
# train.batch_seed: each model's own batch at each step (`train.batch_order='own'`).
PER_MODEL_KEYS = frozenset({'seed', 'train.learning_rate', 'train.weight_decay', 'train.batch_seed',
                            'model.sparsegen_lambda',
                            'model.embed_init_std', 'model.embeddings_file',
                            'model.shuffle_embeddings', 'model.embeddings_norm',
                            'model.embeddings_unit_rows'})
PER_MODEL_PREFIXES = ('vectors.',)


def _per_model(key: str) -> bool:
  return key in PER_MODEL_KEYS or key.startswith(PER_MODEL_PREFIXES)


def _parse_value(key: str, text: str, current):
  if text == 'None':
    return None
  try:
    if isinstance(current, bool):
      if text not in ('True', 'False'):
        raise ValueError(text)
      return text == 'True'
    if isinstance(current, int):
      return int(text)
    if isinstance(current, float):
      return float(text)
  except ValueError as e:
    raise ConfigError(f'sweep: {key}={text!r} is not a {type(current).__name__}') from e
  return text


def sweep_values(cfg: ml_collections.ConfigDict) -> list[dict]:
  """The sweep as a list of {key: value} overrides, one per model ([] for none).

  Raises:
    ConfigError: malformed sweep, an unknown key, a key that may not vary
      within one program, or a repeated value.
  """
  text = cfg.sweep.strip()
  if not text:
    return []
  known = dict(config_lib.flat_items(cfg))
  axes = []
  for part in text.split():
    key, sep, values = part.partition('=')
    if not sep or not values:
      raise ConfigError(f'sweep: {part!r} is not KEY=V1,V2,...; e.g. --config.sweep="seed=0,1,2,3,4"')
    if key not in known:
      raise ConfigError('sweep: ' + config_lib.unknown_key_message(key, known))
    if not _per_model(key):
      raise ConfigError(
          f'sweep: {key} changes the program itself, so its values cannot share one vmapped '
          f'program; sweep one of {", ".join(sorted(PER_MODEL_KEYS))} or vectors.*, and run '
          f'one config per value of {key}')
    parsed = [_parse_value(key, v, known[key]) for v in values.split(',')]
    if len(set(map(repr, parsed))) != len(parsed):
      raise ConfigError(f'sweep: {key} repeats a value ({values})')
    axes.append([(key, v) for v in parsed])
  return [dict(combo) for combo in itertools.product(*axes)]


def model_name(overrides: dict) -> str:
  """`{'seed': 3, 'model.embed_init_std': 0.1}` -> 'seed3_embed_init_std0.1'."""
  return '_'.join(f'{k.rpartition(".")[2]}{v:g}' if isinstance(v, float) else
                  f'{k.rpartition(".")[2]}{v}' for k, v in overrides.items()).replace('/', '-')


def model_config(cfg: ml_collections.ConfigDict, overrides: dict) -> ml_collections.ConfigDict:
  """The config of one model of the sweep: the base with its values, no sweep,
  and its batch seed written out: the program's shared one, or with
  `train.batch_order='own'` the model's own seed (a model trained alone has
  one order either way, so the member is `run.py --config.seed=k`)."""
  member = ml_collections.ConfigDict(cfg.to_dict())
  member.sweep = ''
  member.train.batch_seed = batch_seed(cfg)
  for key, value in overrides.items():
    config_lib.set_key(member, key, value)
  if cfg.train.get('batch_order', 'shared') == 'own':
    if cfg.train.batch_seed is not None:
      raise ConfigError(f'train.batch_order=\'own\' draws each model\'s batch order from its own seed, but '
                        f'train.batch_seed={cfg.train.batch_seed} names one for all: unset one of them')
    member.train.batch_seed = member.seed
    member.train.batch_order = 'shared'
  member.name = f'{cfg.name}/{model_name(overrides)}'
  return member


def members(cfg: ml_collections.ConfigDict, workdir: str) -> list[Member]:
  """The models `cfg` trains: itself in `workdir` without a sweep, else one
  per combination of the sweep's values in `workdir/<name>`."""
  values = sweep_values(cfg)
  if not values:
    return [Member(cfg, workdir)]
  return [Member(model_config(cfg, v), os.path.join(workdir, model_name(v))) for v in values]


def check_shared(models: list[Member]) -> None:
  """Raises ConfigError if two models differ in a key that shapes the program."""
  first = config_lib.training_items(models[0].cfg)
  for m in models[1:]:
    items = config_lib.training_items(m.cfg)
    for key in sorted(set(first) | set(items)):
      if not _per_model(key) and first.get(key) != items.get(key):
        raise ConfigError(f'models of one program must agree on {key} '
                          f'({first.get(key)!r} vs {items.get(key)!r})')
