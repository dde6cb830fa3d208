"""Bidirectional LSTM encoder (J&W `rnn`, §A.3; Meister et al.'s BiLSTM)."""

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp

from attn_jax.models import masks
from attn_jax.models.initializers import torch_uniform


def reverse_within_length(x: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
  """Reverses [B, L, ...] rows over their first `lengths[b]` steps only.

  Applying it twice is the identity. Positions past a row's length stay put.
  """
  width = x.shape[1]
  t = jnp.arange(width)[None, :]
  index = jnp.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)
  index = index.reshape(index.shape + (1,) * (x.ndim - 2))
  return jnp.take_along_axis(x, index, axis=1)


def _gate_activations(pre: jnp.ndarray) -> jnp.ndarray:
  """[..., 4H] pre-activations -> (σ(i), σ(f), tanh(g), σ(o)) concatenated.

  One tanh over all four gates, with σ(x) = (1 + tanh(x / 2)) / 2: XLA:CPU
  runs this about 5x faster than three logistic calls and a tanh on slices.
  """
  hidden = pre.shape[-1] // 4
  half = jnp.full((hidden,), 0.5, pre.dtype)
  rank = (1,) * (pre.ndim - 1) + (4 * hidden,)
  scale = jnp.concatenate([half, half, jnp.ones((hidden,), pre.dtype), half]).reshape(rank)
  shift = jnp.concatenate([half, half, jnp.zeros((hidden,), pre.dtype), half]).reshape(rank)
  return jnp.tanh(pre * scale) * scale + shift


def _recurrence(gates_x, w_hh, unroll):
  """(h, c, gate activations) of every step, from zero states; time-major."""
  _, z, b, four_h = gates_x.shape
  zeros = jnp.zeros((z, b, four_h // 4), gates_x.dtype)

  def step(carry, gx_t):
    h, c = carry
    act = _gate_activations(gx_t + jnp.einsum('zbh,zhg->zbg', h, w_hh))
    i, f, g, o = jnp.split(act, 4, axis=-1)
    c = f * c + i * g
    h = o * jnp.tanh(c)
    return (h, c), (h, c, act)

  return jax.lax.scan(step, (zeros, zeros), gates_x, unroll=unroll)[1]


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def lstm_scan(gates_x: jnp.ndarray, w_hh: jnp.ndarray, unroll: int = 1) -> jnp.ndarray:
  """Runs Z independent LSTMs whose input projections are already computed.

  Args:
    gates_x: [L, Z, B, 4H] input contributions `x_t W_ih + b`, time-major
      (gate order i, f, g, o, as PyTorch).
    w_hh: [Z, H, 4H] recurrent weights.
    unroll: scan unroll factor.

  Returns:
    [L, Z, B, H] hidden states, starting from zero states.

  Reverse-mode only (a hand-written VJP: the backward loop does one matmul a
  step, and dW_hh is one matmul after it); `jax.jvp` / `jacfwd` do not apply.
  """
  return _recurrence(gates_x, w_hh, unroll)[0]


def _lstm_scan_fwd(gates_x, w_hh, unroll):
  hs, cs, acts = _recurrence(gates_x, w_hh, unroll)
  return hs, (hs, cs, acts, w_hh)


def _lstm_scan_bwd(unroll, residuals, d_out):
  hs, cs, acts, w_hh = residuals
  zeros = jnp.zeros_like(hs[0])
  c_prev = jnp.concatenate([zeros[None], cs[:-1]])

  def step(carry, inputs):
    dh_next, dc_next = carry
    dh_out, act, c, c_before = inputs
    dh = dh_out + dh_next
    i, f, g, o = jnp.split(act, 4, axis=-1)
    tanh_c = jnp.tanh(c)
    dc = dc_next + dh * o * (1 - tanh_c * tanh_c)
    d_pre = jnp.concatenate([dc * g * i * (1 - i), dc * c_before * f * (1 - f),
                             dc * i * (1 - g * g), dh * tanh_c * o * (1 - o)], axis=-1)
    return (jnp.einsum('zbg,zhg->zbh', d_pre, w_hh), dc * f), d_pre

  inputs = (d_out, acts, cs, c_prev)
  _, d_pre = jax.lax.scan(step, (zeros, zeros), inputs, reverse=True, unroll=unroll)
  h_prev = jnp.concatenate([zeros[None], hs[:-1]])
  d_w_hh = jnp.einsum('lzbh,lzbg->zhg', h_prev, d_pre)
  return d_pre, d_w_hh


lstm_scan.defvjp(_lstm_scan_fwd, _lstm_scan_bwd)


class BiLSTMEncoder(nn.Module):
  """[B, L, D] embeddings, [B] lengths -> [B, L, 2 * hidden] states.

  Each direction runs over exactly the L tokens of its row (SOS ... EOS), as
  PyTorch's packed sequences: the backward direction starts at the row's own
  EOS, so padding never changes an output. Outputs at padding are zero. The
  input projection of both directions is one matmul outside the recurrence.
  Init U(+-1/sqrt(hidden)) for all weights and the (single) bias.
  """
  hidden: int = 128
  unroll: int = 1

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    del deterministic  # no dropout, as J&W
    dim = embedded.shape[-1]
    four_h = 4 * self.hidden
    init = torch_uniform(self.hidden)
    w_ih = self.param('w_ih', init, (2, dim, four_h))
    w_hh = self.param('w_hh', init, (2, self.hidden, four_h))
    bias = self.param('bias', init, (2, four_h))
    batch, width, _ = embedded.shape
    # One GEMM for both directions; reversing its output rather than its
    # input keeps the gather out of the matmul (3x faster on XLA:CPU).
    gates = embedded.reshape(batch * width, dim) @ jnp.concatenate([w_ih[0], w_ih[1]], axis=-1)
    gates = (gates + jnp.concatenate([bias[0], bias[1]])[None, :]).reshape(batch, width, 2, four_h)
    gates_x = jnp.stack([gates[:, :, 0], reverse_within_length(gates[:, :, 1], lengths)], axis=1)
    states = lstm_scan(jax.lax.optimization_barrier(jnp.swapaxes(gates_x, 0, 2)), w_hh, self.unroll)  # [L, 2, B, H]
    states = jnp.swapaxes(states, 0, 2)  # [B, 2, L, H]
    forward, backward = states[:, 0], reverse_within_length(states[:, 1], lengths)
    valid = masks.sequence_mask(lengths, embedded.shape[1])[..., None]
    return jnp.concatenate([forward, backward], axis=-1) * valid.astype(embedded.dtype)
