"""Which OpenBLAS kernel trains the vectors, so the same recipe gives the same bytes.

gensim's inner loops call scipy's bundled OpenBLAS (sdot, saxpy), and OpenBLAS
picks a kernel for the CPU when it loads. The kernels round differently, so
one-thread, fixed-seed training is deterministic only per kernel: measured
(gensim 4.4.0, scipy 1.17.1) a tiny model gives four different results —
SkylakeX/Cooperlake; Haswell/Zen; Sandybridge/Nehalem; Prescott/Core2. The
vectors are therefore trained in a child process (`worker`) whose environment
sets `OPENBLAS_CORETYPE` to `PINNED_BLAS_KERNEL` before numpy and scipy load.
Haswell is the newest kernel that every x86-64 CPU with AVX2 (Intel and AMD)
can run; elsewhere the machine's own kernel is used, and said so.
"""

import importlib.metadata
import os
import platform
import subprocess
import sys
from typing import Callable, Optional

PINNED_BLAS_KERNEL = 'Haswell'
ENV_VAR = 'OPENBLAS_CORETYPE'


def has_avx2() -> Optional[bool]:
  """Whether this CPU has AVX2; None where that cannot be told cheaply."""
  if platform.machine().lower() not in ('x86_64', 'amd64'):
    return False
  try:
    if sys.platform.startswith('linux'):
      with open('/proc/cpuinfo') as f:
        return any(l.startswith('flags') and 'avx2' in l.split() for l in f)
    if sys.platform == 'darwin':
      out = subprocess.run(['sysctl', '-n', 'machdep.cpu.leaf7_features'], capture_output=True,
                           text=True, check=False).stdout
      return 'AVX2' in out.split()
    if sys.platform == 'win32':
      import ctypes  # pylint: disable=g-import-not-at-top
      return bool(ctypes.windll.kernel32.IsProcessorFeaturePresent(40))  # PF_AVX2_INSTRUCTIONS_AVAILABLE
  except (OSError, AttributeError):
    pass
  return None


def child_environment(log: Callable[[str], None]) -> dict:
  """The training child's environment: this one with the kernel pinned where
  the CPU can run it; otherwise one line in `log` says the bytes will differ."""
  env, avx2 = dict(os.environ), has_avx2()
  if avx2:
    env[ENV_VAR] = PINNED_BLAS_KERNEL
  else:
    why = 'has no AVX2' if avx2 is False else 'cannot be checked for AVX2'
    log(f'word vectors: this CPU ({platform.machine()}) {why}, which OpenBLAS\'s '
        f'{PINNED_BLAS_KERNEL} kernel (pinned for them) needs: they are trained with its own '
        'kernel and will not be byte-identical to the recorded ones (results/vectors), so results '
        'computed from them may differ slightly from the committed ones')
  return env


def in_use() -> dict:
  """The BLAS kernel and library versions of this process (called in the
  child, after training, when scipy's OpenBLAS is loaded)."""
  found = {'kernel': os.environ.get(ENV_VAR), 'pinned': os.environ.get(ENV_VAR) == PINNED_BLAS_KERNEL,
           'openblas': None}
  try:
    import threadpoolctl  # pylint: disable=g-import-not-at-top
    libraries = [i for i in threadpoolctl.threadpool_info() if i.get('internal_api') == 'openblas']
  except ImportError:
    libraries = []
  # gensim calls scipy's OpenBLAS; numpy may bundle another one.
  libraries.sort(key=lambda i: 'numpy' in i.get('filepath', ''))
  if libraries:
    found.update(kernel=libraries[0].get('architecture') or found['kernel'],
                 openblas=libraries[0].get('version'))
  for package in ('gensim', 'scipy', 'numpy'):
    try:
      found[package] = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
      found[package] = None
  return found
