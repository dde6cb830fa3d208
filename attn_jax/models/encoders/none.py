"""No encoder (S&S's `noenc`): the attention reads the embeddings themselves."""

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.core.registry import ENCODERS
from attn_jax.models import masks
from attn_jax.models.encoders.encoder import Encoder


class NoEncoder(nn.Module):
  """S&S's `noenc`: the inputs themselves, zero outside the items."""
  items: str = 'words'

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    del deterministic
    return embedded * masks.item_mask(lengths, embedded.shape[1], self.items)[..., None].astype(
        embedded.dtype)


NONE = ENCODERS.register(Encoder(
    name='none', paper='ss', order=60, module=NoEncoder, in_han=True,
    build=lambda m, items: NoEncoder(items=items), output_size=lambda m: m.embed_dim))
