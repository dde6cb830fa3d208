"""Bidirectional LSTM encoder (J&W `rnn`, `EncoderRNN`; Meister et al.'s BiLSTM)."""

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp

from attn_jax.core.registry import ENCODERS
from attn_jax.models import masks
from attn_jax.models.encoders.encoder import Encoder
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


def backward_scan(d_out, cs, acts, to_previous_h, unroll: int = 1):
  """The backward loop of `lstm_scan`: [L, Z, B, H] output gradients and the
  forward residuals -> [L, Z, B, 4H] gradients of the gate pre-activations.

  `to_previous_h` maps a step's d_pre to the gradient it sends to the previous
  h (d_pre @ W_hhᵀ; benchmarks/lstm_scan_parts.py swaps it to time the loop
  without its matmul)."""
  zeros = jnp.zeros_like(d_out[0])
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
    return (to_previous_h(d_pre), dc * f), d_pre

  inputs = (d_out, acts, cs, c_prev)
  return jax.lax.scan(step, (zeros, zeros), inputs, reverse=True, unroll=unroll)[1]


def _lstm_scan_bwd(unroll, residuals, d_out):
  hs, cs, acts, w_hh = residuals
  d_pre = backward_scan(d_out, cs, acts, lambda d: jnp.einsum('zbg,zhg->zbh', d, w_hh), unroll)
  h_prev = jnp.concatenate([jnp.zeros_like(hs[:1]), hs[:-1]])
  d_w_hh = jnp.einsum('lzbh,lzbg->zhg', h_prev, d_pre)
  return d_pre, d_w_hh


lstm_scan.defvjp(_lstm_scan_fwd, _lstm_scan_bwd)


class BiLSTMEncoder(nn.Module):
  """[B, L, D] embeddings, [B] lengths -> [B, L, 2 * hidden] states.

  Each direction runs over exactly the L tokens of its row (SOS ... EOS), as
  PyTorch's packed sequences: the backward direction starts at the row's own
  EOS, so padding never changes an output. Outputs at padding are zero. The
  input projection of both directions is one matmul outside the recurrence.
  Init U(+-1/sqrt(hidden)) for all weights and biases. `biases=2` is
  PyTorch's `nn.LSTM` (J&W's): an input and a recurrent bias vector, each
  drawn and trained (and decayed) on its own, their sum in the gates — so
  the summed bias starts with twice the variance, and under Adam moves about
  twice as far per step, as one vector would (`biases=1`, attn-jax before
  2026-11-26).
  """
  hidden: int = 128
  unroll: int = 1
  biases: int = 2

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
    if self.biases == 2:
      bias = bias + self.param('bias_hh', init, (2, four_h))
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


def total_bias(params: dict) -> jnp.ndarray:
  """[2, 4H] the bias the gates add: the one vector, or the input and
  recurrent ones summed (`BiLSTMEncoder.biases`)."""
  return params['bias'] + params['bias_hh'] if 'bias_hh' in params else params['bias']


def _document_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray, unroll: int):
  """One document's input projections [L, 2, 4H] and its (h, c), each
  [2, L, H] indexed by position (direction 1 is the backward one)."""
  lengths = length[None]
  gates = jnp.einsum('ld,zdg->lzg', embedded, params['w_ih']) + total_bias(params)[None]
  backward = reverse_within_length(gates[None, :, 1], lengths)[0]
  hs, cs, _ = _recurrence(jnp.stack([gates[:, 0], backward], axis=1)[:, :, None],
                          params['w_hh'], unroll)

  def by_position(x):  # [L, 2, 1, H] time-major
    return jnp.stack([x[:, 0, 0], reverse_within_length(x[None, :, 1, 0], lengths)[0]])

  return gates, by_position(hs), by_position(cs)


def _lane_steps(params: dict, gates: jnp.ndarray, h0: jnp.ndarray, c0: jnp.ndarray,
                n: jnp.ndarray, num_steps: int, switch_of, reads, unroll: int,
                pad_at_switch: bool = False) -> jnp.ndarray:
  """The new LSTM steps of paired one-word variants (`deletion_states`,
  `replacement_states`): lane k runs row k's forward steps and then row
  n − 1 − k's, and the backward steps of n − 1 − k and then of k, switching at
  step `switch_of(lanes)`. `reads(s, lanes, switch)` gives the input position
  of step s per direction; with `pad_at_switch` the first step of each row
  reads a PAD input (its projection is the bias alone).

  Returns:
    [num_steps, 2, K, H] hidden states, K = ⌊(L − 1) / 2⌋ lanes (lanes past
    (n − 1) / 2 compute junk that no row reads).
  """
  width = gates.shape[0]
  lanes = jnp.arange(1, (width - 1) // 2 + 1)
  switch = switch_of(lanes)
  at = lambda q: jnp.clip(q, 0, width - 1)

  def starts(states, second):  # [2, K, H]: the states the new steps start from
    if second:  # row n − 1 − k forward, after position n − 2 − k; row k backward, from k + 1
      return jnp.stack([states[0, at(n - 2 - lanes)], states[1, at(lanes + 1)]])
    return jnp.stack([states[0, at(lanes - 1)], states[1, at(n - lanes)]])

  restart_h, restart_c = starts(h0, True), starts(c0, True)  # gathered once, not per step
  pad_gates = total_bias(params)[:, None, :]  # a PAD input's projection, also summed once

  def step(carry, s):
    h, c = carry
    turn = (s == switch)[None, :, None]
    h = jnp.where(turn, restart_h, h)
    c = jnp.where(turn, restart_c, c)
    read_forward, read_backward = reads(s, lanes, switch)
    gx = jnp.stack([gates[at(read_forward), 0], gates[at(read_backward), 1]])
    if pad_at_switch:
      gx = jnp.where(((s == 0) | (s == switch))[None, :, None], pad_gates, gx)
    act = _gate_activations(gx + jnp.einsum('zkh,zhg->zkg', h, params['w_hh']))
    i, f, g, o = jnp.split(act, 4, axis=-1)
    c = f * c + i * g
    h = o * jnp.tanh(c)
    return (h, c), h

  return jax.lax.scan(step, (starts(h0, False), starts(c0, False)), jnp.arange(num_steps),
                      unroll=unroll)[1]


def deletion_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray,
                    unroll: int = 1) -> jnp.ndarray:
  """Encoder states of every one-word deletion of one document (J&W LOO, `remove_and_run`).

  Args:
    params: the encoder's params (`w_ih`, `w_hh`, `bias`).
    embedded: [L, D] the document's embeddings; length: scalar n (with SOS, EOS).

  Returns:
    [L − 2, L, 2 * hidden]: row g − 1 is what `BiLSTMEncoder` gives for the
    document with position g removed (n − 1 tokens, zeros after).

  Why not encode the shortened rows: removing position g leaves the forward
  states before g and the backward states after it as they were, so only
  n − 1 − g forward and g backward steps are new. Lane k runs the new
  forward steps of deletion k and then those of deletion n − 1 − k
  (n − 1 steps in all), and the backward steps of the same two in the other
  order; ⌊(L − 1) / 2⌋ lanes of L − 1 steps replace L − 2 rows of L steps
  per direction. The rows read the document's input projections, computed
  once: with D = 300 and hidden = 128 the encoder does about a seventh of
  the FLOPs of re-encoding, without the [L − 2, L, 8 * hidden] projection
  buffer that made that memory-bound.
  """
  width = embedded.shape[0]
  gates, h0, c0 = _document_states(params, embedded, length, unroll)
  n = length

  def reads(s, lanes, switch):  # the input position of each lane's step s, per direction
    first = s < switch
    return (jnp.where(first, lanes + s + 1, s + 1),
            jnp.where(first, n - 2 - lanes - s, lanes - 1 - (s - switch)))

  new = _lane_steps(params, gates, h0, c0, n, width - 1, lambda lanes: n - 1 - lanes, reads,
                    unroll)  # [L − 1, 2, K, H]
  lanes = new.shape[2]
  at = lambda q: jnp.clip(q, 0, width - 1)

  g = jnp.arange(1, width - 1)[:, None]  # the removed position of each row
  p = jnp.arange(width)[None, :]         # position in the shortened row
  lane = jnp.clip(jnp.minimum(g, n - 1 - g) - 1, 0, lanes - 1)
  steps = lambda s: jnp.clip(s, 0, width - 2)
  forward = jnp.where((p < g)[..., None], h0[0, at(p)],
                      new[steps(jnp.where(g <= n - 1 - g, p - g, p)), 0, lane])
  backward = jnp.where((p >= g)[..., None], h0[1, at(p + 1)],
                       new[steps(jnp.where(g >= n - 1 - g, g - 1 - p, n - 2 - p)), 1, lane])
  valid = (p < n - 1)[..., None].astype(embedded.dtype)
  return jnp.concatenate([forward, backward], axis=-1) * valid


def replacement_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray,
                       unroll: int = 1) -> jnp.ndarray:
  """Encoder states of every one-word replacement by PAD of one document
  (leave-one-out with mode='replace').

  Args:
    params: the encoder's params (`w_ih`, `w_hh`, `bias`).
    embedded: [L, D] the document's embeddings; length: scalar n (with SOS, EOS).

  Returns:
    [L − 2, L, 2 * hidden]: row g − 1 is what `BiLSTMEncoder` gives for the
    document with position g embedded as PAD (zero: its input projection is
    the bias alone).

  As `deletion_states`: the forward states before g and the backward states
  after it are the document's own; the forward steps from g on (n − g) and
  the backward steps from g down (g + 1) are new. Lane k runs those of rows
  k and n − 1 − k one after the other, n + 1 steps, switching at step n − k
  in both directions.
  """
  width = embedded.shape[0]
  gates, h0, c0 = _document_states(params, embedded, length, unroll)
  n = length

  def reads(s, lanes, switch):
    first = s < switch
    return (jnp.where(first, lanes + s, n - 1 - lanes + (s - switch)),
            jnp.where(first, n - 1 - lanes - s, lanes - (s - switch)))

  new = _lane_steps(params, gates, h0, c0, n, width + 1, lambda lanes: n - lanes, reads, unroll,
                    pad_at_switch=True)  # [L + 1, 2, K, H]
  lanes = new.shape[2]
  at = lambda q: jnp.clip(q, 0, width - 1)

  g = jnp.arange(1, width - 1)[:, None]  # the replaced position of each row
  p = jnp.arange(width)[None, :]
  lane = jnp.clip(jnp.minimum(g, n - 1 - g) - 1, 0, lanes - 1)
  steps = lambda s: jnp.clip(s, 0, width)
  forward = jnp.where((p < g)[..., None], h0[0, at(p)],
                      new[steps(jnp.where(g <= n - 1 - g, p - g, p + 1)), 0, lane])
  backward = jnp.where((p > g)[..., None], h0[1, at(p)],
                       new[steps(jnp.where(g >= n - 1 - g, g - p, n - p)), 1, lane])
  valid = (p < n)[..., None].astype(embedded.dtype)
  return jnp.concatenate([forward, backward], axis=-1) * valid


def _build(m, items: str) -> BiLSTMEncoder:
  del items  # J&W's layout only (`Encoder.in_han` is False)
  return BiLSTMEncoder(hidden=m.hidden_dim, unroll=m.lstm_unroll, biases=m.lstm_biases)


def _check(m) -> str | None:
  if m.lstm_unroll < 1:
    return 'model.lstm_unroll must be >= 1'
  if m.lstm_biases not in (1, 2):
    return 'model.lstm_biases must be 1 or 2 (PyTorch\'s nn.LSTM, J&W\'s: 2)'
  return None


BILSTM = ENCODERS.register(Encoder(
    name='bilstm', paper='jw', order=10, module=BiLSTMEncoder, build=_build,
    # lstm_unroll: larger unrolls measured slower on XLA:CPU. lstm_biases:
    # PyTorch's nn.LSTM (J&W): input and recurrent bias, each trained.
    keys=lambda dataset, variant: {'lstm_unroll': 1, 'lstm_biases': 2},
    added={'lstm_biases': 1},  # one summed bias vector before 2026-11-26
    output_size=lambda m: 2 * m.hidden_dim, check=_check,
    deletion_states=lambda module, p, e, n: deletion_states(p, e, n, module.unroll),
    replacement_states=lambda module, p, e, n: replacement_states(p, e, n, module.unroll)))
