"""JAX's persistent compilation cache, and the time spent compiling.

A stage's programs depend only on the model's architecture, the analysis
settings and the padded batch shapes, so a rerun (another seed, another
checkpoint of the same model, the same run resumed) asks XLA for the same
programs again. With the persistent cache on, the second process reads
them from disk instead of compiling: on the SST suite that is most of its
wall time. The cache is safe to delete at any time; JAX rebuilds it.

`seconds()` counts tracing, lowering and XLA compilation (or reading from
the cache) as JAX's own monitoring events report them, so a stage can say
how much of its wall time was compilation.
"""

import os
import threading

import jax
from jax import monitoring

from attn_jax.core.errors import StorageError

ENV = 'ATTN_JAX_COMPILATION_CACHE'
# JAX's event names (jax/_src/dispatch.py); a rename in JAX only makes
# `seconds()` read 0, never breaks a run.
_EVENTS = frozenset({'/jax/core/compile/jaxpr_trace_duration',
                     '/jax/core/compile/jaxpr_to_mlir_module_duration',
                     '/jax/core/compile/backend_compile_duration'})
_lock = threading.Lock()
_total = [0.0]


def _listen(event: str, duration: float, **_) -> None:
  if event in _EVENTS:
    with _lock:
      _total[0] += duration


monitoring.register_event_duration_secs_listener(_listen)


def seconds() -> float:
  """Seconds this process has spent compiling (tracing, lowering, XLA or the
  cache) so far; differences of two readings time a piece of work."""
  with _lock:
    return _total[0]


def default_directory() -> str:
  """$ATTN_JAX_COMPILATION_CACHE, else $XDG_CACHE_HOME (or ~/.cache)/attn_jax/jax."""
  if os.environ.get(ENV):
    return os.environ[ENV]
  base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
  return os.path.join(base, 'attn_jax', 'jax')


def enable_cache(directory: str | None) -> str | None:
  """Turns JAX's persistent compilation cache on in `directory` (None: the
  default above; '' turns it off). Returns the directory in use, or None.

  Every program is cached, however quickly it compiled: the SST suite's
  compile time is many sub-second programs, which JAX's defaults (≥ 1 s)
  would leave out.
  """
  if directory == '':
    jax.config.update('jax_compilation_cache_dir', None)
    return None
  directory = os.path.abspath(os.path.expanduser(directory or default_directory()))
  if os.path.exists(directory) and not os.path.isdir(directory):
    raise StorageError(f'the compilation cache {directory} is a file, not a folder: give a folder with '
                       f"--config.compilation_cache or ${ENV} (or '' to run without the cache)")
  try:
    os.makedirs(directory, exist_ok=True)
  except OSError:  # a read-only home: run without the cache rather than fail
    return None
  jax.config.update('jax_compilation_cache_dir', directory)
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)
  jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)
  return directory


# ---------------------------------------------------------------- memory maps
#
# Every compiled XLA:CPU program keeps its machine code in memory mappings of
# its own — about 760 for a HAN training step — and Linux allows a process
# `vm.max_map_count` of them (65,530 by default). A HAN trains and predicts
# on ~100 padded shapes (documents × sentences × words), which ran out of
# mappings ("LLVM compilation error: Cannot allocate memory"). So when a
# program meets a new shape, the mappings are counted, and past a share of
# the limit every compiled program is dropped: those still needed are read
# back from the persistent cache (under a second) or compiled again. A key
# names the program as well as the shape (the callers pass the id of the
# executor, model or predict function): a study that runs many models over
# the same length buckets compiles new programs for shapes it has seen, and
# with shape-only keys never counted again — an IMDB grid process, its fourth
# configuration's adversarial stage, died of exactly that error.

MAPS_SHARE = 0.6
_seen_shapes: set = set()


def _map_count() -> int | None:
  try:
    with open('/proc/self/maps', 'rb') as f:
      return sum(1 for _ in f)
  except OSError:
    return None  # not Linux: nothing to guard


def _map_limit() -> int:
  try:
    with open('/proc/sys/vm/max_map_count') as f:
      return int(f.read())
  except (OSError, ValueError):
    return 65530


def guard_mappings(key) -> bool:
  """Called before running a program on `key` (its name, identity and shapes); when
  the key is new and the process holds more than `MAPS_SHARE` of its allowed
  memory mappings, drops every compiled program (`jax.clear_caches`).
  Returns whether it did."""
  if key in _seen_shapes:
    return False
  _seen_shapes.add(key)
  count = _map_count()
  if count is None or count < MAPS_SHARE * _map_limit():
    return False
  jax.clear_caches()
  _seen_shapes.clear()
  _seen_shapes.add(key)
  return True
