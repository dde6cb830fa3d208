"""What the benchmarks measure about this machine and their own process: the
f32 matmul rate (the peak the analyses' FLOP rates are compared to), resident
memory and its peak, and which documents a sampled run takes."""

import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def matmul_rate(rows: int, inner: int, cols: int, repeats: int = 20) -> float:
  """FLOP/s of a jitted f32 [rows, inner] @ [inner, cols] here, the best of 3 timings."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  a, b = jnp.ones((rows, inner), jnp.float32), jnp.ones((inner, cols), jnp.float32)
  f = jax.jit(lambda x, y: x @ y)
  f(a, b).block_until_ready()
  best = float('inf')
  for _ in range(3):
    started = time.perf_counter()
    for _ in range(repeats):
      out = f(a, b)
    out.block_until_ready()
    best = min(best, time.perf_counter() - started)
  return 2 * rows * inner * cols * repeats / best


def matmul_peak(size: int = 2048, repeats: int = 20) -> float:
  """FLOP/s of a jitted f32 [size, size] matmul here, the best of 3 timings."""
  return matmul_rate(size, size, size, repeats)


def matmul_peak_in_child() -> float:
  """`matmul_peak` in a fresh interpreter (no other library's threads beside
  it), the best of two matrix sizes."""
  code = ('import sys; sys.path.insert(0, %r); import machine; '
          'print(max(machine.matmul_peak(2048), machine.matmul_peak(4096, 4)))' % HERE)
  done = subprocess.run([sys.executable, '-c', code], check=True, capture_output=True, text=True)
  return float(done.stdout.strip().splitlines()[-1])


def rss_mb(peak: bool = False) -> float:
  """RSS now, or its peak: VmHWM, which `reset_peak` restarts (ru_maxrss is
  not restarted, and carries the parent's peak across fork and exec)."""
  if os.path.exists('/proc/self/status'):
    field = 'VmHWM' if peak else 'VmRSS'
    with open('/proc/self/status') as f:
      return next(int(line.split()[1]) for line in f if line.startswith(field)) / 1024
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def reset_peak() -> bool:
  """Restart the peak RSS from the current RSS (Linux >= 4.0); False where not."""
  try:
    with open('/proc/self/clear_refs', 'w') as f:
      f.write('5')
    return True
  except OSError:
    return False


def length_blocks(lengths: np.ndarray, k, batch_size: int) -> np.ndarray:
  """All documents (k None) or about k in blocks of `batch_size` neighbours in
  length order, the blocks spread evenly over the lengths. Neighbours make
  batches as dense as the whole split's; k documents evenly spaced in length
  would pad each batch to its longest and undersell batching."""
  order = np.argsort(lengths, kind='stable')
  if k is None or k >= len(order):
    return np.arange(len(order))
  size = min(batch_size, k)
  starts = np.linspace(0, len(order) - size, max(1, round(k / size))).astype(int)
  return np.unique(np.concatenate([order[s:s + size] for s in starts]))
