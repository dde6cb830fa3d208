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
