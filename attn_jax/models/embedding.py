"""Word embeddings."""

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.data.vocabulary import PAD


class Embedding(nn.Module):
  """[B, L] int32 token ids -> [B, L, dim] vectors; table init N(0, init_std²).

  PAD embeds to the zero vector whatever the table holds, so padding never
  changes an output and row 0 receives no gradient (J&W's `padding_idx=0`).
  """
  vocab_size: int
  dim: int
  init_std: float = 1.0  # PyTorch nn.Embedding's; the configs choose per dataset

  @nn.compact
  def __call__(self, tokens: jnp.ndarray) -> jnp.ndarray:
    def init(key, shape, dtype=jnp.float32):
      return nn.initializers.normal(self.init_std)(key, shape, dtype).at[PAD].set(0.0)

    table = self.param('table', init, (self.vocab_size, self.dim))
    return jnp.take(table, tokens, axis=0) * (tokens != PAD)[..., None].astype(table.dtype)
