"""Attention-weighted context -> logits (J&W `AttnDecoder`, `model/modules/Decoder.py`;
S&S's classifier, §3)."""

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.models import initializers


class Decoder(nn.Module):
  """hidden [B, L, H], α [B, L] -> logits: θ . Σ_t α_t h_t + b.

  Two classes: one logit [B] (J&W's sigmoid output). More: [B, classes]
  (S&S's linear layer and softmax). α is an input, not computed here: any α
  can be imposed, and the output differentiated with respect to it.
  `dropout` is S&S's classification-layer dropout, on the logits (AllenNLP's
  FeedForward applies it after its one linear layer), in training only.
  `initializer='allennlp'`: Xavier-uniform weights and zero bias (S&S's
  `.*linear_layers.*` initializers); 'torch': PyTorch's nn.Linear default.
  """
  classes: int = 2
  dropout: float = 0.0
  initializer: str = 'torch'

  @nn.compact
  def __call__(self, hidden: jnp.ndarray, alpha: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    size = hidden.shape[-1]
    context = jnp.einsum('bl,blh->bh', alpha, hidden)
    outputs = 1 if self.classes == 2 else self.classes
    if self.initializer == 'allennlp':
      kernel_init, bias_init = initializers.xavier_uniform(size, outputs), initializers.zeros
    else:
      kernel_init = bias_init = initializers.torch_uniform(size)
    logits = nn.Dense(outputs, kernel_init=kernel_init, bias_init=bias_init, name='output')(context)
    logits = logits[:, 0] if self.classes == 2 else logits
    if self.dropout > 0:
      logits = nn.Dropout(self.dropout)(logits, deterministic=deterministic)
    return logits
