"""Serrano & Smith's erasure of attention weights (S&S §§4–5; their `test_model.py`).

Erasing a set of items sets their attention to zero and renormalises the
rest (L1); with every item erased the attention output is the zero vector.
The hidden states stay fixed: only the decoder re-runs. The output
distribution is the model's (`Model.distribution`): [1 − ŷ, ŷ] for a binary
sigmoid model, the softmax over C classes otherwise; the decision is its
argmax and the "decision function" its largest probability. The items are
whatever the model's final attention layer weighs: words, or a HAN's
sentences.

* Single weight (§4): erase the top-attended item i*, or a random other
  item r; compare JS(p, q) and decision flips.
* Multi weight (§5): erase items one by one, cumulatively, in the order of
  a ranking, until the decision first flips; the fraction of items (and the
  attention mass) removed by then. Every prefix of every ranking is decoded
  from the real states with the erased α (`path='exact'`), or, where the
  model declares 'pooled_decode' (its decoder reads h and α only through
  Σ α_t h_t — S&S's "classifier from attention", S&S §2.1), in one vmapped call
  from suffix sums of α_t h_t decoded as one item of weight 1
  (`path='pooled'`). `check_fast_path` compares the two on a batch.
"""

import functools
from typing import Literal, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.analysis import contract, needs
from attn_jax.analysis.divergences import log_space_js
from attn_jax.analysis.position_noise import position_uniform
from attn_jax.models.interface import AttentionModel, ContractError, require

RandomItem = Literal['paper', 'code']
Path = Literal['auto', 'pooled', 'exact']


def erase(alpha: jnp.ndarray, erased: jnp.ndarray) -> jnp.ndarray:
  """[..., L] α with `erased` items zeroed and the rest renormalised to sum 1.

  S&S's erasure (§4): L1 renormalisation of what is kept; with every item
  erased (or no mass left) the result is all zero.

  Args:
    alpha: [..., L] attention.
    erased: [..., L] bool, the items to erase (broadcastable against `alpha`).

  Returns:
    [..., L] the erased, renormalised attention (all erased -> all zero).
  """
  kept = jnp.where(erased, 0.0, alpha)
  total = jnp.sum(kept, axis=-1, keepdims=True)
  return jnp.where(total > 0, kept / jnp.where(total > 0, total, 1.0), 0.0)


class SingleErasure(NamedTuple):
  """S&S §4's single-weight erasure of each document: the top item i* against a random other r.

  p is the output distribution with the model's α, q_i the one with item i
  erased (`erase`); JS in natural log.

  Attributes:
    top: [B] int, the position of i* = argmax α (first maximum), or the item passed as `top`.
    other: [B] int, the position of the random comparison item r.
    js_top: [B] JS(p, q_{i*}).
    js_other: [B] JS(p, q_r).
    flip_top: [B] bool, erasing i* flips the decision.
    flip_other: [B] bool, erasing r flips the decision.
    delta_alpha: [B] α_{i*} − α_r.
    num_items: [B] int, n, the number of words (items) (the tests need n > 1).
  """
  top: jnp.ndarray          # [B] position of i* = argmax α (first maximum)
  other: jnp.ndarray        # [B] position of the random comparison item r
  js_top: jnp.ndarray       # [B] JS(p, q_{i*})
  js_other: jnp.ndarray     # [B] JS(p, q_r)
  flip_top: jnp.ndarray     # [B] bool, erasing i* flips the decision
  flip_other: jnp.ndarray   # [B] bool
  delta_alpha: jnp.ndarray  # [B] α_{i*} − α_r
  num_items: jnp.ndarray    # [B] n, the number of words (the tests need n > 1)


def item_index(mask: jnp.ndarray) -> jnp.ndarray:
  """[B, L] bool -> [B, L] int: each item's index among its row's items (0-based)."""
  return jnp.cumsum(mask, axis=-1) - 1


def single_weight_erasure(model: AttentionModel, params, hidden: jnp.ndarray, alpha: jnp.ndarray,
                          mask: jnp.ndarray, keys: jax.Array,
                          random_item: RandomItem = 'paper',
                          top: jnp.ndarray | None = None) -> SingleErasure:
  """S&S §4: erase the top item vs a random other item.

  Decodes the fixed states with α, with i* erased and with r erased, and
  compares the output distributions (JS) and decisions (argmax).

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    hidden: [B, L, H] the states (`model.encode`).
    alpha: [B, L] the model's attention.
    mask: [B, L] bool, the items (contiguous: the words at 1 .. n, or a HAN's
      sentences at 0 .. n − 1).
    keys: [B] PRNG keys, one per document (r is drawn from them).
    random_item: 'paper' draws r uniformly from the items other than i*;
      'code' reproduces S&S's code, which draws item index 1 .. n − 1, so r
      may equal i* and is never the first item.
    top: [B] the item tested as i*; None: the top-attended item, S&S §4.
      App. A.3's Figures 12–13 test the top item of the gradient ranking
      and of the gradient × attention ranking (`top_item`).

  Returns:
    `SingleErasure`, each field [B]: top, other, js_top, js_other, flip_top,
    flip_other, delta_alpha, num_items.

  Raises:
    ValueError: `random_item` is neither 'paper' nor 'code'.
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['single_weight_erasure']`: 'imposes_attention');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  needs.check(model, 'single_weight_erasure')
  contract.check_states(model, params, hidden, mask)
  width = alpha.shape[1]
  positions = jnp.arange(width)
  n = jnp.sum(mask, axis=-1)
  if top is None:
    top = top_item(alpha, mask)
  noise = jax.vmap(lambda k: position_uniform(k, (), width))(keys)
  if random_item == 'paper':
    candidates = mask & (positions[None, :] != top[:, None])
  elif random_item == 'code':
    candidates = mask & (item_index(mask) >= 1)
  else:
    raise ValueError(f"random_item must be 'paper' or 'code', not {random_item!r}")
  other = jnp.argmax(jnp.where(candidates, noise, -1.0), axis=-1)
  log_p = model.log_distribution(model.decode(params, hidden, alpha))

  def erased(item):
    return model.log_distribution(
        model.decode(params, hidden, erase(alpha, positions[None, :] == item[:, None])))

  log_top, log_other = erased(top), erased(other)
  decision = jnp.argmax(log_p, axis=-1)
  take = lambda idx: jnp.take_along_axis(alpha, idx[:, None], axis=1)[:, 0]
  return SingleErasure(top, other, log_space_js(log_p, log_top), log_space_js(log_p, log_other),
                       jnp.argmax(log_top, axis=-1) != decision,
                       jnp.argmax(log_other, axis=-1) != decision,
                       take(top) - take(other), n)


def top_item(scores: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """[B, L] -> [B]: the item with the largest score (the first, on ties)."""
  return jnp.argmax(jnp.where(mask, scores, -jnp.inf), axis=-1)


def decision_gradient(model: AttentionModel, params, hidden: jnp.ndarray, alpha: jnp.ndarray) -> jnp.ndarray:
  """∂d/∂α [B, L], the gradient of the decision function with respect to attention (S&S §5.1).

  d is the largest output probability (S&S's exp(max x) / Σ exp(x);
  max(ŷ, 1 − ŷ) for a binary model) and α an independent input (no
  projection, no renormalisation in the graph). One backward pass of the
  batch sum of d.

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    hidden: [B, L, H] the states (`model.encode`), held fixed.
    alpha: [B, L] the attention the gradient is taken at.

  Returns:
    [B, L] ∂d/∂α.

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['decision_gradient']`: 'imposes_attention');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  needs.check(model, 'decision_gradient')
  contract.check_states(model, params, hidden, alpha=alpha)
  def total(a):
    return jnp.sum(jnp.exp(jnp.max(model.log_distribution(model.decode(params, hidden, a)), axis=-1)))
  return jax.grad(total)(alpha)


def ranking(importance: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """[B, L] scores -> [B, L] positions in descending order of importance.

  Args:
    importance: [B, L] scores (attention, gradients, ...).
    mask: [B, L] bool, the items to rank.

  Returns:
    [B, L] int positions: the items first, most important first (ties keep
    position order), everything else after.
  """
  return jnp.argsort(jnp.where(mask, -importance, jnp.inf), axis=-1, stable=True)


def random_rankings(keys: jax.Array, mask: jnp.ndarray, num: int) -> jnp.ndarray:
  """[B] keys -> [B, num, L] uniformly random orders of each document's items.

  Each position's draw depends only on its document's key and the position
  (`position_uniform`), not on the padded width.

  Args:
    keys: [B] PRNG keys, one per document.
    mask: [B, L] bool, the items.
    num: rankings per document (static).

  Returns:
    [B, num, L] int positions, as `ranking` returns: the items first, in
    random order, everything else after.
  """
  noise = jax.vmap(lambda k: position_uniform(k, (num,), mask.shape[1]))(keys)
  return jax.vmap(ranking, in_axes=(1, None), out_axes=1)(noise, mask)


class FlipPoint(NamedTuple):
  """Where erasing items in a ranking's order first flips each document's decision (S&S §5).

  Attributes:
    items: [B] int, the items erased at the first flip; -1: never flips.
    fraction: [B] items / n; -1 when it never flips.
    mass: [B] the original attention of the erased items; -1 when it never flips.
  """
  items: jnp.ndarray     # [B] items erased at the first flip; -1: never flips
  fraction: jnp.ndarray  # [B] items / n; -1 when it never flips
  mass: jnp.ndarray      # [B] original attention of the erased items; -1 when never


def prefix_contexts(hidden: jnp.ndarray, alpha: jnp.ndarray, order: jnp.ndarray) -> jnp.ndarray:
  """[K = L, B, H]: the attention output Σ α'_t h_t once the first k items of
  `order` are erased and the rest renormalised, k = 1 .. L (zero once all
  the mass is gone).

  The kept part is a suffix of the order, so its sums are reverse
  cumulative sums: no prefix is subtracted from a total, and nothing
  cancels when little mass is left.
  """
  ordered_alpha = jnp.take_along_axis(alpha, order, axis=1)               # [B, L]
  ordered_hidden = jnp.take_along_axis(hidden, order[..., None], axis=1)  # [B, L, H]
  weighted = ordered_alpha[..., None] * ordered_hidden
  suffix = jnp.flip(jnp.cumsum(jnp.flip(weighted, 1), axis=1), 1)      # [B, L, H]: Σ_{j >= k}
  mass = jnp.flip(jnp.cumsum(jnp.flip(ordered_alpha, 1), axis=1), 1)    # [B, L]
  # After erasing k items the kept suffix starts at index k; k = L keeps nothing.
  kept = jnp.concatenate([suffix[:, 1:], jnp.zeros_like(suffix[:, :1])], axis=1)
  kept_mass = jnp.concatenate([mass[:, 1:], jnp.zeros_like(mass[:, :1])], axis=1)
  context = jnp.where(kept_mass[..., None] > 0,
                      kept / jnp.where(kept_mass > 0, kept_mass, 1.0)[..., None], 0.0)
  return jnp.swapaxes(context, 0, 1)


def resolve_path(model: AttentionModel, path: Path = 'auto') -> str:
  """'pooled' where the model declares 'pooled_decode' (and `path` allows
  it), else 'exact'; asking for 'pooled' without the capability is refused."""
  if path == 'exact':
    return 'exact'
  if path not in ('auto', 'pooled'):
    raise ValueError(f"path must be 'auto', 'pooled' or 'exact', not {path!r}")
  if model.has('pooled_decode'):
    return 'pooled'
  if path == 'pooled':
    require(model, "erase-until-flip's pooled path", 'pooled_decode')
  return 'exact'


def prefix_logits(model: AttentionModel, params, hidden, alpha: jnp.ndarray, mask: jnp.ndarray,
                  order: jnp.ndarray, path: Path = 'auto', chunk: int = 16) -> jnp.ndarray:
  """[K = L, B] (or [K, B, C]) logits once the first k items of `order` are erased, k = 1 .. L.

  `alpha` is zeroed outside `mask` first. Used by `erase_until_flip`.

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    hidden: the states (`model.encode`).
    alpha: [B, L] the model's attention.
    mask: [B, L] bool, the items.
    order: [B, L] positions, as `ranking` returns.
    path: 'exact' decodes the real states with the erased α (`erase`), `chunk`
      prefixes at a time; 'pooled' decodes each prefix's context Σ α'_t h_t
      as one item of weight 1 (`prefix_contexts`), valid only where the
      decoder reads the states through that sum alone ('pooled_decode');
      'auto' takes 'pooled' where the model declares it.
    chunk: the exact path's prefixes decoded at a time.

  Returns:
    [K = L, B] logits of a binary model ([K, B, C] with C classes); row k − 1
    is the prefix with k items erased.

  Raises:
    ValueError: `path` is not 'auto', 'pooled' or 'exact'.
    InterfaceError: `path='pooled'` for a model without 'pooled_decode'.
  """
  alpha = jnp.where(mask, alpha, 0.0)
  width = alpha.shape[1]
  if resolve_path(model, path) == 'pooled':
    contexts = prefix_contexts(hidden, alpha, order)  # [K, B, H]
    ones = jnp.ones(alpha.shape[:1] + (1,), alpha.dtype)
    return jax.vmap(lambda c: model.decode(params, c[:, None, :], ones))(contexts)
  rank = jnp.argsort(order, axis=1)  # [B, L]: each position's place in the order

  def erased_first(k):
    return model.decode(params, hidden, erase(alpha, mask & (rank < k)))

  return jax.lax.map(erased_first, jnp.arange(1, width + 1), batch_size=min(chunk, width))


def erase_until_flip(model: AttentionModel, params, hidden, alpha: jnp.ndarray,
                     mask: jnp.ndarray, order: jnp.ndarray, path: Path = 'auto') -> FlipPoint:
  """S&S §5: erase items cumulatively in `order` until the decision flips.

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    hidden: the states (`model.encode`); alpha: [B, L]; mask: [B, L] bool.
    order: [B, L] positions, most important first, the n items before
      anything else (as `ranking` returns).
    path: how each prefix is decoded (`prefix_logits`): 'auto' (default)
      takes the pooled prefix sums only where the model declares
      'pooled_decode', and otherwise decodes the real states.

  Returns:
    `FlipPoint` [B]: erasing all n items counts (pooled: the zero context);
    documents that never flip get -1 (S&S §5.3 exclude them).

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['erase_until_flip']`: 'imposes_attention'), or
      `path='pooled'` without 'pooled_decode'; `ContractError` (one): its
      pieces or its pooled path break the interface on the first batch.
    ValueError: `path` is not 'auto', 'pooled' or 'exact'.
  """
  needs.check(model, 'erase_until_flip')
  contract.check_states(model, params, hidden, mask)
  if resolve_path(model, path) == 'pooled' and contract.concrete(params, hidden, alpha, mask, order):
    contract.once(contract.key(model, 'pooled prefixes'),
                  lambda: check_fast_path(model, params, hidden, alpha, mask, order))
  width = alpha.shape[1]
  n = jnp.sum(mask, axis=-1)
  logits = prefix_logits(model, params, hidden, alpha, mask, order, path)
  decisions = jnp.argmax(model.log_distribution(logits), axis=-1)  # [K, B]
  decision = jnp.argmax(model.log_distribution(model.decode(params, hidden, alpha)), axis=-1)
  steps = jnp.arange(1, width + 1)
  flips = (decisions != decision[None, :]) & (steps[:, None] <= n[None, :])
  flipped = jnp.any(flips, axis=0)
  items = jnp.where(flipped, jnp.argmax(flips, axis=0) + 1, -1)
  ordered_alpha = jnp.take_along_axis(alpha, order, axis=1)
  mass = jnp.take_along_axis(jnp.cumsum(ordered_alpha, axis=1),
                             jnp.maximum(items - 1, 0)[:, None], axis=1)[:, 0]
  fraction = jnp.where(flipped, items / jnp.maximum(n, 1), -1.0)
  return FlipPoint(items, fraction.astype(alpha.dtype), jnp.where(flipped, mass, -1.0))


@functools.partial(jax.jit, static_argnums=0)
def _pooled_gap(model, params, hidden, alpha, mask, order, rtol):
  """max over real prefixes of |pooled − exact| − rtol·|exact| (a scalar)."""
  pooled = prefix_logits(model, params, hidden, alpha, mask, order, 'pooled')
  exact = prefix_logits(model, params, hidden, alpha, mask, order, 'exact')
  n = jnp.sum(mask, axis=-1)
  live = jnp.arange(1, alpha.shape[1] + 1)[:, None] <= n[None, :]  # [K, B]: real prefixes
  live = live.reshape(live.shape + (1,) * (exact.ndim - 2))
  return jnp.max(jnp.where(live, jnp.abs(pooled - exact) - rtol * jnp.abs(exact), 0.0))


def check_fast_path(model: AttentionModel, params, hidden, alpha: jnp.ndarray, mask: jnp.ndarray,
                    order: Optional[jnp.ndarray] = None, *, rtol: float = 1e-3,
                    atol: float = 1e-3) -> None:
  """Compares erase-until-flip's pooled path with the exact one on a batch
  (every prefix of `order`, by default the attention ranking), where the
  model declares 'pooled_decode'; nothing to check otherwise.

  `erase_until_flip` runs it itself, once per model, where it takes the
  pooled path on concrete inputs (`contract.once`).

  Raises:
    ContractError: some prefix's logits differ beyond `atol + rtol·|z|`:
      the decoder reads more than Σ α h (a residual, another head), so the
      declared capability does not hold.
  """
  if resolve_path(model) != 'pooled':
    return
  order = ranking(alpha, mask) if order is None else order
  worst = float(_pooled_gap(model, params, hidden, alpha, mask, order, rtol))
  if not worst <= atol:
    raise ContractError(
        f"erase-until-flip's pooled path (one item of weight 1 per prefix) differs from decoding the real "
        f'states by up to {worst + atol:.3g} in a logit on this batch: {type(model).__name__} declares '
        "'pooled_decode' but its decoder reads more than Σ α h; remove that capability (the exact path runs)")


def removal_comparison(items_a, items_b, num_items) -> dict:
  """S&S's per-document efficiency comparison of ranking B against A.

  Among documents with n > 1 where at least one ranking flips the decision:
  B wins with fewer items, or when only B flips; ties are equal counts. Runs
  on the host (numpy).

  Args:
    items_a: [N] items erased at the first flip under ranking A
      (`FlipPoint.items`; -1 = never flips).
    items_b: [N] the same under ranking B.
    num_items: [N] n, each document's number of items.

  Returns:
    dict of ints: 'n' (the documents compared), 'b_fewer', 'a_fewer' and 'ties'.
  """
  items_a, items_b = np.asarray(items_a), np.asarray(items_b)
  usable = (np.asarray(num_items) > 1) & ((items_a > 0) | (items_b > 0))
  a = np.where(items_a > 0, items_a, np.inf)[usable]
  b = np.where(items_b > 0, items_b, np.inf)[usable]
  return {'n': int(usable.sum()), 'b_fewer': int(np.sum(b < a)),
          'a_fewer': int(np.sum(a < b)), 'ties': int(np.sum(a == b))}
