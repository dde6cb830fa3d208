"""Bidirectional GRU encoder (S&S's `rnn`: biGRU, 50 per direction; their `configs/*.jsonnet`)."""

import flax.linen as nn
import jax
import jax.numpy as jnp

from attn_jax.core.registry import ENCODERS
from attn_jax.models import initializers, masks
from attn_jax.models.encoders.encoder import Encoder
from attn_jax.models.encoders.bilstm import reverse_within_length


def gru_scan(gates_x: jnp.ndarray, w_hh: jnp.ndarray, b_hh: jnp.ndarray) -> jnp.ndarray:
  """Runs Z independent GRUs (PyTorch's equations) whose input projections
  are already computed.

  Args:
    gates_x: [L, Z, B, 3H] time-major `x_t W_ih + b_ih` (gate order r, z, n).
    w_hh: [Z, H, 3H]. b_hh: [Z, 3H].

  Returns:
    [L, Z, B, H] states from zero initial states:
    r = σ(x_r + h W_hr + b_hr), z = σ(x_z + h W_hz + b_hz),
    n = tanh(x_n + r ⊙ (h W_hn + b_hn)), h' = (1 − z) ⊙ n + z ⊙ h.
  """
  _, num, batch, three_h = gates_x.shape
  hidden = three_h // 3

  def step(h, gx):
    gh = jnp.einsum('zbh,zhg->zbg', h, w_hh) + b_hh[:, None, :]
    r = jax.nn.sigmoid(gx[..., :hidden] + gh[..., :hidden])
    z = jax.nn.sigmoid(gx[..., hidden:2 * hidden] + gh[..., hidden:2 * hidden])
    n = jnp.tanh(gx[..., 2 * hidden:] + r * gh[..., 2 * hidden:])
    h = (1.0 - z) * n + z * h
    return h, h

  return jax.lax.scan(step, jnp.zeros((num, batch, hidden), gates_x.dtype), gates_x)[1]


class BiGRUEncoder(nn.Module):
  """[B, L, D] inputs, [B] lengths -> [B, L, 2 * hidden] states.

  Each direction runs over exactly the first `lengths[b]` positions of its
  row (PyTorch's packed sequences: the backward direction starts at the
  row's last position), so padding never changes an output; outputs at
  padding are zero. `items='words'` is J&W's layout (lengths count SOS and
  EOS, which the GRU reads as J&W's LSTM does); `items='all'` a plain
  sequence (HAN's sentences and documents). `initializer='torch'`: U(±1/√hidden),
  PyTorch's; 'allennlp': S&S's initializer list (`initializers`).
  """
  hidden: int = 50
  items: str = 'words'
  initializer: str = 'torch'

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    del deterministic  # dropout is applied before the encoder (`AttentionClassifier`)
    dim, three_h = embedded.shape[-1], 3 * self.hidden
    if self.initializer == 'allennlp':
      inits = (initializers.xavier_uniform(dim, three_h), initializers.orthogonal_per_direction,
               initializers.zeros, initializers.lstm_hidden_bias)
    else:
      inits = (initializers.torch_uniform(self.hidden),) * 4
    w_ih = self.param('w_ih', inits[0], (2, dim, three_h))
    w_hh = self.param('w_hh', inits[1], (2, self.hidden, three_h))
    b_ih = self.param('b_ih', inits[2], (2, three_h))
    b_hh = self.param('b_hh', inits[3], (2, three_h))
    gates = jnp.einsum('bld,zdg->blzg', embedded, w_ih) + b_ih[None, None]
    gates_x = jnp.stack([gates[:, :, 0], reverse_within_length(gates[:, :, 1], lengths)], axis=0)
    states = gru_scan(jnp.transpose(gates_x, (2, 0, 1, 3)), w_hh, b_hh)  # [L, 2, B, H]
    forward = jnp.swapaxes(states[:, 0], 0, 1)
    backward = reverse_within_length(jnp.swapaxes(states[:, 1], 0, 1), lengths)
    valid = masks.sequence_mask(lengths, embedded.shape[1])[..., None]
    return jnp.concatenate([forward, backward], axis=-1) * valid.astype(embedded.dtype)


BIGRU = ENCODERS.register(Encoder(
    name='bigru', paper='ss', order=50, module=BiGRUEncoder, in_han=True,
    build=lambda m, items: BiGRUEncoder(hidden=m.hidden_dim, items=items, initializer=m.get('init', 'torch')),
    output_size=lambda m: 2 * m.hidden_dim))
