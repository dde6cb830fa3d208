"""Attention scores s_t of hidden states (J&W's `model/modules/Attention.py`). No query: classification."""

import math

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.models.initializers import torch_uniform


class AdditiveScorer(nn.Module):
  """J&W `tanh` (Bahdanau-style): s_t = v . tanh(W1 h_t + b1), W1: H -> H/2.

  [B, L, H] -> [B, L] unmasked scores.
  """

  @nn.compact
  def __call__(self, hidden: jnp.ndarray) -> jnp.ndarray:
    size = hidden.shape[-1]
    u = jnp.tanh(nn.Dense(size // 2, kernel_init=torch_uniform(size),
                          bias_init=torch_uniform(size), name='projection')(hidden))
    return nn.Dense(1, use_bias=False, kernel_init=torch_uniform(size // 2), name='v')(u)[..., 0]


class DotScorer(nn.Module):
  """J&W `dot`: s_t = u . h_t / sqrt(H) with a learned query u.

  [B, L, H] -> [B, L] unmasked scores.
  """

  @nn.compact
  def __call__(self, hidden: jnp.ndarray) -> jnp.ndarray:
    size = hidden.shape[-1]
    u = nn.Dense(1, use_bias=False, kernel_init=torch_uniform(size), name='query')(hidden)
    return u[..., 0] / math.sqrt(size)


class ContextScorer(nn.Module):
  """S&S's `SimpleHanAttention` (Yang et al. 2016): u_t = tanh(W h_t + b),
  W: H -> H, s_t = u_t . c with a learned context vector c (S&S §3).

  [B, L, H] -> [B, L] unmasked scores.
  """

  @nn.compact
  def __call__(self, hidden: jnp.ndarray) -> jnp.ndarray:
    size = hidden.shape[-1]
    u = jnp.tanh(nn.Dense(size, kernel_init=torch_uniform(size), bias_init=torch_uniform(size),
                          name='projection')(hidden))
    return nn.Dense(1, use_bias=False, kernel_init=torch_uniform(size), name='context')(u)[..., 0]


class KeyDotScorer(nn.Module):
  """Scaled dot-product pooling with a key projection: s_t = u . (W h_t + b)
  / sqrt(H), a learned query u (Vaswani et al.'s q kᵀ/√d with k = W h).
  The same scores as `DotScorer` can be reached (u' = Wᵀu), but the product
  of two learned factors moves faster from the flat start.

  [B, L, H] -> [B, L] unmasked scores.
  """

  @nn.compact
  def __call__(self, hidden: jnp.ndarray) -> jnp.ndarray:
    size = hidden.shape[-1]
    keys = nn.Dense(size, kernel_init=torch_uniform(size), bias_init=torch_uniform(size),
                    name='key')(hidden)
    u = nn.Dense(1, use_bias=False, kernel_init=torch_uniform(size), name='query')(keys)
    return u[..., 0] / math.sqrt(size)


SCORERS = {'tanh': AdditiveScorer, 'dot': DotScorer, 'context': ContextScorer, 'key_dot': KeyDotScorer}
