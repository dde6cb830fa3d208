"""Host memory that XLA:CPU frees is kept for its next step (glibc's malloc).

Why: an XLA:CPU program allocates its buffers when it runs and frees them
when it returns. glibc's malloc serves every request above 32 MiB — an IMDB
BiLSTM step's gate pre-activations, its LSTM residuals, their gradients —
with a fresh `mmap` and gives it back with `munmap` on free, and the worker
threads' own arenas do the same for anything larger than their 64 MiB heaps.
So every training step touched ~190 MB of pages it had never touched before:
48,000 page faults a step, a third of the step's time on this 2-core CPU
(benchmarks/train_throughput.py measures it, both ways, in one run).

`reuse_freed_memory()` tells glibc (`mallopt`) to take all memory from one
arena (M_ARENA_MAX = 1), never from `mmap` (M_MMAP_MAX = 0), and to keep what
is freed instead of returning it to the system (M_TRIM_THRESHOLD at its
largest): the next step's buffers are the last step's pages, already mapped.
The numbers computed are the same bit for bit; the cost is that the process
keeps its peak heap until it exits.

It has to run before JAX starts its CPU backend (the first array or jit
call): XLA's worker threads pick their arena on their first allocation.
`import attn_jax` calls it. `ATTN_JAX_MALLOC=system` leaves malloc as it is.
Other C libraries (musl, macOS) are left as they are.
"""

import ctypes
import ctypes.util
import os

ENV = 'ATTN_JAX_MALLOC'
# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_MAX, _M_ARENA_MAX = -1, -4, -8
_INT_MAX = (1 << 31) - 1

_status = ['not set']


def _glibc():
  name = ctypes.util.find_library('c')
  if name is None:
    return None
  try:
    libc = ctypes.CDLL(name)
    libc.gnu_get_libc_version  # only glibc has it  # pylint: disable=pointless-statement
  except (OSError, AttributeError):
    return None
  return libc


def backend_running() -> bool:
  """Whether JAX has started a backend in this process (settings read at its start are late)."""
  try:
    from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
    return bool(xla_bridge.backends_are_initialized())
  except (ImportError, AttributeError):  # a JAX without it: assume not
    return False


def reuse_freed_memory() -> str:
  """Sets glibc's malloc as the module docstring says, once; returns (and
  remembers, for `status()`) what it did: 'on', 'on, late: …' (JAX's
  backend was already running, so XLA's threads may keep arenas of their
  own), 'off (ATTN_JAX_MALLOC=system)' or 'off (not glibc)'."""
  if _status[0] != 'not set':
    return _status[0]
  if os.environ.get(ENV, '').strip().lower() == 'system':
    _status[0] = f'off ({ENV}=system)'
    return _status[0]
  libc = _glibc()
  if libc is None:
    _status[0] = 'off (not glibc)'
    return _status[0]
  late = backend_running()
  done = all(libc.mallopt(param, value) == 1 for param, value in
             ((_M_ARENA_MAX, 1), (_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _INT_MAX)))
  if not done:
    _status[0] = 'off (mallopt refused)'
  elif late:
    _status[0] = ('on, late: JAX was already running before attn_jax was imported, '
                  'so XLA\'s threads may keep their own arenas')
  else:
    _status[0] = 'on'
  return _status[0]


def status() -> str:
  """What `reuse_freed_memory` did in this process ('not set' before it ran)."""
  return _status[0]
