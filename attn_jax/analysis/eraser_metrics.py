"""ERASER's erasure metrics (DeYoung et al., ACL 2020, §4.2): comprehensiveness, sufficiency, AOPC.

For a document x, the class ŷ the model predicts on all of x, and r_k the
top k % of x's words by an importance measure:

    comprehensiveness_k = p(ŷ | x) − p(ŷ | x without r_k)
    sufficiency_k       = p(ŷ | x) − p(ŷ | r_k alone)
    AOPC                = either, averaged over the bins k (`aopc`)

with the bins k ∈ {1, 5, 10, 20, 50} % (`FRACTIONS`, also the default
`--aopc_thresholds` of their `rationale_benchmark/metrics.py`). p is the
model's output distribution (`AttentionModel.log_distribution`: [1 − σ(z),
σ(z)] for one logit, the softmax of [B, C] logits otherwise) and ŷ its argmax
on x (the first class on a tie).

Removal is the model's own deletion, as leave-one-out's 'delete' mode
(`loo.variants`): the removed words leave the row, the rest (SOS, the kept
words in their original order, EOS, and anything after EOS — a QA or NLI
model's query, `models.qa`) moves left, and the row is re-encoded with its
length shortened. Only words (positions 1 .. length − 2) are ranked or
removed; SOS and EOS always stay. "r_k alone" is SOS, r_k's words in
document order, EOS (and the query).

Choices the paper leaves open, each a setting:

* How many words k % of n words is (`rounding`, `min_words`). ERASER's
  metrics script reads the variants' scores from the model's output file
  and does not fix it; their baseline model (`rationale_benchmark/models/
  encode_attend.py`, `decode`) keeps `int(k · n)` words, the floor, and
  ferret floors too (`_get_id_tokens_percentage`, which leaves a bin of 0
  words out of its average). The default is the floor, and a bin of 0 words
  is kept in: its comprehensiveness is 0 and its sufficiency the drop to
  SOS, EOS alone. Both metrics use the one count, since the paper defines
  both on the same r_k (their baseline deletes the complement of the bottom
  `int((1 − k) · n)` words, up to one word more than it keeps, and passes
  the kept words in score order; here they stay in document order).
* The AOPC average (`aopc`'s `normaliser`). Their `_instances_aopc` averages
  over the bins given ('bins', the default); the paper's formula divides a
  sum from k = 0 by |B| + 1, as Samek et al.'s AOPC, whose k = 0 term
  (nothing removed) is 0: 'bins_plus_one' is the sum over the |B| bins
  divided by |B| + 1.
* Ties in a measure's scores: the earlier position ranks higher. A NaN
  score ranks lowest.

A random ranking is one more measure row (`random_scores`).

Shapes and memory: scores [M, B, L] for M measures, K = len(fractions); each
document has 2·M·K variant rows of width L, encoded in one batch for the
model (`docs_per_chunk` documents at once, or `rows_per_chunk` rows of one
document at a time), so a chunk's peak memory is about docs_per_chunk ·
2·M·K (or rows_per_chunk) times one row's activations.
"""

import fractions as fractions_lib
import functools
from typing import Literal, NamedTuple, Optional

import jax
import jax.numpy as jnp

from attn_jax.analysis import contract, needs
from attn_jax.analysis.position_noise import position_uniform
from attn_jax.data.vocabulary import PAD
from attn_jax.models import masks
from attn_jax.models.interface import AttentionModel, InterfaceError

__all__ = ['FRACTIONS', 'ErasureCurves', 'aopc', 'erasure_metrics', 'jitted', 'random_scores', 'top_words',
           'word_counts']

Rounding = Literal['floor', 'ceil', 'round']
Normaliser = Literal['bins', 'bins_plus_one']

FRACTIONS = (0.01, 0.05, 0.10, 0.20, 0.50)  # DeYoung et al. §4.2's bins
_DENOMINATOR = 10_000  # a fraction is read as p / q with q <= this (0.01 is 1/100 exactly)


class ErasureCurves(NamedTuple):
  """ERASER's comprehensiveness and sufficiency of every measure at every fraction, per document.

  Attributes:
    comprehensiveness: [M, K, B] p(ŷ | x) − p(ŷ | x without the top words); exactly 0 where none is removed.
    sufficiency: [M, K, B] p(ŷ | x) − p(ŷ | the top words alone); exactly 0 where every word is kept.
    prob: [B] p(ŷ | x).
    predicted: [B] int, ŷ, the class predicted on the whole document.
    counts: [K, B] int, the number of top words at each fraction.
  """
  comprehensiveness: jnp.ndarray  # [M, K, B]
  sufficiency: jnp.ndarray        # [M, K, B]
  prob: jnp.ndarray               # [B] p(ŷ | x)
  predicted: jnp.ndarray          # [B] ŷ
  counts: jnp.ndarray             # [K, B] top words per fraction


def fraction_ratio(fraction: float) -> tuple[int, int]:
  """A fraction in (0, 1] as integers (p, q), so that k·n is rounded without float error."""
  if not 0.0 < float(fraction) <= 1.0:
    raise ValueError(f'fractions must lie in (0, 1], not {fraction!r}')
  exact = fractions_lib.Fraction(float(fraction)).limit_denominator(_DENOMINATOR)
  return exact.numerator, exact.denominator


def word_counts(lengths: jnp.ndarray, fractions: tuple = FRACTIONS, rounding: Rounding = 'floor',
                min_words: int = 0) -> jnp.ndarray:
  """How many words each fraction of each document is.

  count = min(max(rounding(k · n), min_words), n), n = length − 2 words.
  k · n is computed in integers (k as a ratio of integers), so 10 % of 30
  words is 3 under every rounding.

  Args:
    lengths: [B] int, document lengths with SOS and EOS.
    fractions: K fractions in (0, 1] (static).
    rounding: 'floor' (the default, ERASER's baseline code), 'ceil', or
      'round' (halves up).
    min_words: the fewest words a fraction covers (0: a fraction may cover
      none), never more than the document has.

  Returns:
    [K, B] int32 counts.

  Raises:
    ValueError: a fraction outside (0, 1], an unknown `rounding`, or a
      negative `min_words`.
  """
  if rounding not in ('floor', 'ceil', 'round'):
    raise ValueError(f"rounding must be 'floor', 'ceil' or 'round', not {rounding!r}")
  if min_words < 0:
    raise ValueError(f'min_words must be >= 0, not {min_words}')
  n = jnp.maximum(lengths.astype(jnp.int32) - 2, 0)
  rows = []
  for fraction in fractions:
    p, q = fraction_ratio(fraction)
    scaled = p * n  # int32: p <= q <= 10⁴, so n may reach 2·10⁵ words
    if rounding == 'floor':
      count = scaled // q
    elif rounding == 'ceil':
      count = (scaled + (q - 1)) // q
    else:
      count = (2 * scaled + q) // (2 * q)
    rows.append(jnp.minimum(jnp.maximum(count, min_words), n))
  return jnp.stack(rows).astype(jnp.int32)


def _word_ranks(scores: jnp.ndarray, words: jnp.ndarray) -> jnp.ndarray:
  """[..., L] scores, words -> [..., L] int: each position's rank, 0 the most important word.

  Words rank before every other position; among words, higher scores
  first, ties by position (earlier first), NaN lowest. -0.0 and 0.0 tie
  (a sort orders them otherwise).
  """
  key = jnp.where(jnp.isnan(scores), jnp.inf, -scores)
  key = jnp.where(key == 0, jnp.zeros_like(key), key)
  positions = jnp.broadcast_to(jnp.arange(scores.shape[-1], dtype=jnp.int32), scores.shape)
  words = jnp.broadcast_to(words, scores.shape)
  _, _, order = jax.lax.sort((jnp.where(words, 0, 1).astype(jnp.int32), key, positions), dimension=-1,
                             is_stable=True, num_keys=2)
  return jnp.argsort(order, axis=-1).astype(jnp.int32)  # the inverse permutation


def top_words(scores: jnp.ndarray, lengths: jnp.ndarray, counts: jnp.ndarray) -> jnp.ndarray:
  """Each measure's top words at each fraction: the rationales r_k.

  Args:
    scores: [M, B, L] each measure's importance of each position (read on the words only).
    lengths: [B] int, document lengths with SOS and EOS.
    counts: [K, B] int, words per fraction (`word_counts`).

  Returns:
    [M, K, B, L] bool: True on the counts[k, b] highest-scored words of
    document b under measure m (ties: the earlier position; NaN lowest).
  """
  scores = jnp.asarray(scores)
  if not jnp.issubdtype(scores.dtype, jnp.floating):
    scores = scores.astype(jnp.float32)  # integer scores: the NaN and -0.0 handling needs floats
  words = masks.word_mask(lengths, scores.shape[-1])
  ranks = _word_ranks(scores, words)  # [M, B, L]
  return words[None, None] & (ranks[:, None] < counts[None, :, :, None])


def random_scores(keys: jax.Array, lengths: jnp.ndarray, width: int, num: int = 1) -> jnp.ndarray:
  """Random importance scores, a baseline ranking to add as more measure rows.

  U[0, 1) on the words, 0 elsewhere. Each position's draw depends only on
  its document's key and the position (`position_uniform`), so a document
  gets the same ranking whatever width it is padded to and whatever batch it
  is in; the same keys give the same scores.

  Args:
    keys: [B] PRNG keys, one per document (e.g. `jax.random.split(key, B)`,
      or one key per document id for rankings that follow the document).
    lengths: [B] int, document lengths with SOS and EOS.
    width: L, the padded width.
    num: random rankings per document (static).

  Returns:
    [num, B, L] scores, to concatenate with the measures' [M, B, L].
  """
  noise = jax.vmap(lambda k: position_uniform(k, (num,), width))(keys)  # [B, num, L]
  words = masks.word_mask(lengths, width)
  return jnp.where(words[None], jnp.moveaxis(noise, 1, 0), 0.0)


def _compact(tokens: jnp.ndarray, keep: jnp.ndarray) -> jnp.ndarray:
  """[L] tokens, [L] bool -> [L]: the kept tokens moved left in their order, PAD after."""
  width = tokens.shape[0]
  destination = jnp.where(keep, jnp.cumsum(keep) - 1, width)  # out of range: dropped
  return jnp.full_like(tokens, PAD).at[destination].set(tokens, mode='drop')


def _check_scores(scores, tokens) -> None:
  if scores.ndim != 3 or scores.shape[1:] != tokens.shape:
    raise ValueError(f'scores must be [M, B, L] with [B, L] the tokens\' shape {list(tokens.shape)}, '
                     f'not {list(scores.shape)}; one measure is scores[None]')


def erasure_metrics(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray,
                    scores: jnp.ndarray, *, fractions: tuple = FRACTIONS, rounding: Rounding = 'floor',
                    min_words: int = 0, docs_per_chunk: int = 1,
                    rows_per_chunk: Optional[int] = None) -> ErasureCurves:
  """ERASER's comprehensiveness and sufficiency (DeYoung et al. §4.2) of M measures at K fractions.

  For each document, measure and fraction, the top words (`top_words`) are
  deleted (comprehensiveness) or kept alone (sufficiency) and the shortened
  row re-encoded (the module docstring). All 2·M·K variant rows of a
  document are one batch for the model; documents run `docs_per_chunk` at a
  time.

  Jittable with `model`, `fractions` (a tuple), `rounding`, `min_words`,
  `docs_per_chunk` and `rows_per_chunk` static (`jitted`).

  Args:
    model: the model (`attn_jax.models.interface`); its forward is all that
      is read, so a forward-only model (`models.forward_only`) runs too.
    params: its parameters.
    tokens: [B, L] int32 token ids (`data.batching.pad_texts`; a QA row with its query after EOS).
    lengths: [B] int, document lengths with SOS and EOS.
    scores: [M, B, L] each measure's importance of each position; only the
      words' are read (add `random_scores` rows for the random baseline).
    fractions: K fractions of each document's words (default
      `FRACTIONS`, 1, 5, 10, 20 and 50 %).
    rounding, min_words: how many words a fraction is (`word_counts`).
    docs_per_chunk: documents whose variants run together; peak memory grows with it.
    rows_per_chunk: a document's 2·M·K variant rows run this many at a time
      (None: all at once), for documents too long for all of them to fit.

  Returns:
    `ErasureCurves`: comprehensiveness and sufficiency [M, K, B], prob [B]
    p(ŷ | x), predicted [B] ŷ, counts [K, B].

  Raises:
    ValueError: `scores` is not [M, B, L] for these tokens, or a setting is
      out of range (`word_counts`).
    InterfaceError: the model does not take the analysis
      (`needs.NEEDS['erasure_metrics']`, or a hierarchical model, whose
      items are sentences); `ContractError`: its pieces break the interface
      on the first batch (`contract.check`).
  """
  needs.check(model, 'erasure_metrics')
  if getattr(model, 'hierarchical', False):
    raise InterfaceError(f'{needs.NEEDS["erasure_metrics"].label} removes words from [B, L] rows; '
                         f'{type(model).__name__} reads documents of sentences')
  _check_scores(scores, tokens)
  if docs_per_chunk < 1 or (rows_per_chunk is not None and rows_per_chunk < 1):
    raise ValueError(f'docs_per_chunk and rows_per_chunk must be >= 1, not {docs_per_chunk}, {rows_per_chunk}')
  fractions = tuple(fractions)
  counts = word_counts(lengths, fractions, rounding, min_words)  # [K, B]
  contract.check(model, params, tokens, lengths)

  log_p = model.log_distribution(model.forward(params, tokens, lengths).logits)  # [B, C]
  predicted = jnp.argmax(log_p, axis=-1)
  prob = jnp.exp(jnp.take_along_axis(log_p, predicted[:, None], axis=-1)[:, 0])
  top = jnp.moveaxis(top_words(scores, lengths, counts), 2, 0)  # [B, M, K, L]
  width, num_measures, num_fractions = tokens.shape[1], scores.shape[0], len(fractions)

  def one_document(args):
    doc, length, doc_top, doc_counts, chosen = args  # [L], (), [M, K, L], [K], ()
    words = masks.word_mask(length[None], width)[0]
    # [M, K, 2, L]: 0 deletes the top words, 1 keeps them alone (with SOS, EOS and any query).
    keep = jnp.stack([~doc_top, doc_top | ~words[None, None]], axis=2)
    rows = jax.vmap(_compact, in_axes=(None, 0))(doc, keep.reshape(-1, width))
    doc_counts = doc_counts.astype(length.dtype)
    shortened = jnp.stack([length - doc_counts, doc_counts + 2], axis=-1)  # [K, 2]
    row_lengths = jnp.broadcast_to(shortened[None], (num_measures, num_fractions, 2)).reshape(-1)

    def prob_of(rows, row_lengths):
      return jnp.exp(model.log_distribution(model.forward(params, rows, row_lengths).logits)[..., chosen])

    if rows_per_chunk is None:
      probs = prob_of(rows, row_lengths)
    else:
      probs = jax.lax.map(lambda a: prob_of(a[0][None], a[1][None])[0], (rows, row_lengths),
                          batch_size=rows_per_chunk)
    return probs.reshape(num_measures, num_fractions, 2)

  without = jax.lax.map(one_document, (tokens, lengths, top, counts.T, predicted),
                        batch_size=docs_per_chunk)  # [B, M, K, 2]
  without = jnp.moveaxis(without, 0, 2)  # [M, K, B, 2]
  n = jnp.maximum(lengths.astype(jnp.int32) - 2, 0)
  drop = prob[None, None, :] - without[..., 0]
  # Nothing removed, or every word kept: the row is x itself, and the change exactly 0.
  comprehensiveness = jnp.where(counts[None] == 0, jnp.zeros_like(drop), drop)
  drop = prob[None, None, :] - without[..., 1]
  sufficiency = jnp.where(counts[None] == n[None, None, :], jnp.zeros_like(drop), drop)
  return ErasureCurves(comprehensiveness, sufficiency, prob, predicted, counts)


def aopc(values: jnp.ndarray, normaliser: Normaliser = 'bins') -> jnp.ndarray:
  """The area over the perturbation curve (DeYoung et al. §4.2): values averaged over the fractions.

  Args:
    values: [..., K, B] comprehensiveness or sufficiency (`ErasureCurves`).
    normaliser: 'bins' divides the sum over the K bins by K, as ERASER's
      `rationale_benchmark/metrics.py` (`_instances_aopc`) does; 'bins_plus_one'
      by K + 1, the paper's formula, its k = 0 term (nothing removed) 0.

  Returns:
    [..., B] each document's AOPC (their dataset score is its mean over B).

  Raises:
    ValueError: an unknown `normaliser`.
  """
  if normaliser not in ('bins', 'bins_plus_one'):
    raise ValueError(f"normaliser must be 'bins' or 'bins_plus_one', not {normaliser!r}")
  bins = values.shape[-2]
  return jnp.sum(values, axis=-2) / (bins if normaliser == 'bins' else bins + 1)


@functools.cache
def jitted():
  """`erasure_metrics` under `jax.jit`, its model and settings static (one program per padded width).

  Returns:
    The jitted function, called as `erasure_metrics` (fractions a tuple).
  """
  return jax.jit(erasure_metrics, static_argnums=0,
                 static_argnames=('fractions', 'rounding', 'min_words', 'docs_per_chunk', 'rows_per_chunk'))
