"""Dotted config keys: walking, setting, and which keys key a result.

A run's results are keyed by the values that change what it computes
(`result_items`); its trained model by those that change the model
(`training_items`). Where things are written or how they are shown are not
among them, so a finished workdir is reused under other values of those.
"""

import difflib

import ml_collections

from attn_jax.core.registry import ENCODERS, EXPERIMENTS, STAGES

# Keys of the sections this package owns (schema) that say where things are
# or how they are shown, not what is computed: a finished workdir may be
# reused with other values of these. (The eval batch size changes padded
# shapes, hence float rounding at most.) Stages and experiments declare their
# own (`Section.runtime`); `runtime_keys()` has them all.
OWN_RUNTIME_KEYS = frozenset({
    'name', 'data.manual_dir', 'data.tfds_data_dir', 'vectors.directory', 'train.progress',
    'train.checkpoint_every_steps', 'train.eval_batch_size', 'train.model_axis', 'train.stop_when_perfect',
    'analysis.batch_size', 'analysis.bucket_growth',
    'analysis.refuse_damaged', 'compilation_cache', 'devices', 'wait_for_lock',
    # the query positions a QA model's question encoder reads: any width that
    # holds the dataset's queries computes the same states (float rounding at
    # most: the Average encoder's mean sums in another order)
    'model.query_width'})
# Keys of those sections added after results were first keyed, with the value
# that computes what runs without the key computed: at that value a key is
# left out of `result_items`, so results and workdirs made before it existed
# stay valid. Stages and experiments (`Section.added`) and encoder families
# (`Encoder.added`) declare their own; `added_keys()` has them all.
OWN_ADDED_KEYS = {'train.update_only': None, 'train.attention_lr_scale': 1.0,
                  # S&S's models and recipe (attn_jax.config.serrano_smith_config)
                  'data.max_batch_tokens': None, 'model.hierarchical': False, 'model.classes': 2,
                  'model.input_dropout': 0.0, 'model.sentence_dropout': 0.0,
                  'model.output_dropout': 0.0, 'vectors.method': 'fasttext',
                  'train.optimizer': 'amsgrad', 'train.clip_norm': None, 'train.plateau_factor': None,
                  'train.sort_ties': 'stable', 'analysis.sample_docs': None, 'analysis.sample_seed': 0,
                  'train.batch_order': 'shared',
                  # S&S's recipe as their code has it (issue 35)
                  'model.embeddings_unit_rows': False, 'model.init': 'torch',
                  'vectors.lines': 'documents', 'vectors.oov_as_unk': False,
                  'data.max_batch_sentence_words': None,
                  # word vectors built with several threads (issue 38)
                  'vectors.workers': 1,
                  # J&W's QA/NLI model (issue 51)
                  'model.query': False,
                  # J&W's QA trainer decays the attention too (before 2026-11-28: never)
                  'train.decay_attention': False}

# Values renamed after results were first keyed: key -> {today's name: the
# name results were keyed with}. `result_items` keys today's name under the
# old one, so results and workdirs made before the rename stay valid, and
# `current_value` reads a saved old name as today's.
RENAMED_VALUES = {
    # S&S's scorer (Yang et al.'s context vector, used by FLAN as by HAN) was
    # 'han', the name of S&S's family of hierarchical models too (issue 54).
    'model.attention': {'context': 'han'},
}


def current_value(key: str, value):
  """Today's name of a value of `key` that a saved config or result may
  hold under its old name (`RENAMED_VALUES`); other values as they are."""
  for new, old in RENAMED_VALUES.get(key, {}).items():
    if value == old:
      return new
  return value


def _keyed_value(key: str, value):
  """The name `value` of `key` is keyed with: its first one."""
  return RENAMED_VALUES.get(key, {}).get(value, value)


# (config group, registry) of the sections stages and experiments own.
REGISTERED_SECTIONS = (('analysis', STAGES), ('experiment', EXPERIMENTS))


def added_keys() -> dict:
  """Every key added after results were first keyed -> its old value: this
  package's, and those the stages, experiments and encoder families declare."""
  found = dict(OWN_ADDED_KEYS)
  for group, registry in REGISTERED_SECTIONS:
    for name, entry in registry.items():
      found.update({f'{group}.{name}.{k}': v for k, v in entry.section.added.items()})
  for family in ENCODERS.values():
    found.update({f'model.{k}': v for k, v in family.added.items()})
  return found


def runtime_keys() -> frozenset:
  """Every key that changes no result: this package's and the sections'."""
  return OWN_RUNTIME_KEYS | {f'{group}.{name}.{k}' for group, registry in REGISTERED_SECTIONS
                             for name, entry in registry.items() for k in entry.section.runtime}


def encoder_keys() -> dict:
  """Keys that compute nothing for some models -> the encoders they change:
  each family's added keys. Elsewhere they are left out of `result_items`,
  so a CNN trained before `model.lstm_biases` existed is today's CNN."""
  return {f'model.{k}': (family.name,) for family in ENCODERS.values() for k in family.added}


# Sections that say what is analysed, or trained on top of the model, not what
# the model is: a trained workdir can be analysed again with other values
# (each stage and experiment keys its own results).
ANALYSIS_SECTIONS = ('analyses', 'analysis', 'experiments', 'experiment')


def flat_items(cfg: ml_collections.ConfigDict, prefix: str = ''):
  """(dotted key, value) pairs of a nested config."""
  for key, value in cfg.items():
    if isinstance(value, ml_collections.ConfigDict):
      yield from flat_items(value, f'{prefix}{key}.')
    else:
      yield f'{prefix}{key}', value


def get_key(cfg: ml_collections.ConfigDict, key: str, default=None):
  """The value of the dotted `key`, or `default` where a group or key is missing."""
  value = cfg
  for part in key.split('.'):
    if not isinstance(value, ml_collections.ConfigDict) or part not in value:
      return default
    value = value[part]
  return value


def set_key(cfg: ml_collections.ConfigDict, key: str, value) -> None:
  """Sets the dotted `key` (e.g. 'train.epochs') of a nested config."""
  *groups, name = key.split('.')
  node = cfg
  for group in groups:
    node = node[group]
  node[name] = value


def none_from_command_line(cfg: ml_collections.ConfigDict) -> None:
  """`--config.KEY=None` means None: ml_collections parses it, for a string
  field, as the word 'None' (which no path, file or setting is)."""
  for key, value in list(flat_items(cfg)):
    if value == 'None':
      set_key(cfg, key, None)


def result_items(cfg: ml_collections.ConfigDict) -> dict:
  """The keys that change what a run computes, with their values."""
  encoder = get_key(cfg, 'model.encoder')
  runtime, added, encoders = runtime_keys(), added_keys(), encoder_keys()
  return {k: (list(v) if isinstance(v, tuple) else _keyed_value(k, v))
          for k, v in flat_items(cfg)
          if k not in runtime and not (k in added and v == added[k])
          and not (k in encoders and encoder not in encoders[k])}


def training_items(cfg: ml_collections.ConfigDict) -> dict:
  """`result_items` that change the trained model (not what is analysed)."""
  return {k: v for k, v in result_items(cfg).items()
          if k.split('.')[0] not in ANALYSIS_SECTIONS}


def _closest(key: str, known) -> list[str]:
  """Known keys `key` may have meant: a near spelling, else those with its
  last name (a forgotten or wrong group), else a looser spelling."""
  near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
  name = key.rpartition('.')[2]
  same_name = [k for k in known if k.rpartition('.')[2] == name]
  if near or not same_name:
    return near or difflib.get_close_matches(key, list(known), n=1)
  return sorted(same_name, key=lambda k: -difflib.SequenceMatcher(None, key, k).ratio())[:2]


def _group_contents(group: str, known) -> str:
  """The keys and subgroups directly in `group` ('' for the top level)."""
  prefix = group + '.' if group else ''
  inside = [k[len(prefix):] for k in known if k.startswith(prefix)]
  names = sorted(prefix + k for k in inside if '.' not in k)
  groups = sorted({prefix + k.split('.')[0] for k in inside if '.' in k})
  where = f'in {group}' if group else 'at the top level'
  parts = [f'config groups {where}: {", ".join(groups)}'] if groups else []
  return '; '.join(parts + [f'valid keys {where}: {", ".join(names)}'])


def unknown_key_message(key: str, known) -> str:
  """Names `key`, the closest known key, and what the deepest group of `key`
  that exists holds (the config groups for a mistyped group)."""
  group = key.rpartition('.')[0]
  while group and not any(k.startswith(group + '.') for k in known):
    group = group.rpartition('.')[0]
  close = _closest(key, known)
  hint = f' (did you mean {" or ".join(repr(c) for c in close)}?)' if close else ''
  return f'unknown config key {key!r}{hint}; {_group_contents(group, known)}'
