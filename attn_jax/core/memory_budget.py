"""The memory a computation may still ask for, where it will run.

Why: XLA allocates a compiled program's buffers when it runs. A program too
large for the machine (leave-one-out over a 5,000-word text holds n variants
of n states: ~77 GB on an SST BiLSTM) is killed by the kernel on a CPU or
fails to allocate on a GPU after its compilation, so work sized from its
compiled memory analysis needs to know, before it runs, how much there is.

- An accelerator says what its allocator holds (`memory_stats`: its limit
  and what is in use).
- On a CPU the host's available memory (`MemAvailable` in /proc/meminfo,
  the kernel's estimate of what can be allocated without swapping) plus what
  this process's malloc arena holds freed: `host_memory.reuse_freed_memory`
  keeps XLA's freed buffers mapped for reuse, so the kernel counts them as
  used while this process can use them again.
"""

import ctypes
import os
from typing import Optional

import jax

from attn_jax.core import host_memory, output_folders

# Of what is free, the share a computation plans to use: the rest is left to
# what the estimate does not count (arguments, outputs, other processes' growth).
HEADROOM = 0.75


class _MallInfo2(ctypes.Structure):
  _fields_ = [(name, ctypes.c_size_t) for name in (
      'arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]


def _freed_in_heap() -> int:
  """Bytes this process's malloc holds freed (glibc >= 2.33's `mallinfo2`; 0 elsewhere)."""
  libc = host_memory._glibc()  # pylint: disable=protected-access
  info = getattr(libc, 'mallinfo2', None)
  if info is None:
    return 0
  info.restype = _MallInfo2
  return int(info().fordblks)


def _host_available() -> Optional[int]:
  try:
    with open('/proc/meminfo', encoding='ascii') as f:
      for line in f:
        if line.startswith('MemAvailable:'):
          return int(line.split()[1]) * 1024 + _freed_in_heap()
  except (OSError, ValueError, IndexError):
    pass
  try:  # no /proc (macOS): the free pages, without the page cache the kernel could drop
    return os.sysconf('SC_AVPHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')
  except (ValueError, OSError, AttributeError):
    return None


def available(device: Optional[jax.Device] = None) -> tuple[Optional[int], str]:
  """The bytes a computation on `device` may still ask for, and where they are.

  Args:
    device: the device the computation runs on; default JAX's first.

  Returns:
    (bytes, where): `where` says what was read, e.g. 'free on gpu:0' or
    'available on this host'; bytes is None where neither the device nor the
    host says.
  """
  device = device or jax.devices()[0]
  try:
    stats = device.memory_stats()
  except Exception:  # pylint: disable=broad-except  # a backend without it (CPU: None; others raise)
    stats = None
  if stats and stats.get('bytes_limit'):
    return int(stats['bytes_limit']) - int(stats.get('bytes_in_use', 0)), f'free on {device.platform}:{device.id}'
  return _host_available(), 'available on this host'


def budget(device: Optional[jax.Device] = None) -> tuple[Optional[int], str]:
  """`HEADROOM` of what is `available`, and a phrase saying so.

  Args:
    device: as `available`.

  Returns:
    (bytes or None, e.g. '3/4 of the 19.1 GB available on this host').
  """
  free, where = available(device)
  if free is None:
    return None, f'unknown ({where})'
  return int(free * HEADROOM), f'{HEADROOM:.0%} of the {output_folders.size(free)} {where}'
