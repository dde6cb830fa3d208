"""The config as a person meets it: help text, unknown keys, config files.

`run.py --help` shows `describe()`; an unknown `--config.KEY` is named with
the closest known key (`unknown_key_message`); `load_file` and `from_file`
build the config `run.py --config=FILE[:VARIANT] --config.KEY=VALUE` builds.
The stage and experiment lists in the help come from their registries.
"""

import importlib.util
import os
import textwrap
from typing import Any, Mapping

import ml_collections

from attn_jax import papers
from attn_jax.config import keys, schema
from attn_jax.core.errors import AttnJaxError, ConfigError
from attn_jax.core.registry import EXPERIMENTS, STAGES

# The overrides a researcher reaches for first, for `run.py --help`; keys with
# choices also list them. Every other key is listed there by name only.
# Stages and experiments add their own (`Section.help`), and `key_help()`
# adds the lists of stages and experiments.
OWN_KEY_HELP = {
    'seed': 'initial parameters (and batch order unless train.batch_seed)',
    'sweep': "several models as one program, e.g. 'seed=0,1,2,3,4'",
    'compilation_cache': "the folder of compiled programs ('' off; default: docs/usage.md)",
    'devices': 'shard documents and models over N devices (default: all)',
    'data.manual_dir': 'the data folder (default: $ATTN_JAX_DATA)',
    'data.max_docs_per_split': 'a seeded sample of N documents per split (default: all)',
    'model.encoder': '',
    'model.attention': '',
    'model.projection': '',
    'model.sparsegen_lambda': "sparsegen's lambda (< 1)",
    'model.embeddings_file': "None (from scratch), 'in_domain' or a word2vec/fastText .vec",
    'vectors.workers': "threads building in_domain vectors: 1 (bit-reproducible) or 'auto'",
    'train.epochs': 'the epoch with the best train.select_by score is kept',
    'train.attention_lr_scale': "the attention scorer's step size / train.learning_rate",
    'train.update_only': "train only these subtrees, e.g. 'attention' (default: all)",
}
ANALYSIS_KEY_HELP = {
    'analysis.split': '',
    'analysis.max_docs': 'the first N documents (default: all); sample_docs: a seeded N',
    'analysis.refuse_damaged': 'stop at a damaged results file instead of recomputing it',
}


def by_paper(registry) -> str:
  """'a,b (J&W), c (Meister)': the registry's names grouped by paper."""
  groups = {}
  for entry in registry.values():
    groups.setdefault(entry.paper, []).append(entry.name)
  return ', '.join(f'{",".join(names)} ({papers.PAPERS[paper].label})' for paper, names in groups.items())


def key_help() -> dict[str, str]:
  """Key -> what it does, for the help's "Often used" list."""
  found = dict(OWN_KEY_HELP)
  found['analyses'] = f"stages after training ('' none): {by_paper(STAGES)}"
  found.update(ANALYSIS_KEY_HELP)
  for name, stage in STAGES.items():
    found.update({f'analysis.{name}.{k}': v for k, v in stage.section.help.items()})
  found['experiments'] = f"models trained on top: {by_paper(EXPERIMENTS)} ('' for none)"
  for name, experiment in EXPERIMENTS.items():
    found.update({f'experiment.{name}.{k}': v for k, v in experiment.section.help.items()})
  return found


def describe(cfg: ml_collections.ConfigDict, width: int = 106) -> str:
  """The variants and override keys of `cfg`, for `run.py --help`: every key
  by group (from the schema itself), then the usual ones with what they do."""
  lines = ['Variants (--config=FILE:VARIANT):']
  lines += [f'  {v or "(none)":8}{why}' for v, why in schema.VARIANTS.items()]
  lines.append('Overrides (--config.KEY=VALUE); the keys, by group:')
  groups = {}
  for k, _ in keys.flat_items(cfg):
    group, _, name = k.partition('.') if '.' in k else ('', '', k)
    groups.setdefault(group, []).append(name)
  column = max(len(g or '(top)') for g in groups) + 1
  for group, names in groups.items():
    lines += textwrap.wrap(' '.join(names), width, initial_indent=f'  {group or "(top)":{column}}',
                           subsequent_indent=' ' * (column + 2))
  lines.append('Often used:')
  allowed = schema.choices()
  for key, why in key_help().items():
    listed = ' | '.join(allowed[key]) if key in allowed else ''
    lines += textwrap.wrap('; '.join(p for p in (listed, why) if p), width,
                           initial_indent=f'  --config.{key:24} ', subsequent_indent=' ' * 36)
  return '\n'.join(lines)


def unknown_override(cfg: ml_collections.ConfigDict, overrides) -> str | None:
  """The message for the first of `overrides` (dotted keys) not in `cfg`, if any."""
  known = dict(keys.flat_items(cfg))
  for key in overrides:
    if key not in known and not any(k.startswith(key + '.') for k in known):
      return keys.unknown_key_message(key, known)
  return None


def load_file(spec: str) -> ml_collections.ConfigDict:
  """`get_config([VARIANT])` of the config file `FILE[:VARIANT]` (a path from
  the working directory, or from the checkout's root)."""
  path, _, variant = spec.partition(':')
  if not os.path.isfile(path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    checkout = os.path.join(root, path)
    if not os.path.isfile(checkout):
      raise ConfigError(f'config file {path!r} not found (from {os.getcwd()} or the checkout); '
                        'the configs are in configs/, e.g. configs/sst_bilstm.py')
    path = checkout
  module_spec = importlib.util.spec_from_file_location('_attn_jax_config', path)
  module = importlib.util.module_from_spec(module_spec)
  fix = 'fix the file (configs/ has working ones)'
  try:
    module_spec.loader.exec_module(module)
  except SyntaxError as e:
    raise ConfigError(f'config file {path}, line {e.lineno}: {e.msg}; {fix}') from None
  except Exception as e:  # pylint: disable=broad-except  (whatever the user's file raises: one line)
    raise ConfigError(f'config file {path!r} could not be imported ({type(e).__name__}: {e}); {fix}, or install '
                      'what it imports') from None
  get = getattr(module, 'get_config', None)
  if not callable(get):
    raise ConfigError(f'config file {path!r} defines no get_config(): a config is a .py file whose get_config() '
                      'returns the ml_collections.ConfigDict of the run (configs/ has working ones)')
  try:
    cfg = get(variant) if variant else get()
  except AttnJaxError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    called = f'get_config({variant!r})' if variant else 'get_config()'
    raise ConfigError(f'config file {path!r}: {called} raised {type(e).__name__}: {e}; {fix}') from None
  if not isinstance(cfg, ml_collections.ConfigDict):
    raise ConfigError(f'config file {path!r}: get_config() returned {"None" if cfg is None else type(cfg).__name__}, '
                      f'not the ml_collections.ConfigDict of the run; {fix}')
  return cfg


def from_file(spec: str, overrides: Mapping[str, Any] | None = None) -> ml_collections.ConfigDict:
  """The config `run.py --config=SPEC --config.KEY=VALUE ...` builds, for
  notebooks and scripts that drive `pipeline.run` without run.py's flags.

  Args:
    spec: `FILE[:VARIANT]`, e.g. 'configs/sst_bilstm.py:smoke' (see `load_file`).
    overrides: dotted key -> value, e.g. {'train.epochs': 2}; values are
      Python values (None for a placeholder), not strings to parse.

  Raises:
    ConfigError: the file is missing, a key is unknown (named with the
      closest known one) or a value is invalid for its key.
  """
  cfg = load_file(spec)
  overrides = dict(overrides or {})
  message = unknown_override(cfg, overrides)
  if message:
    raise ConfigError(message)
  for key, value in overrides.items():
    try:
      keys.set_key(cfg, key, value)
    except (TypeError, ValueError) as e:
      raise ConfigError(f'{key}={value!r} is not valid: {e}') from e
  schema.validate(cfg)
  return cfg
