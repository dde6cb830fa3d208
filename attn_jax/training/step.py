"""One optimisation step and batched prediction, as pure functions.

`train_step(state, batch, dropout_rng) -> (state, loss)` has no Python-side
effects, so `jax.vmap` over a leading axis of `state` trains several seeds or
hyper-parameter values as one program.
"""

from typing import Any, Callable

import flax.struct
import jax
import jax.numpy as jnp
import optax

from attn_jax.data.batching import Batch
from attn_jax.models import Model
from attn_jax.training.loss import weighted_bce_sum


class TrainState(flax.struct.PyTreeNode):
  params: Any
  opt_state: Any
  step: jnp.ndarray  # int32 scalar: optimisation steps taken


def init_state(optimizer: optax.GradientTransformation, params: Any) -> TrainState:
  return TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))


def make_train_step(model: Model, optimizer: optax.GradientTransformation) -> Callable:
  """(state, batch, dropout_rng | None) -> (new state, summed weighted loss).

  The loss is NaN when it or any gradient is not finite.
  """

  def loss_fn(params, batch: Batch, dropout_rng):
    logits = model.forward(params, batch.tokens, batch.lengths, dropout_rng).logits
    return weighted_bce_sum(logits, batch.labels, batch.weights)

  def train_step(state: TrainState, batch: Batch, dropout_rng=None):
    loss, grads = jax.value_and_grad(loss_fn)(state.params, batch, dropout_rng)
    # A finite loss with non-finite gradients would poison the params silently:
    # report it as a NaN loss, which the caller checks every step.
    finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(g)) for g in jax.tree.leaves(grads)]))
    loss = jnp.where(finite, loss, jnp.nan)
    updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    return TrainState(params, opt_state, state.step + 1), loss

  return train_step


def make_predict(model: Model) -> Callable:
  """(params, tokens, lengths) -> P(y = 1) [B]."""

  def predict(params, tokens, lengths):
    return jax.nn.sigmoid(model.forward(params, tokens, lengths).logits)

  return predict
