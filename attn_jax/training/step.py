"""One optimisation step and batched prediction, as pure functions.

`make_train_step` is generic over the loss of an `Objective`
(`attn_jax.training.objective`). `make_model_axis_step` runs it for M models
stacked on a leading axis — params, optimiser state (with each model's
learning rate and weight decay), dropout keys and the objective's per-model
values (W&P's λ, a guide) — as one vmapped program, all models seeing the
same batch and the same batch inputs (a base model's targets, guides). A
model's own sparsegen λ is such a value too (`Model.with_values`, Meister
eq. 3), so a λ sweep is one program. `attn_jax.training.executors` decides
whether a program runs that way or model after model.
"""

from typing import Any, Callable, Optional

import flax.struct
import jax
import jax.numpy as jnp
import optax

from attn_jax.data.batching import Batch
from attn_jax.models import Model
from attn_jax.models.model import output_probs
from attn_jax.training.objective import jw_loss, own_logits


class TrainState(flax.struct.PyTreeNode):
  params: Any
  opt_state: Any
  step: jnp.ndarray  # int32 scalar: optimisation steps taken


def init_state(optimizer: optax.GradientTransformation, params: Any) -> TrainState:
  return TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))


def _all_finite(tree) -> jnp.ndarray:
  return jnp.all(jnp.array([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree)]))


def make_train_step(model: Model, optimizer: optax.GradientTransformation,
                    loss: Callable = jw_loss) -> Callable:
  """(state, batch, dropout_rng | None, member={}, inputs={}) -> (new state, loss).

  `loss` is an `Objective.loss`. The returned loss is NaN when the loss or
  any gradient is not finite.
  """

  def train_step(state: TrainState, batch: Batch, dropout_rng=None, member=None, inputs=None):
    member = member or {}
    value, grads = jax.value_and_grad(lambda params: loss(
        model.with_values(member), params, batch, dropout_rng, member, inputs or {}))(state.params)
    # A finite loss with non-finite gradients would poison the params silently:
    # report it as a NaN loss, which the caller checks every step.
    value = jnp.where(_all_finite(grads), value, jnp.nan)
    updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    return TrainState(params, opt_state, state.step + 1), value

  return train_step


def make_model_step(model: Model, optimizer: optax.GradientTransformation,
                    loss: Callable = jw_loss, dropout: bool = False) -> Callable:
  """(state, batch, dropout_key, member, inputs) -> (state, loss): one model
  of a model axis, its dropout key folded with its step count."""
  step = make_train_step(model, optimizer, loss)

  def one(state, batch, dropout_key, member, inputs):
    rng = jax.random.fold_in(dropout_key, state.step) if dropout else None
    return step(state, batch, rng, member, inputs)

  return one


def make_model_axis_step(model: Model, optimizer: optax.GradientTransformation,
                         loss: Callable = jw_loss, dropout: bool = False,
                         own_batches: bool = False) -> Callable:
  """(states [M], batch, dropout_keys [M], members [M], inputs) -> (states,
  losses [M]): `make_model_step` vmapped over M stacked models, all on the
  same batch and batch inputs (`own_batches`: each on its own, the batch and
  the inputs stacked on the model axis too).

  Models are independent under `vmap`, so a model whose loss or gradient stops
  being finite (its loss comes back NaN) harms no other; the trainer stops
  using it. Freezing its state here instead would cost a full select over
  every parameter and optimiser buffer each step (measured: it tripled the
  step time of the Average encoder on SST).
  """
  shared = None if not own_batches else 0
  return jax.vmap(make_model_step(model, optimizer, loss, dropout), in_axes=(0, shared, 0, 0, shared))


def make_predict(model: Model, logits: Callable = own_logits) -> Callable:
  """(params, tokens, lengths, member={}, inputs={}) -> P(y = 1) [B] (a
  multi-class model: the class distribution [B, C]); `logits` is an
  `Objective.logits` (default: the model's own forward)."""

  def predict(params, tokens, lengths, member=None, inputs=None):
    member = member or {}
    return output_probs(logits(model.with_values(member), params, tokens, lengths, member,
                               inputs or {}))

  return predict


def make_model_axis_predict(model: Model, logits: Callable = own_logits) -> Callable:
  """(params [M], tokens, lengths, members [M], inputs) -> P(y = 1) [M, B]."""
  return jax.vmap(make_predict(model, logits), in_axes=(0, None, None, 0, None))


def stack(trees: list) -> Any:
  """Pytrees of equal structure -> one pytree with a leading model axis."""
  return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def unstack(tree: Any, index: int) -> Any:
  """Model `index` of a stacked pytree."""
  return jax.tree.map(lambda x: x[index], tree)


def stacked_size(tree: Any) -> Optional[int]:
  leaves = jax.tree.leaves(tree)
  return leaves[0].shape[0] if leaves else None
