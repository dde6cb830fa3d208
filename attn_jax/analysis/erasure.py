"""Serrano & Smith's erasure of attention weights (S&S §§4–5; reference §D).

Erasing a set of items sets their attention to zero and renormalises the
rest (L1); with every item erased the attention output is the zero vector.
The hidden states stay fixed: only the decoder re-runs. For a binary
sigmoid model the output distribution is [1 − ŷ, ŷ], the decision is
ŷ > 0.5 and the "decision function" is d = max(ŷ, 1 − ŷ).

* Single weight (§4): erase the top-attended item i*, or a random other
  item r; compare JS(p, q) and decision flips.
* Multi weight (§5): erase items one by one, cumulatively, in the order of
  a ranking, until the decision first flips; the fraction of items (and the
  attention mass) removed by then. Every prefix of every ranking is decoded
  in one vmapped call.
"""

from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.analysis.divergences import binary_js
from attn_jax.analysis.position_noise import position_uniform
from attn_jax.models import Model

RandomItem = Literal['paper', 'code']


def erase(alpha: jnp.ndarray, erased: jnp.ndarray) -> jnp.ndarray:
  """[..., L] α with `erased` items zeroed and the rest renormalised to sum 1
  (all erased -> all zero)."""
  kept = jnp.where(erased, 0.0, alpha)
  total = jnp.sum(kept, axis=-1, keepdims=True)
  return jnp.where(total > 0, kept / jnp.where(total > 0, total, 1.0), 0.0)


class SingleErasure(NamedTuple):
  top: jnp.ndarray          # [B] position of i* = argmax α (first maximum)
  other: jnp.ndarray        # [B] position of the random comparison item r
  js_top: jnp.ndarray       # [B] JS(p, q_{i*})
  js_other: jnp.ndarray     # [B] JS(p, q_r)
  flip_top: jnp.ndarray     # [B] bool, erasing i* flips the decision
  flip_other: jnp.ndarray   # [B] bool
  delta_alpha: jnp.ndarray  # [B] α_{i*} − α_r
  num_items: jnp.ndarray    # [B] n, the number of words (the tests need n > 1)


def single_weight_erasure(model: Model, params, hidden: jnp.ndarray, alpha: jnp.ndarray,
                          mask: jnp.ndarray, keys: jax.Array,
                          random_item: RandomItem = 'paper') -> SingleErasure:
  """S&S §4: erase the top item vs a random other item.

  Args:
    hidden: [B, L, H]; alpha: [B, L]; mask: [B, L] bool, the words
      (contiguous positions 1 .. n); keys: [B] PRNG keys.
    random_item: 'paper' draws r uniformly from the words other than i*;
      'code' reproduces S&S's code, which draws item index 1 .. n − 1
      (position 2 .. n here), so r may equal i* and is never the first word.
  """
  width = alpha.shape[1]
  positions = jnp.arange(width)
  n = jnp.sum(mask, axis=-1)
  top = jnp.argmax(jnp.where(mask, alpha, -jnp.inf), axis=-1)
  noise = jax.vmap(lambda k: position_uniform(k, (), width))(keys)
  if random_item == 'paper':
    candidates = mask & (positions[None, :] != top[:, None])
  elif random_item == 'code':
    candidates = mask & (positions[None, :] >= 2)
  else:
    raise ValueError(f"random_item must be 'paper' or 'code', not {random_item!r}")
  other = jnp.argmax(jnp.where(candidates, noise, -1.0), axis=-1)
  logits = model.decode(params, hidden, alpha)

  def erased_logits(item):
    return model.decode(params, hidden, erase(alpha, positions[None, :] == item[:, None]))

  z_top, z_other = erased_logits(top), erased_logits(other)
  take = lambda idx: jnp.take_along_axis(alpha, idx[:, None], axis=1)[:, 0]
  return SingleErasure(top, other, binary_js(logits, z_top), binary_js(logits, z_other),
                       (z_top > 0) != (logits > 0), (z_other > 0) != (logits > 0),
                       take(top) - take(other), n)


def decision_gradient(model: Model, params, hidden: jnp.ndarray, alpha: jnp.ndarray) -> jnp.ndarray:
  """∂d/∂α [B, L] with d = max(ŷ, 1 − ŷ) and α an independent input (no
  projection, no renormalisation in the graph; S&S §5.1)."""
  def total(a):
    probs = jax.nn.sigmoid(model.decode(params, hidden, a))
    return jnp.sum(jnp.maximum(probs, 1.0 - probs))
  return jax.grad(total)(alpha)


def ranking(importance: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """[B, L] scores -> [B, L] positions in descending order of importance,
  the words first (ties keep position order), everything else after."""
  return jnp.argsort(jnp.where(mask, -importance, jnp.inf), axis=-1, stable=True)


def random_rankings(keys: jax.Array, mask: jnp.ndarray, num: int) -> jnp.ndarray:
  """[B] keys -> [B, num, L] uniformly random orders of each document's words."""
  noise = jax.vmap(lambda k: position_uniform(k, (num,), mask.shape[1]))(keys)
  return jax.vmap(ranking, in_axes=(1, None), out_axes=1)(noise, mask)


class FlipPoint(NamedTuple):
  items: jnp.ndarray     # [B] items erased at the first flip; -1: never flips
  fraction: jnp.ndarray  # [B] items / n; -1 when it never flips
  mass: jnp.ndarray      # [B] original attention of the erased items; -1 when never


def erase_until_flip(model: Model, params, hidden: jnp.ndarray, alpha: jnp.ndarray,
                     mask: jnp.ndarray, order: jnp.ndarray) -> FlipPoint:
  """S&S §5: erase items cumulatively in `order` until the decision flips.

  Args:
    order: [B, L] positions, most important first, the n words before
      anything else (as `ranking` returns).

  The prefix of k erased items, for every k = 1 .. n, is decoded at once
  (an [L, B, L] stack of attention vectors); erasing all n gives the zero
  vector, whose flip counts. Documents that never flip get -1 (S&S §5.3
  exclude them).
  """
  width = alpha.shape[1]
  n = jnp.sum(mask, axis=-1)
  rank = jnp.argsort(order, axis=-1)  # rank[t]: when position t is erased (0-based)
  steps = jnp.arange(1, width + 1)
  erased = rank[None, :, :] < steps[:, None, None]  # [K, B, L]: first k erased
  prefixes = erase(alpha[None], erased & mask[None])
  logits = jax.vmap(lambda a: model.decode(params, hidden, a))(prefixes)  # [K, B]
  decision = model.decode(params, hidden, alpha) > 0
  flips = ((logits > 0) != decision[None, :]) & (steps[:, None] <= n[None, :])
  flipped = jnp.any(flips, axis=0)
  items = jnp.where(flipped, jnp.argmax(flips, axis=0) + 1, -1)
  ordered_alpha = jnp.take_along_axis(alpha, order, axis=1)
  mass = jnp.take_along_axis(jnp.cumsum(ordered_alpha, axis=1),
                             jnp.maximum(items - 1, 0)[:, None], axis=1)[:, 0]
  fraction = jnp.where(flipped, items / jnp.maximum(n, 1), -1.0)
  return FlipPoint(items, fraction.astype(alpha.dtype), jnp.where(flipped, mass, -1.0))


def removal_comparison(items_a, items_b, num_items) -> dict:
  """S&S's per-document efficiency comparison of ranking B against A.

  Among documents with n > 1 where at least one ranking flips the decision:
  B wins with fewer items, or when only B flips; ties are equal counts.
  Inputs are numpy [N] arrays (items: -1 = never flips).
  """
  items_a, items_b = np.asarray(items_a), np.asarray(items_b)
  usable = (np.asarray(num_items) > 1) & ((items_a > 0) | (items_b > 0))
  a = np.where(items_a > 0, items_a, np.inf)[usable]
  b = np.where(items_b > 0, items_b, np.inf)[usable]
  return {'n': int(usable.sum()), 'b_fewer': int(np.sum(b < a)),
          'a_fewer': int(np.sum(a < b)), 'ties': int(np.sum(a == b))}
