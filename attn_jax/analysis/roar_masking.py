"""ROAR's masking (Hooker et al., NeurIPS 2019; for text, Madsen et al.,
Findings of EMNLP 2022): each document's top k % of words by an importance
measure replaced with a mask token, the document's length kept.

A measure's ranking of a document is stored as ranks ([B, L] int: 0 the most
important word), because the masks at growing k are nested: the words masked
at k are those whose rank is below k % of the document's words, so one
ranking serves every k. Recursive ROAR (Madsen et al. §3) ranks the words
masked at the previous k first (`word_ranks`'s `first`), then the others by
the scores of the model retrained at that k: the mask grows by the newly
top-ranked words only.

Only words (positions 1 .. length − 2) are ranked and masked: SOS, EOS, and
a QA or NLI row's query after EOS stay. Ties rank the earlier position
first, a NaN score ranks last (as `eraser_metrics`). How many words k % of
n words is: `fraction_count`, integer arithmetic, floor by default.
"""

from typing import Optional

import jax
import jax.numpy as jnp

from attn_jax.models import masks

__all__ = ['NOT_RANKED', 'fraction_count', 'mask_tokens', 'masked_words', 'word_ranks']

# The rank of a position that is not a word (and of filler rows): above any count.
NOT_RANKED = 2 ** 15 - 1


def word_ranks(scores: jnp.ndarray, lengths: jnp.ndarray, first: Optional[jnp.ndarray] = None) -> jnp.ndarray:
  """Each word's rank by `scores`, 0 the most important.

  Args:
    scores: [B, L] a measure's importance of each position (read on words only).
    lengths: [B] int, document lengths with SOS and EOS.
    first: [B, L] bool or None: words that rank before all others (the
      words masked at the previous k, for recursive ROAR), among themselves
      by position.

  Returns:
    [B, L] int32: the word's rank in 0 .. n − 1 (n = length − 2 words);
    `NOT_RANKED` off the words.
  """
  scores = jnp.asarray(scores)
  if not jnp.issubdtype(scores.dtype, jnp.floating):
    scores = scores.astype(jnp.float32)
  width = scores.shape[-1]
  words = masks.word_mask(lengths, width)
  key = jnp.where(jnp.isnan(scores), jnp.inf, -scores)
  key = jnp.where(key == 0, jnp.zeros_like(key), key)  # -0.0 and 0.0 tie
  group = jnp.where(words, 1, 2).astype(jnp.int32)  # words before other positions
  if first is not None:
    group = jnp.where(words & first, 0, group)
    key = jnp.where(words & first, jnp.zeros_like(key), key)  # among `first`: by position
  positions = jnp.broadcast_to(jnp.arange(width, dtype=jnp.int32), scores.shape)
  _, _, order = jax.lax.sort((group, key, positions), dimension=-1, is_stable=True, num_keys=2)
  ranks = jnp.argsort(order, axis=-1).astype(jnp.int32)
  return jnp.where(words, ranks, NOT_RANKED)


def fraction_count(words: jnp.ndarray, numerator, denominator, rounding: str = 'floor') -> jnp.ndarray:
  """How many of `words` words the fraction numerator / denominator is, in integers.

  Args:
    words: [...] int, words per document.
    numerator, denominator: the fraction as integers (traced values allowed:
      a model's own k on the trainer's model axis).
    rounding: 'floor' (as ERASER's code and `eraser_metrics`' default),
      'ceil' or 'round' (halves up).

  Returns:
    [...] int32 counts, at most `words`.
  """
  words = jnp.maximum(jnp.asarray(words, jnp.int32), 0)
  scaled = words * jnp.asarray(numerator, jnp.int32)
  q = jnp.asarray(denominator, jnp.int32)
  if rounding == 'floor':
    count = scaled // q
  elif rounding == 'ceil':
    count = (scaled + q - 1) // q
  elif rounding == 'round':
    count = (2 * scaled + q) // (2 * q)
  else:
    raise ValueError(f"rounding must be 'floor', 'ceil' or 'round', not {rounding!r}")
  return jnp.minimum(count, words).astype(jnp.int32)


def masked_words(ranks: jnp.ndarray, lengths: jnp.ndarray, numerator, denominator,
                 rounding: str = 'floor') -> jnp.ndarray:
  """The words ROAR masks at fraction numerator / denominator.

  Args:
    ranks: [B, L] int (`word_ranks`).
    lengths: [B] int, document lengths with SOS and EOS.
    numerator, denominator: k as integers (e.g. 3, 10 for 30 %).
    rounding: see `fraction_count`.

  Returns:
    [B, L] bool: True on the words of rank below k % of the document's words.
  """
  counts = fraction_count(jnp.asarray(lengths) - 2, numerator, denominator, rounding)
  return jnp.asarray(ranks) < counts[:, None]


def mask_tokens(tokens: jnp.ndarray, masked: jnp.ndarray, mask_id: int) -> jnp.ndarray:
  """[B, L] tokens with the masked positions replaced by `mask_id` (lengths unchanged)."""
  return jnp.where(masked, jnp.asarray(mask_id, tokens.dtype), tokens)
