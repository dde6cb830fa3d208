"""Projections of scores onto the probability simplex over the words.

All take `scores` [..., L] and a bool `mask` [..., L] (True = may receive
attention) and return α [..., L] with α = 0 where the mask is False and
sum 1 over the rest (all zeros for a row with nothing unmasked). Masked
entries never enter the arithmetic, so gradients stay finite (the "double
where" pattern).
"""

import functools
from typing import Callable

import jax
import jax.numpy as jnp


def softmax(scores: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """exp(s_t) / sum exp(s) over unmasked t (Meister et al. eq. 1)."""
  top = jnp.max(jnp.where(mask, scores, -jnp.inf), axis=-1, keepdims=True)
  top = jax.lax.stop_gradient(jnp.where(jnp.isfinite(top), top, 0.0))
  shifted = jnp.where(mask, scores - top, 0.0)
  e = jnp.where(mask, jnp.exp(shifted), 0.0)
  return e / jnp.maximum(jnp.sum(e, axis=-1, keepdims=True), jnp.finfo(e.dtype).tiny)


def sparsemax(scores: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """Euclidean projection onto the simplex, [s - τ]_+ (Martins & Astudillo
  2016; Meister et al. eq. 2). Sort-based, exact; differentiable almost
  everywhere with the usual Jacobian."""
  width = scores.shape[-1]
  dtype = scores.dtype
  ordered = -jnp.sort(-jnp.where(mask, scores, -jnp.inf), axis=-1)
  count = jnp.sum(mask, axis=-1, keepdims=True).astype(dtype)
  k = jnp.arange(1, width + 1, dtype=dtype)
  k = k.reshape((1,) * (scores.ndim - 1) + (width,))
  rank_valid = k <= count
  ordered = jnp.where(rank_valid, ordered, 0.0)
  cumulative = jnp.cumsum(ordered, axis=-1)
  support = rank_valid & (1.0 + k * ordered > cumulative)
  k_star = jnp.maximum(jnp.sum(support, axis=-1, keepdims=True), 1)
  tau = (jnp.take_along_axis(cumulative, k_star - 1, axis=-1) - 1.0) / k_star.astype(dtype)
  return jnp.where(mask, jnp.maximum(jnp.where(mask, scores, 0.0) - tau, 0.0), 0.0)


def sparsegen_lin(scores: jnp.ndarray, mask: jnp.ndarray, lam: float) -> jnp.ndarray:
  """sparsegen-lin (Laha et al. 2018; Meister et al. eq. 3) = sparsemax(s / (1 - λ)).

  λ < 1; λ = 0 is sparsemax, λ -> 1 sparser, λ -> -inf uniform.
  """
  return sparsemax(scores / (1.0 - lam), mask)


def uniform(scores: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """1 / n on the n unmasked positions, whatever the scores (W&P §3.2)."""
  weights = mask.astype(scores.dtype)
  return weights / jnp.maximum(jnp.sum(weights, axis=-1, keepdims=True), 1.0)


NAMES = ('softmax', 'sparsemax', 'sparsegen', 'uniform')


def get(name: str, sparsegen_lambda: float = 0.0) -> Callable[[jnp.ndarray, jnp.ndarray], jnp.ndarray]:
  """The projection called `name` as a function of (scores, mask)."""
  if name == 'sparsegen':
    return functools.partial(sparsegen_lin, lam=sparsegen_lambda)
  return {'softmax': softmax, 'sparsemax': sparsemax, 'uniform': uniform}[name]
