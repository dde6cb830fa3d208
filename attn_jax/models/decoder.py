"""Attention-weighted context -> logit (J&W `AttnDecoder`, §A.4)."""

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.models.initializers import torch_uniform


class Decoder(nn.Module):
  """hidden [B, L, H], α [B, L] -> logit [B]: θ . Σ_t α_t h_t + b.

  α is an input, not computed here: any α can be imposed, and the output
  differentiated with respect to it.
  """

  @nn.compact
  def __call__(self, hidden: jnp.ndarray, alpha: jnp.ndarray) -> jnp.ndarray:
    size = hidden.shape[-1]
    context = jnp.einsum('bl,blh->bh', alpha, hidden)
    return nn.Dense(1, kernel_init=torch_uniform(size), bias_init=torch_uniform(size),
                    name='output')(context)[:, 0]
