"""What a workdir holds besides checkpoints, and whether it fits a config.

    <workdir>/config.json    the resolved config the model was trained with
    <workdir>/vocab.json     the vocabulary, ids in order
    <workdir>/data.json      fingerprint, sizes and source of the prepared splits
    <workdir>/checksums.json the sha256 of those three, as first written, and
                             of the config's training part (`config_training`)

They are verified against checksums.json whenever they are read: a damaged
or edited file is repaired when today's config and data render it with the
recorded sha256 — config.json already when today's config has the recorded
training part, whatever its analysis settings — and refused in one line
otherwise (a vocabulary that is not the model's would silently scramble
every result).
"""

import json
import os

import ml_collections

from attn_jax import config as config_lib
from attn_jax.core import atomic_io, digests
from attn_jax.data.dataset import Dataset
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.core.errors import CheckpointError, IntegrityError, StorageError

DESCRIPTION = ('config', 'vocab', 'data')
CHECKSUMS = 'checksums.json'
# checksums.json's digest of the config's training part (`config_lib.training_items`):
# what a repaired config.json must keep; its analysis settings may be today's.
TRAINING_DIGEST = 'config_training'


def training_digest(cfg: ml_collections.ConfigDict) -> str:
  """sha256 of the keys of `cfg` that change the trained model (canonical JSON)."""
  items = json.dumps(config_lib.training_items(cfg), sort_keys=True, default=str)
  return digests.of_bytes(items.encode('utf-8'))


def paths(workdir: str) -> dict[str, str]:
  return {name: os.path.join(workdir, f'{name}.json') for name in ('config', 'vocab', 'data', 'eval')}


def _checksums(workdir: str, strict: bool = True) -> dict | None:
  """The recorded sha256 of the description files ({} for a workdir of
  attn-jax <= 0.2); a damaged record raises, or is None when not `strict`."""
  path = os.path.join(workdir, CHECKSUMS)
  if not os.path.exists(path):
    return {}
  try:
    recorded = atomic_io.read_json(path)
    if not isinstance(recorded, dict):
      raise ValueError('not a JSON object')
    return recorded
  except (OSError, ValueError) as e:
    if not strict:
      return None
    raise IntegrityError(f'{path} is damaged ({type(e).__name__}); the workdir\'s config, vocabulary '
                         'and data record cannot be verified: rerun `python run.py` with the config '
                         'the model was trained with to rebuild it, or restore it from a copy') from e


def verify(workdir: str, name: str, strict: bool = True) -> None:
  """Raises IntegrityError if `<name>.json` differs from its recorded sha256
  (with `strict`, also if the record itself is damaged)."""
  expected = (_checksums(workdir, strict) or {}).get(name)
  path = paths(workdir)[name]
  if expected is None or not os.path.exists(path):
    return
  if atomic_io.sha256_file(path) != expected:
    raise IntegrityError(
        f'{path} is damaged or was edited (its sha256 differs from {os.path.join(workdir, CHECKSUMS)}); '
        'rerun with the config and data the model was trained with to repair it, restore the '
        'original file, or retrain in a new --workdir')


def _repair(workdir: str, name: str, rendered: bytes, log) -> None:
  """Puts back `<name>.json` when it is damaged and `rendered` (made from
  today's config or data) has exactly the recorded sha256. A damaged
  checksums.json is left to `rebuild_checksums`."""
  try:
    verify(workdir, name, strict=False)
    return
  except IntegrityError:
    if digests.of_bytes(rendered) != (_checksums(workdir, strict=False) or {}).get(name):
      raise
  atomic_io.write_bytes(paths(workdir)[name], rendered)
  log(f'{paths(workdir)[name]} was damaged; repaired from the config and data (same sha256 as recorded)')


def _repair_config(cfg: ml_collections.ConfigDict, workdir: str, log) -> None:
  """`_repair` of config.json, which also holds the analysis settings of the
  run that first wrote it: when today's config renders other bytes but has
  the recorded training part, config.json is rewritten from it (with today's
  analysis settings) and its sha256 recorded anew. A workdir written before
  the training part was recorded needs the exact config."""
  rendered = _rendered(cfg, None)['config']
  try:
    _repair(workdir, 'config', rendered, log)
    return
  except IntegrityError:
    recorded = _checksums(workdir, strict=False) or {}
    if recorded.get(TRAINING_DIGEST) != training_digest(cfg):
      raise
  atomic_io.write_json(os.path.join(workdir, CHECKSUMS), {**recorded, 'config': digests.of_bytes(rendered)})
  atomic_io.write_bytes(paths(workdir)['config'], rendered)
  log(f'{paths(workdir)["config"]} was damaged; repaired from this config (its training part is the one '
      'recorded; its analysis settings are this run\'s)')


def _config_vouched(cfg: ml_collections.ConfigDict, workdir: str, rendered: bytes) -> bool:
  """Whether config.json is exactly what `cfg` renders, or a readable config
  with the training part of `cfg` (its analysis settings may differ)."""
  path = paths(workdir)['config']
  if atomic_io.holds(path, rendered):
    return True
  try:
    return training_digest(load_config(workdir, strict=False)) == training_digest(cfg)
  except (CheckpointError, IntegrityError, OSError, ValueError):
    return False


def rebuild_checksums(cfg: ml_collections.ConfigDict, dataset: Dataset, workdir: str, log) -> None:
  """Writes a missing or damaged checksums.json when the three files hold
  exactly what `cfg` and `dataset` render (they vouch for themselves then).

  A workdir of attn-jax <= 0.2 (no record) whose files render otherwise is
  left as it is; a damaged record over files that differ is refused, since
  nothing can tell which of them changed. On a read-only workdir the record
  is not rewritten (the files were just verified by their content).
  """
  recorded = _checksums(workdir, strict=False)
  if recorded is not None and all(name in recorded for name in DESCRIPTION):
    return
  rendered, p = _rendered(cfg, dataset), paths(workdir)
  if not (_config_vouched(cfg, workdir, rendered['config'])
          and all(atomic_io.holds(p[name], rendered[name]) for name in ('vocab', 'data'))):
    if recorded is None:
      _checksums(workdir)  # raises the one-line error
    return
  record = {**{name: digests.of_file(p[name]) for name in DESCRIPTION}, TRAINING_DIGEST: training_digest(cfg)}
  try:
    atomic_io.write_json(os.path.join(workdir, CHECKSUMS), record)
  except StorageError:
    return
  log(f'{os.path.join(workdir, CHECKSUMS)} was ' + ('damaged' if recorded is None else 'missing')
      + '; rebuilt: config.json has this config\'s training part, vocab and data.json are exactly what '
      'this config and data give')


def _rendered(cfg: ml_collections.ConfigDict | None, dataset: Dataset | None) -> dict[str, bytes]:
  """The bytes attn-jax writes for each description file."""
  out = {}
  if cfg is not None:
    out['config'] = cfg.to_json_best_effort(indent=2, sort_keys=True).encode('utf-8')
  if dataset is not None:
    out['vocab'] = atomic_io.json_bytes(list(dataset.vocab.tokens))
    out['data'] = atomic_io.json_bytes(dataset.summary())
  return out


def check_config(cfg: ml_collections.ConfigDict, workdir: str, log=print) -> None:
  """Raises CheckpointError if the workdir was made with a different config.

  Only keys that change the trained model count (`config.RUNTIME_KEYS` and
  the analysis settings may differ). A damaged config.json is repaired when
  `cfg` renders it exactly.
  """
  if not os.path.exists(paths(workdir)['config']):
    return
  _repair_config(cfg, workdir, log)
  saved = config_lib.training_items(load_config(workdir, strict=False))
  wanted = config_lib.training_items(cfg)
  differing = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
  if differing:
    shown = '; '.join(f'{k}: workdir has {saved.get(k)!r}, config asks {wanted.get(k)!r}'
                      for k in differing[:6])
    raise CheckpointError(
        f'{workdir} holds a model trained with a different config ({shown}). '
        'Pass a new --workdir, or override the config back to what the workdir has.')


def read_workdir_json(workdir: str, name: str, strict: bool = True):
  """A JSON file of the workdir, verified against checksums.json (`strict`:
  a damaged checksums.json raises too); CheckpointError if it is missing or
  damaged."""
  path = paths(workdir)[name]
  if name in DESCRIPTION:
    verify(workdir, name, strict)
  try:
    return atomic_io.read_json(path)
  except (OSError, ValueError) as e:
    raise CheckpointError(
        f'{path} is missing or damaged ({type(e).__name__}: {e}); the workdir cannot be '
        'trusted: train again in a new --workdir') from e


def check_data(dataset: Dataset, workdir: str, log=print) -> None:
  """Raises CheckpointError if the workdir's model saw other prepared data
  (repairs a damaged vocab.json or data.json that `dataset` renders exactly)."""
  rendered = _rendered(None, dataset)
  for name in ('vocab', 'data'):
    if os.path.exists(paths(workdir)[name]):
      _repair(workdir, name, rendered[name], log)
  if not os.path.exists(paths(workdir)['data']):
    return
  saved = read_workdir_json(workdir, 'data', strict=False)  # checksums: rebuild_checksums
  if saved.get('fingerprint') != dataset.fingerprint:
    raise CheckpointError(
        f'the prepared {dataset.name} data (fingerprint {dataset.fingerprint}) differs from '
        f'the data the model in {workdir} was trained on ({saved.get("fingerprint")}): the '
        'source files or the preprocessing changed. Use a new --workdir to retrain, or '
        'restore the original files.')


def write_description(cfg: ml_collections.ConfigDict, dataset: Dataset, workdir: str) -> None:
  """Writes config.json, vocab.json, data.json and their checksums.json if
  they are not there yet (a workdir of attn-jax <= 0.2 gets no checksums:
  its files cannot be vouched for after the fact)."""
  p, rendered = paths(workdir), _rendered(cfg, dataset)
  missing = [name for name in DESCRIPTION if not os.path.exists(p[name])]
  if not missing:
    return
  legacy = len(missing) < len(DESCRIPTION) and not os.path.exists(os.path.join(workdir, CHECKSUMS))
  if not legacy:  # first: a kill between the files must not leave them unrecorded for good
    recorded = {**(_checksums(workdir, strict=False) or {}),
                **{n: digests.of_bytes(rendered[n]) for n in missing}}
    if 'config' in missing:
      recorded[TRAINING_DIGEST] = training_digest(cfg)
    atomic_io.write_json(os.path.join(workdir, CHECKSUMS), recorded)
  for name in missing:
    atomic_io.write_bytes(p[name], rendered[name])


def _overlay(cfg: ml_collections.ConfigDict, saved: dict) -> None:
  for key, value in saved.items():
    if key not in cfg:
      continue  # dropped from the schema since: nothing reads it any more
    if isinstance(value, dict) and isinstance(cfg.get(key), ml_collections.ConfigDict):
      _overlay(cfg[key], value)
    else:
      cfg[key] = tuple(value) if isinstance(value, list) else value


def _current_values(cfg: ml_collections.ConfigDict) -> None:
  """Today's names of values a workdir saved under an old one (`config.keys.RENAMED_VALUES`)."""
  for key in config_lib.RENAMED_VALUES:
    value = config_lib.get_key(cfg, key, _MISSING)
    if value is not _MISSING:
      config_lib.set_key(cfg, key, config_lib.current_value(key, value))


_MISSING = object()


def _was_saved(saved: dict, key: str) -> bool:
  node = saved
  for part in key.split('.'):
    if not isinstance(node, dict) or part not in node:
      return False
    node = node[part]
  return True


def load_config(workdir: str, strict: bool = True) -> ml_collections.ConfigDict:
  """The workdir's config: today's defaults overlaid with the saved values, so
  keys added to the schema since the model was trained take their default
  — or, for a key added with a value that computes what ran before it
  existed (`config.ADDED_KEYS`: a default changed since, such as the
  optimiser), that value — and keys removed since are ignored. A value
  renamed since (`config.RENAMED_VALUES`) reads as today's name."""
  if not os.path.exists(paths(workdir)['config']):
    raise CheckpointError(f'{workdir} holds no trained model (no config.json); train one with '
                          f'`python run.py --config=... --workdir={workdir}`')
  saved = read_workdir_json(workdir, 'config', strict)
  try:
    cfg = config_lib.default_config(saved['data']['dataset'], saved['model']['encoder'])
    _overlay(cfg, saved)
    for key, before in config_lib.ADDED_KEYS.items():
      if not _was_saved(saved, key) and config_lib.get_key(cfg, key, _MISSING) is not _MISSING:
        config_lib.set_key(cfg, key, before)
    _current_values(cfg)
  except (KeyError, TypeError, AttributeError) as e:
    raise CheckpointError(f'{paths(workdir)["config"]} is not an attn-jax config ({e}); '
                          'train again in a new --workdir') from e
  return cfg


def load_vocab(workdir: str) -> Vocabulary:
  tokens = read_workdir_json(workdir, 'vocab')
  return Vocabulary.from_tokens(tokens, paths(workdir)['vocab'])
