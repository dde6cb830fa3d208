"""Attention-weighted context -> logits (J&W `AttnDecoder`, §A.4; S&S's classifier, §A.6)."""

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.models.initializers import torch_uniform


class Decoder(nn.Module):
  """hidden [B, L, H], α [B, L] -> logits: θ . Σ_t α_t h_t + b.

  Two classes: one logit [B] (J&W's sigmoid output). More: [B, classes]
  (S&S's linear layer and softmax). α is an input, not computed here: any α
  can be imposed, and the output differentiated with respect to it.
  `dropout` is S&S's classification-layer dropout, on the logits (AllenNLP's
  FeedForward applies it after its one linear layer), in training only.
  """
  classes: int = 2
  dropout: float = 0.0

  @nn.compact
  def __call__(self, hidden: jnp.ndarray, alpha: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    size = hidden.shape[-1]
    context = jnp.einsum('bl,blh->bh', alpha, hidden)
    outputs = 1 if self.classes == 2 else self.classes
    logits = nn.Dense(outputs, kernel_init=torch_uniform(size), bias_init=torch_uniform(size),
                      name='output')(context)
    logits = logits[:, 0] if self.classes == 2 else logits
    if self.dropout > 0:
      logits = nn.Dropout(self.dropout)(logits, deterministic=deterministic)
    return logits
