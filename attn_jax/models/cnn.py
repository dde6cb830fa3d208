"""Convolutional encoder (J&W `cnn`, §A.3)."""

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from attn_jax.models import masks
from attn_jax.models.initializers import torch_uniform


class CNNEncoder(nn.Module):
  """[B, L, D], [B] lengths -> [B, L, hidden]: 'same' convolutions, ReLU.

  One convolution per kernel size with hidden / len(kernel_sizes) filters
  each, concatenated. Padding embeds to zero, so the zero 'same' padding at
  a row's end is what PyTorch's padding does. Outputs outside the words
  (SOS, EOS, padding) are zeroed, as J&W's `(1 - mask)`.
  """
  hidden: int = 128
  kernel_sizes: Sequence[int] = (1, 3, 5, 7)

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    del deterministic
    dim = embedded.shape[-1]
    filters = self.hidden // len(self.kernel_sizes)
    outputs = [
        nn.Conv(filters, (k,), padding='SAME', kernel_init=torch_uniform(dim * k),
                bias_init=torch_uniform(dim * k), name=f'conv{k}')(embedded)
        for k in self.kernel_sizes]
    hidden = jax.nn.relu(jnp.concatenate(outputs, axis=-1))
    words = masks.word_mask(lengths, embedded.shape[1])[..., None]
    return hidden * words.astype(hidden.dtype)


def has_deletion_path(encoder: CNNEncoder) -> bool:
  """`deletion_states` assumes 'SAME' padding of (k − 1) / 2 on each side."""
  return all(k % 2 == 1 for k in encoder.kernel_sizes)


def deletion_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray,
                    kernel_sizes: Sequence[int]) -> jnp.ndarray:
  """Encoder states of every one-word deletion of one document (J&W LOO, §B.2).

  Args:
    params: the encoder's params (`conv{k}` per kernel size, all odd).
    embedded: [L, D] the document's embeddings; length: scalar n (with SOS, EOS).

  Returns:
    [L − 2, L, hidden]: row g − 1 is what `CNNEncoder` gives for the document
    with position g removed (n − 1 tokens, zeros outside its words).

  Why not encode the shortened rows: a width-k convolution (k = 2r + 1) at
  position p reads p − r .. p + r, so after removing position g the outputs
  before g − r are the document's own and those from g + r on are its
  outputs one place right. Only the 2r positions between are new: each
  deletion convolves 2r windows instead of L.
  """
  width, dim = embedded.shape
  g = jnp.arange(1, width - 1)[:, None]  # the removed position of each row
  p = jnp.arange(width)[None, :]         # position in the shortened row
  outputs = []
  for k in kernel_sizes:
    r = (k - 1) // 2
    kernel, bias = params[f'conv{k}']['kernel'], params[f'conv{k}']['bias']  # [k, D, F], [F]
    # The document's own outputs at 0 .. L (one past the end, for the shift).
    padded = jnp.pad(embedded, ((r, r + 1), (0, 0)))
    taps = jnp.stack([padded[j:j + width + 1] for j in range(k)], axis=1)  # [L + 1, k, D]
    own = jnp.einsum('lkd,kdf->lf', taps, kernel) + bias[None]
    # The 2r new outputs of each deletion, at p = g − r .. g + r − 1: their
    # taps read the shortened row q = p + j − r, i.e. the document at q + (q >= g).
    if r:
      at = g[:, :, None] + jnp.arange(-r, r)[None, :, None] + jnp.arange(-r, r + 1)[None, None, :]
      source = at + (at >= g[:, :, None]).astype(at.dtype)
      inside = (at >= 0) & (source < width)
      window = jnp.where(inside[..., None], embedded[jnp.clip(source, 0, width - 1)], 0.0)
      new = jnp.einsum('gwkd,kdf->gwf', window, kernel) + bias[None, None]  # [L − 2, 2r, F]
      offset = jnp.clip(p - (g - r), 0, 2 * r - 1)
      in_window = (p >= g - r) & (p < g + r)
      shifted = own[jnp.minimum(p + 1, width)]
      out = jnp.where((p < g - r)[..., None], own[p], shifted)
      out = jnp.where(in_window[..., None], jnp.take_along_axis(new, offset[..., None], axis=1), out)
    else:
      out = own[p + (p >= g).astype(p.dtype)]
    outputs.append(out)
  hidden = jax.nn.relu(jnp.concatenate(outputs, axis=-1))
  words = (p >= 1) & (p < length - 2)
  return hidden * words[..., None].astype(hidden.dtype)
