"""Token-wise projection encoder (J&W `average`, §A.3; W&P's diagnostic MLP)."""

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.models import masks
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
