"""Leave-one-out outputs under softmax attention when a variant changes only
a window of states (the CNN and Average encoders: capability 'variant_windows').

The decoder reads the context c = Σ_p α_p h_p / (softmax: α_p ∝ exp s_p over
the attended positions), and the score s_p is a function of h_p alone. A
variant that leaves out word g keeps the document's own states (and so its
own scores) left of a window around g and, shifted by one place for a
deletion, right of it. So

    c₋g = (Σ_{left} e^{s_p} h_p + Σ_{window} e^{s_p} h_p + Σ_{right} e^{s_p} h_p)
          / (the same sums of e^{s_p}),

and the left and right sums are prefix and suffix sums over the document,
computed once. Each of its L − 2 variants then scores and sums only its
window (2r states for a CNN of radius r, none for the Average encoder)
instead of attending over all L positions: O(L·H) per document, not O(L²·H).

The sums carry their own maximum score (log-sum-exp style), so no exponent
overflows and a dominant word that is left out does not leave the rest to
cancellation: nothing is ever subtracted.
"""

import jax
import jax.numpy as jnp

from attn_jax.data.vocabulary import PAD
from attn_jax.models import projections
from attn_jax.models.interface import AttentionModel

# Score of an unattended position: finite, so two of them combine without NaN.
_NONE = -1e30


def applies(model: AttentionModel) -> bool:
  """Whether `variant_probs` computes this model's leave-one-out: it must
  declare that a variant changes a window of states, that its scores are
  per state and projected by softmax, and that its decoder reads the
  context Σ α h alone."""
  return (all(model.has(c) for c in ('variant_windows', 'scores', 'pooled_decode'))
          and getattr(model, 'project', None) is projections.softmax)


def _combine(a, b):
  """Two (max score m, Σ e^{s − m}, Σ e^{s − m} h) -> the pair's."""
  (m1, z1, v1), (m2, z2, v2) = a, b
  m = jnp.maximum(m1, m2)
  c1, c2 = jnp.exp(m1 - m), jnp.exp(m2 - m)
  return m, z1 * c1 + z2 * c2, v1 * c1[..., None] + v2 * c2[..., None]


def _window_sums(scores, attended, states):
  """[G, P] scores and mask, [G, P, H] states -> each row's (m, z, v)."""
  m = jnp.max(jnp.where(attended, scores, _NONE), axis=-1, initial=_NONE)
  e = jnp.where(attended, jnp.exp(jnp.where(attended, scores, m[:, None]) - m[:, None]), 0.0)
  return m, e.sum(-1), jnp.einsum('gp,gph->gh', e, states)


def variant_probs(model: AttentionModel, params, tokens: jnp.ndarray, length: jnp.ndarray,
                  mode: str) -> jnp.ndarray:
  """ŷ of every one-word variant of one document.

  Args:
    tokens: [L] one document's tokens; length: scalar n (with SOS, EOS).
    mode: 'delete' (J&W) or 'replace' (by PAD).

  Returns:
    [L − 2]: row g − 1 is ŷ with position g left out (meaningless beyond the words).
  """
  width = tokens.shape[0]
  embedded = model.embed(params, tokens[None])[0]
  own = model.encode(params, embedded[None], length[None])[0]                # [L, H]
  own_scores = model.score(params, own[None])[0]
  own_attended = model.attention_mask(tokens[None], length[None])[0]
  leaves = (jnp.where(own_attended, own_scores, _NONE), own_attended.astype(own.dtype),
            jnp.where(own_attended[:, None], own, 0.0))
  empty = (jnp.full((1,), _NONE, own.dtype), jnp.zeros((1,), own.dtype),
           jnp.zeros((1, own.shape[1]), own.dtype))
  inclusive = jax.lax.associative_scan(_combine, leaves)
  before = jax.tree.map(lambda e, x: jnp.concatenate([e, x]), empty, inclusive)  # [0, a), a = 0 .. L
  inclusive = jax.lax.associative_scan(_combine, leaves, reverse=True)
  after = jax.tree.map(lambda x, e: jnp.concatenate([x, e]), inclusive, empty)   # [b, L), b = 0 .. L

  states, p, radius = model.variant_windows(params, embedded, mode)
  g = jnp.arange(1, width - 1)[:, None]
  if mode == 'delete':  # the shortened row: n − 1 tokens, position p is the document's p + (p >= g)
    source = jnp.clip(p + (p >= g).astype(p.dtype), 0, width - 1)
    attended = (p >= 1) & (p <= length - 3) & (tokens[source] != PAD)
  else:
    attended = (p >= 1) & (p <= length - 2) & (p != g) & (tokens[jnp.clip(p, 0, width - 1)] != PAD)
  window = _window_sums(model.score(params, states), attended, states)
  left = jax.tree.map(lambda x: x[jnp.clip(g[:, 0] - radius, 0, width)], before)
  right = jax.tree.map(lambda x: x[jnp.clip(g[:, 0] + radius + 1, 0, width)], after)
  _, z, v = _combine(_combine(left, window), right)
  context = v / jnp.maximum(z, jnp.finfo(z.dtype).tiny)[:, None]  # nothing attended: 0, as softmax
  logits = model.decode(params, context[:, None, :], jnp.ones((width - 2, 1), context.dtype))
  return jax.nn.sigmoid(logits)
