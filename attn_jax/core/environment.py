"""Where a model was trained: the libraries and the machine, recorded beside its numbers.

Why: a run's arithmetic is deterministic for one install on one machine, not
across them. XLA compiles for the CPU it runs on and the library versions
change its code, so float rounding differs between environments, and
training amplifies it (Adam's normalised steps). Measured on SST BiLSTM +
tanh, seed 0 (docs/jain_wallace.md, "One model of the default"): the same
config gave a dev loss after one epoch of 0.41545717… on 2026-11-26 and
2026-11-29 and 0.41546154… on 2026-11-28, in environments that were not
recorded. A run therefore records its environment (`describe`), so that two
numbers that differ in the fifth digit can be told apart: another
environment, or another computation.
"""

import importlib.metadata
import os
import platform
import sys
from typing import Optional

from attn_jax.core.estimates import available_cores

LIBRARIES = ('jax', 'jaxlib', 'flax', 'optax', 'numpy')
# The CPU features XLA:CPU's code depends on most (vector width, fused multiply-add).
CPU_FEATURES = ('avx', 'avx2', 'fma', 'avx512f', 'amx_tile')


def _version(name: str) -> Optional[str]:
  try:
    return importlib.metadata.version(name)
  except importlib.metadata.PackageNotFoundError:
    return None


def cpu() -> dict:
  """{'model': the CPU's model name, 'features': those of `CPU_FEATURES` it
  has} from Linux's /proc/cpuinfo; the model from `platform` elsewhere (no
  features then)."""
  model, flags = None, None
  try:
    with open('/proc/cpuinfo') as f:
      for line in f:
        key, _, value = line.partition(':')
        if key.strip() == 'model name' and model is None:
          model = value.strip()
        elif key.strip() == 'flags' and flags is None:
          flags = set(value.split())
  except OSError:
    pass
  return {'model': model or platform.processor() or platform.machine(),
          'features': [f for f in CPU_FEATURES if f in flags] if flags is not None else None}


def describe() -> dict:
  """This process's environment, as a run records it.

  Returns:
    {'python': version, 'libraries': {name: version} of `LIBRARIES`,
     'backend': JAX's platform ('cpu', 'gpu', 'tpu'), 'device': the first
     device's kind, 'devices': how many, 'cpu': `cpu()`, 'cores': the cores
     this process may use, 'xla_flags': $XLA_FLAGS}.
  """
  import jax  # pylint: disable=g-import-not-at-top  (after determinism's flag is set)
  device = jax.devices()[0]
  return {'python': platform.python_version(),
          'libraries': {name: _version(name) for name in LIBRARIES},
          'backend': device.platform, 'device': device.device_kind, 'devices': jax.device_count(),
          'cpu': cpu(), 'cores': available_cores(), 'xla_flags': os.environ.get('XLA_FLAGS', ''),
          'platform': sys.platform}


def differences(a: dict, b: dict) -> list[str]:
  """What differs between two `describe()` records, as 'key: a → b' lines
  (nested keys dotted); [] when they are the same."""
  out = []
  for key in sorted(set(a) | set(b)):
    x, y = a.get(key), b.get(key)
    if isinstance(x, dict) and isinstance(y, dict):
      out += [f'{key}.{line}' for line in differences(x, y)]
    elif x != y:
      out.append(f'{key}: {x} → {y}')
  return out


def summary(record: dict) -> str:
  """One line of a `describe()` record: 'flax 0.12.8, jax 0.10.2, …; cpu × 1
  (model: features); 2 cores'."""
  libraries = ', '.join(f'{k} {v}' for k, v in sorted((record.get('libraries') or {}).items()))
  machine = record.get('cpu') or {}
  features = ' '.join(machine.get('features') or []) or 'features unknown'
  return (f'{libraries}; {record.get("device")} × {record.get("devices")} '
          f'({machine.get("model")}: {features}); {record.get("cores")} cores')
