"""Where an IMDB BiLSTM training step's recurrence spends its time: the
LSTM's forward scan, its backward scan with and without the one matmul a
step, and dW_hh after it, each jitted alone on the mean padded batch of
`train_throughput.py` (time-major [L, 2, B, 4H]; L = 221, B = 32, H = 128).

    python benchmarks/lstm_scan_parts.py [--length=221] [--out=results/benchmarks/lstm_scan_parts_imdb.json]

"backward, matmul removed" keeps every elementwise op and the loop and
replaces the step's d_pre @ W_hhᵀ by a slice of d_pre of the same shape:
what is left is the loop's elementwise work (gates, tanh, the cell's
derivatives) and its per-iteration cost. The last part runs the LSTMs of
five models (Z = 10 directions) in one scan, as a vmapped model axis would:
if the per-iteration cost were fixed dispatch, five models would cost little
more than one.
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.core import atomic_io
from attn_jax.models.encoders import bilstm


def best_ms(f, *args, repeats: int = 20) -> float:
  jax.block_until_ready(f(*args))
  best = float('inf')
  for _ in range(3):
    started = time.perf_counter()
    for _ in range(repeats):
      out = f(*args)
    jax.block_until_ready(out)
    best = min(best, (time.perf_counter() - started) / repeats)
  return best * 1e3


def backward(with_matmul: bool):
  """bilstm's backward loop (`bilstm.backward_scan`), optionally with a slice of
  the same shape in place of its matmul."""
  def run(residuals, d_out):
    _, cs, acts, w_hh = residuals
    to_previous_h = ((lambda d: jnp.einsum('zbg,zhg->zbh', d, w_hh)) if with_matmul
                     else (lambda d: d[..., :w_hh.shape[1]]))
    return bilstm.backward_scan(d_out, cs, acts, to_previous_h)
  return run


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--length', type=int, default=221)
  parser.add_argument('--batch', type=int, default=32)
  parser.add_argument('--hidden', type=int, default=128)
  parser.add_argument('--out', default=None)
  args = parser.parse_args()
  length, batch, hidden = args.length, args.batch, args.hidden
  rng = np.random.default_rng(0)
  gates_x = jnp.asarray(rng.normal(size=(length, 2, batch, 4 * hidden)).astype(np.float32))
  w_hh = jnp.asarray(0.1 * rng.normal(size=(2, hidden, 4 * hidden)).astype(np.float32))
  d_out = jnp.asarray(rng.normal(size=(length, 2, batch, hidden)).astype(np.float32))
  residuals = jax.jit(lambda g, w: (*bilstm._recurrence(g, w, 1), w))(gates_x, w_hh)  # pylint: disable=protected-access
  parts = {
      'forward scan': best_ms(jax.jit(lambda g, w: bilstm._recurrence(g, w, 1)), gates_x, w_hh),  # pylint: disable=protected-access
      'backward scan': best_ms(jax.jit(backward(True)), residuals, d_out),
      'backward scan, matmul removed': best_ms(jax.jit(backward(False)), residuals, d_out),
      'dW_hh': best_ms(jax.jit(lambda h, d: jnp.einsum('lzbh,lzbg->zhg', h, d)), residuals[0],
                       residuals[2]),
      'forward + backward (lstm_scan, autodiff)': best_ms(jax.jit(jax.grad(
          lambda g, w: jnp.sum(bilstm.lstm_scan(g, w) * d_out), argnums=(0, 1))), gates_x, w_hh),
  }
  z = 10
  many = lambda a: jnp.tile(a, (1, z // 2, 1, 1)) if a.ndim == 4 else jnp.tile(a, (z // 2, 1, 1))  # noqa: E731
  gates_z, w_z, d_z = many(gates_x), many(w_hh), many(d_out)
  parts['forward + backward, 5 models in one scan (Z = 10)'] = best_ms(jax.jit(jax.grad(
      lambda g, w: jnp.sum(bilstm.lstm_scan(g, w) * d_z), argnums=(0, 1))), gates_z, w_z)
  for name, ms in parts.items():
    print(f'{name:<42}{ms:8.1f} ms  ({ms / length * 1e3:.0f} µs per time step)')
  if args.out:
    atomic_io.write_json(args.out, {
        'command': 'python benchmarks/lstm_scan_parts.py ' + ' '.join(sys.argv[1:]),
        'length': length, 'batch': batch, 'hidden': hidden, 'cpus': os.cpu_count(),
        'device': str(jax.devices()[0]), 'ms': parts})


if __name__ == '__main__':
  main()
