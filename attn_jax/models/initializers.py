"""PyTorch's default initialisation, which the papers' models were trained with (§A.3)."""

import math

import jax
import jax.numpy as jnp


def torch_uniform(fan_in: int):
  """U(-1/sqrt(fan_in), 1/sqrt(fan_in)): nn.Linear, nn.Conv1d and nn.LSTM defaults."""
  bound = 1.0 / math.sqrt(fan_in)

  def init(key, shape, dtype=jnp.float32):
    return jax.random.uniform(key, shape, dtype, -bound, bound)

  return init
