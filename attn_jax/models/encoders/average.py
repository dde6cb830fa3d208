"""Token-wise projection encoder (J&W `average`, `EncoderAverage`; W&P's diagnostic MLP)."""

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.core.registry import ENCODERS
from attn_jax.models import masks
from attn_jax.models.encoders.encoder import Encoder
from attn_jax.models.initializers import torch_uniform


class AverageEncoder(nn.Module):
  """[B, L, D] -> [B, L, hidden]: h_t = tanh(W e_t + b), no context.

  tanh, as J&W's code (`generate_average_config`); their paper says ReLU.
  """
  hidden: int = 128

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    del deterministic
    dim = embedded.shape[-1]
    hidden = jnp.tanh(nn.Dense(self.hidden, kernel_init=torch_uniform(dim),
                               bias_init=torch_uniform(dim), name='projection')(embedded))
    valid = masks.sequence_mask(lengths, embedded.shape[1])[..., None]
    return hidden * valid.astype(hidden.dtype)


def _states(params: dict, embedded: jnp.ndarray) -> jnp.ndarray:
  """[L, D] -> [L, H]: every position's state, unmasked."""
  return jnp.tanh(embedded @ params['projection']['kernel'] + params['projection']['bias'][None])


def deletion_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray) -> jnp.ndarray:
  """Encoder states of every one-word deletion of one document (J&W LOO, `remove_and_run`).

  Args:
    params: the encoder's params (`projection`).
    embedded: [L, D] the document's embeddings; length: scalar n (with SOS, EOS).

  Returns:
    [L − 2, L, hidden]: row g − 1 is what `AverageEncoder` gives for the
    document with position g removed (n − 1 tokens, zeros after).

  Why not encode the shortened rows: h_t depends on e_t alone, so removing
  position g only moves the states after it one place left; the document is
  projected once instead of L − 2 times.
  """
  width = embedded.shape[0]
  states = _states(params, embedded)
  g = jnp.arange(1, width - 1)[:, None]
  p = jnp.arange(width)[None, :]
  source = jnp.minimum(p + (p >= g).astype(p.dtype), width - 1)
  return jnp.where((p < length - 1)[..., None], states[source], 0.0)


def replacement_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray) -> jnp.ndarray:
  """[L, D], n -> [L − 2, L, hidden]: row g − 1 is what `AverageEncoder` gives
  with position g embedded as PAD (zero): the document's states, but
  tanh(b) at g."""
  width = embedded.shape[0]
  states = _states(params, embedded)
  g = jnp.arange(1, width - 1)[:, None]
  p = jnp.arange(width)[None, :]
  pad_state = jnp.tanh(params['projection']['bias'])
  rows = jnp.where((p == g)[..., None], pad_state[None, None], states[None])
  return jnp.where((p < length)[..., None], rows, 0.0)


def deletion_windows(params: dict, embedded: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
  """The states a deletion changes: none (radius 0). -> ([L − 2, 0, H], [L − 2, 0])."""
  width, hidden = embedded.shape[0], params['projection']['kernel'].shape[1]
  return (jnp.zeros((width - 2, 0, hidden), embedded.dtype),
          jnp.zeros((width - 2, 0), jnp.int32))


def replacement_windows(params: dict, embedded: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
  """The state a replacement changes: tanh(b) at the replaced position g.
  -> ([L − 2, 1, H], positions [L − 2, 1] = g)."""
  width = embedded.shape[0]
  pad_state = jnp.tanh(params['projection']['bias']).astype(embedded.dtype)
  return (jnp.broadcast_to(pad_state, (width - 2, 1, pad_state.shape[0])),
          jnp.arange(1, width - 1)[:, None])


def _windows(module: AverageEncoder, params: dict, embedded: jnp.ndarray, mode: str):
  del module
  windows = deletion_windows if mode == 'delete' else replacement_windows
  return (*windows(params, embedded), 0)


AVERAGE = ENCODERS.register(Encoder(
    name='average', paper='jw', order=30, module=AverageEncoder,
    build=lambda m, items: AverageEncoder(hidden=m.hidden_dim),
    deletion_states=lambda module, p, e, n: deletion_states(p, e, n),
    replacement_states=lambda module, p, e, n: replacement_states(p, e, n),
    variant_windows=_windows))
