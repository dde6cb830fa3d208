"""Initialisers: PyTorch's defaults, which J&W's models were trained with
(their `model/modules/`), and the AllenNLP initializers S&S's configurations name
(their `configs/*.jsonnet`)."""

import math

import jax
import jax.numpy as jnp

INITS = ('torch', 'allennlp')


def torch_uniform(fan_in: int):
  """U(-1/sqrt(fan_in), 1/sqrt(fan_in)): nn.Linear, nn.Conv1d and nn.LSTM defaults."""
  bound = 1.0 / math.sqrt(fan_in)

  def init(key, shape, dtype=jnp.float32):
    return jax.random.uniform(key, shape, dtype, -bound, bound)

  return init


def xavier_uniform(fan_in: int, fan_out: int):
  """U(±sqrt(6 / (fan_in + fan_out))): `torch.nn.init.xavier_uniform_` of a
  [fan_out, fan_in] weight, whatever layout the param has here."""
  bound = math.sqrt(6.0 / (fan_in + fan_out))

  def init(key, shape, dtype=jnp.float32):
    return jax.random.uniform(key, shape, dtype, -bound, bound)

  return init


def orthogonal_per_direction(key, shape, dtype=jnp.float32):
  """[Z, H, 3H]: for each of the Z directions, PyTorch's `orthogonal_` of its
  [3H, H] recurrent weight (orthonormal columns), stored transposed."""
  keys = jax.random.split(key, shape[0])
  one = jax.nn.initializers.orthogonal(column_axis=-1)
  return jnp.stack([one(k, shape[1:], dtype) for k in keys])


def lstm_hidden_bias(key, shape, dtype=jnp.float32):
  """AllenNLP's `lstm_hidden_bias` on a [..., G] bias: zero, then ones at
  G//4 .. 2·(G//4) — an LSTM's forget gate. S&S apply it to their GRUs'
  [3H] recurrent bias, where those slots are the last quarter of the reset
  gate's units and the first half of the update gate's (H = 50: 37–49 and
  50–73), so those units start with bias 1."""
  del key
  quarter = shape[-1] // 4
  return jnp.zeros(shape, dtype).at[..., quarter:2 * quarter].set(1.0)


def zeros(key, shape, dtype=jnp.float32):
  del key
  return jnp.zeros(shape, dtype)
