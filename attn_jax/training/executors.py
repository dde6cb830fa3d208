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

With several devices (`config.devices`), `Vmapped` splits the model axis over
them (the largest device count that divides M) and `Looped` puts model i on
device i mod n, so the models' steps, dispatched back to back, run at once.
"""

import jax
import numpy as np

from attn_jax.core import sharding
from attn_jax.core.errors import TrainingError
from attn_jax.training import step as step_lib
from attn_jax.training.evaluation import predict_split
from attn_jax.training.objective import Objective

EXECUTORS = ('auto', 'vmap', 'loop')


class Vmapped:
  name = 'vmap'

  def __init__(self, model, optimizer, objective: Objective, dropout: bool, devices: int = 1):
    self._step = jax.jit(step_lib.make_model_axis_step(model, optimizer, objective.loss, dropout),
                         donate_argnums=0)
    self._predict = jax.jit(step_lib.make_model_axis_predict(model, objective.logits))
    self._step_each = jax.jit(step_lib.make_model_axis_step(model, optimizer, objective.loss, dropout,
                                                            own_batches=True), donate_argnums=0)
    self.devices = devices
    self.classes = model.num_classes

  def from_checkpoint(self, stacked):
    num = step_lib.stacked_size(stacked.step)
    used = max(d for d in range(1, self.devices + 1) if num % d == 0)
    mesh = sharding.mesh(used, 'models')
    return stacked if mesh is None else sharding.place(stacked, mesh, num)

  def to_checkpoint(self, state):
    return state

  def step(self, state, batch, dropout_keys, values, inputs=None, active=None):
    # Every model of a vmapped program is computed, stopped or not: selection
    # ignores a stopped model, but its latest state moves on (Looped's stays).
    del active
    state, losses = self._step(state, batch, dropout_keys, values, inputs or {})
    return state, np.asarray(losses, np.float64)

  def step_each(self, state, batches, dropout_keys, values, inputs, active=None):
    """Model i on `batches[i]` with `inputs[i]`: the batches, padded to one
    shape (`stack_batches`), are stacked on the model axis."""
    del active
    state, losses = self._step_each(state, stack_batches(batches), dropout_keys, values,
                                    stack_padded(inputs))
    return state, np.asarray(losses, np.float64)

  def predict(self, state, split, batch_size: int, buckets, values=None, inputs=None) -> np.ndarray:
    return predict_split(self._predict, state.params, split, batch_size, buckets, values, inputs,
                         self.classes)

  def scale_learning_rate(self, state, i: int, factor: float):
    """Model i's learning rate times `factor` (ReduceLROnPlateau)."""
    hyper = dict(state.opt_state.hyperparams)
    hyper['learning_rate'] = hyper['learning_rate'].at[i].multiply(factor)
    return state.replace(opt_state=state.opt_state._replace(hyperparams=hyper))

  def params(self, state, i: int):
    return step_lib.unstack(state.params, i)

  def step_count(self, state) -> int:
    return int(state.step[0])


class Looped:
  name = 'loop'

  def __init__(self, model, optimizer, objective: Objective, dropout: bool, devices: int = 1):
    self._step = jax.jit(step_lib.make_model_step(model, optimizer, objective.loss, dropout),
                         donate_argnums=0)
    self._predict = jax.jit(step_lib.make_predict(model, objective.logits))
    self.devices = jax.local_devices()[:devices]
    self.classes = model.num_classes

  def from_checkpoint(self, stacked):
    models = [step_lib.unstack(stacked, i) for i in range(step_lib.stacked_size(stacked.step))]
    if len(self.devices) == 1:
      return models
    return [jax.device_put(m, self.devices[i % len(self.devices)]) for i, m in enumerate(models)]

  def to_checkpoint(self, state):
    return step_lib.stack(state if len(self.devices) == 1 else jax.device_get(state))

  def step(self, state, batch, dropout_keys, values, inputs=None, active=None):
    """`active` [M] bool: models not active (stopped early) are not computed
    here; their state stays and their loss reads NaN-free 0."""
    inputs = inputs or {}
    out = [self._step(s, batch, dropout_keys[i], _one(values, i), inputs)
           if active is None or active[i] else (s, 0.0)
           for i, s in enumerate(state)]  # dispatched back to back; read after
    return [s for s, _ in out], np.array([float(loss) for _, loss in out], np.float64)

  def step_each(self, state, batches, dropout_keys, values, inputs, active=None):
    """Model i on `batches[i]` with `inputs[i]`; as `step` otherwise."""
    out = [self._step(s, batches[i], dropout_keys[i], _one(values, i), inputs[i])
           if active is None or active[i] else (s, 0.0)
           for i, s in enumerate(state)]
    return [s for s, _ in out], np.array([float(loss) for _, loss in out], np.float64)

  def predict(self, state, split, batch_size: int, buckets, values=None, inputs=None) -> np.ndarray:
    return np.stack([predict_split(self._predict, s.params, split, batch_size, buckets,
                                   _one(values or {}, i), inputs, self.classes)
                     for i, s in enumerate(state)])

  def scale_learning_rate(self, state, i: int, factor: float):
    """Model i's learning rate times `factor` (ReduceLROnPlateau)."""
    one = state[i]
    hyper = dict(one.opt_state.hyperparams)
    hyper['learning_rate'] = hyper['learning_rate'] * factor
    state = list(state)
    state[i] = one.replace(opt_state=one.opt_state._replace(hyperparams=hyper))
    return state

  def params(self, state, i: int):
    return state[i].params

  def step_count(self, state) -> int:
    """The program's step: that of the models still training (a stopped or
    failed model's count stays where it stopped)."""
    return max(int(s.step) for s in state)


def _pad_to(array: np.ndarray, shape: tuple) -> np.ndarray:
  """`array` zero-padded at the end of each axis to `shape`."""
  return np.pad(array, [(0, n - m) for m, n in zip(array.shape, shape)])


def stack_padded(trees: list):
  """Pytrees of equal structure whose arrays may differ in size -> one pytree
  of [M, ...] arrays, each zero-padded to the largest (PAD is 0; a padded
  position lies beyond every length, so no model reads it)."""
  def stack(*arrays):
    arrays = [np.asarray(a) for a in arrays]
    shape = tuple(max(sizes) for sizes in zip(*(a.shape for a in arrays)))
    return np.stack([_pad_to(a, shape) for a in arrays])
  return jax.tree.map(stack, *trees)


def stack_batches(batches: list):
  """The models' own batches of one step as one batch with a model axis:
  tokens padded to the widest (more PAD beyond each length changes no
  model's numbers). Batches of different sizes (hierarchical batches sized by
  `data.max_batch_tokens`) are refused: their filler rows would weigh in a
  mean loss."""
  if len({b.tokens.shape[0] for b in batches}) > 1:
    raise TrainingError('train.batch_order=\'own\' with batches of different sizes (data.max_batch_tokens) '
                        'cannot be vmapped; use train.model_axis=loop')
  return stack_padded(batches)


def _one(values: dict, i: int) -> dict:
  return jax.tree.map(lambda v: v[i], values)


def make_executor(choice: str, num_models: int, model, optimizer, objective: Objective, dropout: bool,
                  devices: int = 1):
  """The executor `train.model_axis` names ('auto': see the module docstring),
  its models spread over the first `devices` devices."""
  if choice == 'auto':
    choice = 'loop' if num_models == 1 or jax.default_backend() == 'cpu' else 'vmap'
  return (Vmapped if choice == 'vmap' else Looped)(model, optimizer, objective, dropout, devices)
