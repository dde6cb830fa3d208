"""How the M models of a program are computed at each step.

`Vmapped` stacks them on a leading axis and runs one vmapped, jitted step for
all of them: what accelerators are for, where M small models fill a device
that one leaves idle. `Looped` keeps them apart and calls the same compiled
single-model step once per model: on XLA:CPU this measured faster than the
vmapped program (benchmarks/model_axis_throughput.py: the batched gathers,
scatters and dots of the vmapped step, and its M-times-larger buffers, run
slower than M unbatched steps), while still compiling once for all M models,
building each batch once and keeping one checkpoint. Both compute the same
numbers (to float rounding) and save the same stacked checkpoint, so a run
may resume under either. `train.model_axis='auto'` takes `Looped` on CPU and
`Vmapped` elsewhere; one model always runs `Looped` (there is nothing to vmap).
"""

from typing import Callable

import jax
import numpy as np

from attn_jax.training import step as step_lib
from attn_jax.training.evaluation import predict_split

EXECUTORS = ('auto', 'vmap', 'loop')


class Vmapped:
  name = 'vmap'

  def __init__(self, model, optimizer, loss: Callable, dropout: bool):
    self._step = jax.jit(step_lib.make_model_axis_step(model, optimizer, loss, dropout),
                         donate_argnums=0)
    self._predict = jax.jit(step_lib.make_model_axis_predict(model))

  def from_checkpoint(self, stacked):
    return stacked

  def to_checkpoint(self, state):
    return state

  def step(self, state, batch, dropout_keys, values):
    state, losses = self._step(state, batch, dropout_keys, values)
    return state, np.asarray(losses, np.float64)

  def predict(self, state, split, batch_size: int, buckets) -> np.ndarray:
    return predict_split(self._predict, state.params, split, batch_size, buckets)

  def params(self, state, i: int):
    return step_lib.unstack(state.params, i)

  def step_count(self, state) -> int:
    return int(state.step[0])


class Looped:
  name = 'loop'

  def __init__(self, model, optimizer, loss: Callable, dropout: bool):
    self._step = jax.jit(step_lib.make_model_step(model, optimizer, loss, dropout), donate_argnums=0)
    self._predict = jax.jit(step_lib.make_predict(model))

  def from_checkpoint(self, stacked):
    return [step_lib.unstack(stacked, i) for i in range(step_lib.stacked_size(stacked.step))]

  def to_checkpoint(self, state):
    return step_lib.stack(state)

  def step(self, state, batch, dropout_keys, values):
    out = [self._step(s, batch, dropout_keys[i], jax.tree.map(lambda v, i=i: v[i], values))
           for i, s in enumerate(state)]  # dispatched back to back; read after
    return [s for s, _ in out], np.array([float(loss) for _, loss in out], np.float64)

  def predict(self, state, split, batch_size: int, buckets) -> np.ndarray:
    return np.stack([predict_split(self._predict, s.params, split, batch_size, buckets) for s in state])

  def params(self, state, i: int):
    return state[i].params

  def step_count(self, state) -> int:
    return int(state[0].step)


def make_executor(choice: str, num_models: int, model, optimizer, loss, dropout: bool):
  """The executor `train.model_axis` names ('auto': see the module docstring)."""
  if choice == 'auto':
    choice = 'loop' if num_models == 1 or jax.default_backend() == 'cpu' else 'vmap'
  return (Vmapped if choice == 'vmap' else Looped)(model, optimizer, loss, dropout)
