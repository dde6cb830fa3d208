"""The run configuration (ml_collections), in three parts:

- `schema`: J&W's recipe as `default_config(dataset, encoder, variant)`, its
  checks (`validate`), and which stages and experiments a config asks for;
- `keys`: dotted keys, and which of them key a result;
- `command_line`: `run.py --help`, unknown-key messages, config files.

Stages and experiments own their sections; the lists of them (`ANALYSES`,
`CHOICES`, `KEY_HELP`) are derived from their registries when read.
"""

from attn_jax.config.command_line import describe, from_file, key_help, load_file, unknown_override
from attn_jax.config.keys import (ANALYSIS_SECTIONS, added_keys, current_value, flat_items, get_key, runtime_keys,
                                  none_from_command_line, RENAMED_VALUES, result_items, set_key, training_items,
                                  unknown_key_message)
from attn_jax.config.schema import VARIANTS, analyses, choices, default_config, experiments, usable_stages, validate


def __getattr__(name: str):
  """ANALYSES, DATASETS, CHOICES, KEY_HELP, ADDED_KEYS and RUNTIME_KEYS, derived from the registries when read."""
  from attn_jax.core.registry import DATASETS, STAGES  # pylint: disable=g-import-not-at-top
  derived = {'ANALYSES': STAGES.names, 'DATASETS': DATASETS.names, 'CHOICES': choices, 'KEY_HELP': key_help,
             'ADDED_KEYS': added_keys, 'RUNTIME_KEYS': runtime_keys}
  if name in derived:
    return derived[name]()
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


__all__ = ['ADDED_KEYS', 'ANALYSIS_SECTIONS', 'DATASETS', 'RUNTIME_KEYS', 'VARIANTS', 'analyses',
           'choices', 'current_value', 'default_config', 'describe', 'experiments', 'usable_stages', 'flat_items', 'from_file', 'get_key', 'key_help', 'load_file', 'none_from_command_line',
           'RENAMED_VALUES', 'result_items', 'set_key', 'training_items', 'unknown_key_message', 'unknown_override',
           'validate']
