"""The `run.py` command that reproduces a run, rebuilt from what its folder records.

`run.py` does not store the command line it was called with. Each run folder
holds `config.json`, the resolved config as it was first written, and every
file in `configs/` is `default_config(dataset, encoder, variant)`, named by the
config's `name` (`sst_bilstm`, `sst_bilstm_smoke`; a model of a program adds
`/seed3`). So the command is that file plus `--config.KEY=VALUE` for each key
whose recorded value differs from the file's default: the same config, hence
(`workdir.check_config`) the same model. The stages and experiments are
those whose results the folder holds, each experiment with the settings its
result key records. What cannot be known from the folder — the workdir of an
`--output_dir`, stage settings changed on a later rerun — is said in the
notes beside the command, never guessed silently.
"""

import dataclasses
import importlib.metadata
import os
import shlex
import subprocess
from typing import Optional

import ml_collections

from attn_jax import config as config_lib, experiments as experiments_lib
from attn_jax.core import atomic_io
from attn_jax.core.errors import AttnJaxError, ConfigError
from attn_jax.core.registry import ENCODERS
from attn_jax.tables.common import load_experiment_summaries, load_stage_results
from attn_jax.stages.stage_runner import with_requirements_of

PACKAGE = 'attn-jax'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout's root
CONFIGS = os.path.join(ROOT, 'configs')
DERIVED = ('name',)  # set by the config file itself (and by the model axis for a program's models)
GIT_SECONDS = 30  # a git that hangs (a network mount) leaves the commit out, not the report


@dataclasses.dataclass(frozen=True)
class Command:
  """How to reproduce one run folder."""
  command: str       # a shell command line, run from the repository root
  notes: list[str]   # what the command leaves open, or how it was rebuilt
  config: dict       # config.json as recorded


def _name_parts(saved: dict) -> Optional[tuple[str, str]]:
  """(encoder argument, variant) of the config file named by `name`; None
  when the name was overridden into something no config file gives."""
  name = str(saved.get('name', '')).split('/')[0]  # a program's model: 'sst_bilstm/seed3'
  prefix = f'{saved["data"]["dataset"]}_'
  if not name.startswith(prefix):
    return None
  rest = name[len(prefix):]
  for variant in sorted(config_lib.VARIANTS, key=len, reverse=True):  # '' last
    suffix = f'_{variant}' if variant else ''
    encoder = rest[:len(rest) - len(suffix)] if suffix else rest
    if rest.endswith(suffix) and encoder in ENCODERS:
      return encoder, variant
  return None


def config_file(dataset: str, encoder: str) -> str:
  """The file in configs/ that calls `default_config(dataset, encoder, ...)`,
  relative to the repository root (a dataset with one file names it alone)."""
  for stem in (f'{dataset}_{encoder}', dataset):
    if os.path.isfile(os.path.join(CONFIGS, f'{stem}.py')):
      return f'configs/{stem}.py'
  return f'configs/{dataset}_{encoder}.py'


def flag_value(value) -> str:
  """A config value as `--config.KEY=` reads it back (tuples as literals)."""
  if isinstance(value, (list, tuple)):
    return shlex.quote(repr(tuple(value)))
  return shlex.quote(str(value))


def _plain(value):
  return list(value) if isinstance(value, tuple) else value


def overrides(saved: dict, base) -> dict:
  """{dotted key: recorded value} for every key whose value is not the
  default of `base`; keys no longer in the schema are left out (restoring the
  run ignores them too)."""
  flat_saved = dict(config_lib.flat_items(ml_collections.ConfigDict(saved)))
  return {key: flat_saved[key] for key, default in config_lib.flat_items(base)
          if key not in DERIVED and key in flat_saved and _plain(flat_saved[key]) != _plain(default)}


def _set(flags: dict, defaults: dict, key: str, value) -> None:
  """Asks for `value` of `key`: a flag unless it is the default."""
  if _plain(value) == _plain(defaults.get(key)):
    flags.pop(key, None)
  else:
    flags[key] = value


def _base(saved: dict) -> tuple:
  """(config file, variant, default config) the run's config starts from."""
  dataset = saved['data']['dataset']
  parts = _name_parts(saved)
  if parts is not None:
    encoder, variant = parts
    return config_file(dataset, encoder), variant, config_lib.default_config(dataset, encoder, variant)
  # A renamed config: the variant that leaves the fewest keys to override.
  encoder = saved['model']['encoder']
  candidates = [(v, config_lib.default_config(dataset, encoder, v)) for v in config_lib.VARIANTS]
  variant, base = min(candidates, key=lambda c: len(overrides(saved, c[1])))
  return config_file(dataset, encoder), variant, base


def _names(value) -> list[str]:
  return [n.strip() for n in str(value or '').split(',') if n.strip()]


def _would_run(saved: dict) -> dict[str, set]:
  """{'analyses': stages, 'experiments': experiments} that the recorded config
  runs: those it names and those they read."""
  cfg = ml_collections.ConfigDict(saved)
  try:
    names = set(experiments_lib.names(cfg))
    stages = set(with_requirements_of(config_lib.analyses(cfg))) | set(
        experiments_lib.stage_requirements(cfg))
  except (ConfigError, KeyError, AttributeError):
    return {'analyses': set(_names(saved.get('analyses'))), 'experiments': set(_names(saved.get('experiments')))}
  return {'analyses': stages, 'experiments': names}


def _shown_results(run: str, saved: dict, defaults: dict, flags: dict) -> list[str]:
  """Sets `flags` to what gives the results the folder holds, where the
  recorded config (that of the first call) would give other ones: the stages
  and experiments, each experiment's settings (its key records its config
  section) and the document count. Returns a note for each change."""
  found = load_stage_results(run)
  summaries = load_experiment_summaries(run)
  would = _would_run(saved)
  notes = []
  for key, shown in (('analyses', list(found)), ('experiments', list(summaries))):
    # What it names, and what those read, or less (a saved copy keeps some): the record explains it.
    if set(_names(saved.get(key))) <= set(shown) <= would[key]:
      continue
    notes.append(f'config.json records {key}={",".join(_names(saved.get(key)))!r} (the first call); the folder '
                 f'holds results of {",".join(shown) or "none"}, which the command asks for')
    _set(flags, defaults, key, ','.join(shown))
  for name, summary in summaries.items():
    settings = summary.get('key', {}).get('settings')
    for k, value in (settings.items() if isinstance(settings, dict) else ()):
      if f'experiment.{name}.{k}' in defaults:
        _set(flags, defaults, f'experiment.{name}.{k}', value)
  documents = {f.documents for f in found.values()}
  split = saved.get('analysis', {}).get('split', 'test')
  size = _split_size(run, split)
  if len(documents) == 1 and size:
    shown = documents.pop()
    _set(flags, defaults, 'analysis.max_docs', shown if shown < size else None)
  return notes


def _split_size(run: str, split: str) -> Optional[int]:
  try:
    return int(atomic_io.read_json(os.path.join(run, 'data.json'))['splits'][split]['size'])
  except (OSError, ValueError, KeyError, TypeError):
    return None


def reproduce(run: str) -> Command:
  """The command that reproduces the run folder `run` (a workdir, or the
  `--output_dir` of one).

  Raises:
    AttnJaxError: the folder has no readable config.json.
  """
  path = os.path.join(run, 'config.json')
  try:
    saved = atomic_io.read_json(path)
    base_file, variant, base = _base(saved)
  except (OSError, ValueError, KeyError, TypeError) as e:
    raise AttnJaxError(f'{path} is missing or not an attn-jax config ({type(e).__name__}: {e}); '
                       'pass a run folder written by run.py') from e
  notes = []
  parent = os.path.dirname(os.path.normpath(run))
  target, trained = run, saved
  if '/' in str(saved.get('name', '')):
    if os.path.isfile(os.path.join(parent, 'config.json')):
      # A model of a program: its program's command trains it (and its siblings).
      notes.append(f'{run} is one model of the program in {parent}: the command trains the whole program')
      target, trained = parent, atomic_io.read_json(os.path.join(parent, 'config.json'))
      base_file, variant, base = _base(trained)
    else:
      notes.append('trained as one model of a program; alone, with the recorded train.batch_seed, it trains '
                   'to the same model up to float32 rounding (docs/usage.md, "Batches are shared")')
  flags = overrides(trained, base)
  notes += _shown_results(run, saved, dict(config_lib.flat_items(base)), flags)
  spec = base_file + (f':{variant}' if variant else '')
  where = [f'--workdir={shlex.quote(target)}']
  if target == run and not os.path.isdir(os.path.join(run, 'checkpoints')):
    where = ['--workdir=WORKDIR', f'--output_dir={shlex.quote(run)}']
    notes.append(f'{run} holds no checkpoints: it is the --output_dir of a workdir it does not record; '
                 'put that workdir for WORKDIR (or a new folder, to train again)')
  notes.append("the stages' own settings (analysis.*) are those config.json recorded at the first call; each "
               "table row's key says which results it shows")
  flags = [f'--config.{k}={flag_value(v)}' for k, v in sorted(flags.items())]
  return Command(' '.join(['python run.py', f'--config={spec}', *where, *flags]), notes, saved)


def version() -> str:
  """attn-jax's version and, in a git checkout, its commit (`+changes` when
  the working tree differs from it): the code that made the report."""
  try:
    number = importlib.metadata.version(PACKAGE)
  except importlib.metadata.PackageNotFoundError:
    number = 'not installed'
  top = _git('rev-parse', '--show-toplevel')
  commit = _git('rev-parse', '--short=12', 'HEAD')
  # Only a checkout of attn-jax itself: an installed copy may sit inside some other repository.
  if top is None or commit is None or os.path.realpath(top) != os.path.realpath(ROOT):
    return f'{PACKAGE} {number}'
  dirty = _git('status', '--porcelain', '--untracked-files=no')
  return f'{PACKAGE} {number}, commit {commit}' + (' +changes' if dirty else '')


def _git(*args: str) -> Optional[str]:
  try:
    done = subprocess.run(['git', '-C', ROOT, *args], capture_output=True, text=True, timeout=GIT_SECONDS,
                          check=True)
  except (OSError, subprocess.SubprocessError):
    return None
  return done.stdout.strip()
