"""Same config and seed, same numbers on a GPU too: XLA's deterministic GPU ops.

Why: XLA:GPU sums scatter-adds (the embedding table's gradient, every step)
and some reductions with atomics, whose order varies from run to run, and it
picks matmul algorithms by timing them (autotuning). On an H100, two runs of
the same 40 SST training steps from the same params ended 1.7e-3 apart
(benchmarks/train_throughput.py, results/benchmarks/gpu_h100_train_sst.json);
Adam's normalised steps amplify such differences, so selected epochs and τ
could move between identical runs. `--xla_gpu_deterministic_ops=true` makes
those ops deterministic and turns autotuning off: with it the same runs
agreed bit for bit (gpu_h100_train_sst_deterministic.json). XLA:CPU and TPUs
are deterministic already; the flag changes nothing there.

`use_deterministic_gpu_ops()` adds the flag to $XLA_FLAGS, which XLA reads
when JAX starts its backend, so it must run first; `import attn_jax` calls
it. A $XLA_FLAGS that already names the flag is left as it is: set
`XLA_FLAGS=--xla_gpu_deterministic_ops=false` for XLA's faster,
run-to-run-varying GPU kernels.
"""

import os

from attn_jax.core.host_memory import backend_running

FLAG = '--xla_gpu_deterministic_ops'

_status = ['not set']


def use_deterministic_gpu_ops() -> str:
  """Adds `FLAG=true` to $XLA_FLAGS unless it names the flag; returns (and
  remembers, for `status()`) what it did: 'on', 'off (XLA_FLAGS sets …)',
  'on (XLA_FLAGS sets …)', or 'late: …' when JAX's backend already runs."""
  if _status[0] != 'not set':
    return _status[0]
  flags = os.environ.get('XLA_FLAGS', '').split()
  given = [f for f in flags if f == FLAG or f.startswith(FLAG + '=')]
  if given:
    value = given[-1].partition('=')[2].lower() or 'true'
    state = 'on' if value in ('true', '1') else 'off'
    _status[0] = f'{state} (XLA_FLAGS sets {given[-1]})'
  elif backend_running():
    _status[0] = ('late: JAX was already running before attn_jax was imported; import '
                  f'attn_jax first, or set XLA_FLAGS={FLAG}=true, for deterministic GPU ops')
  else:
    os.environ['XLA_FLAGS'] = ' '.join(flags + [FLAG + '=true'])
    _status[0] = 'on'
  return _status[0]


def status() -> str:
  """What `use_deterministic_gpu_ops` did in this process ('not set' before it ran)."""
  return _status[0]
