"""Rankings of a passage's words that read no model: what an importance
measure must beat before its evidence AP (`evidence_ranking`) says it found
the supporting facts.

bAbI asks about the latest facts of a story, so where a word stands is
itself evidence: a ranking that knows nothing but positions can score far
above a random one. Three such rankings, each scored with the same
`evidence_ranking.average_precision` as the measures (tied scores form one
threshold):

- later words first (`later_words_first`): a word's score is its position;
- the last statement first (`last_statement_first`): a word's score is the
  index of its statement (0 for the passage's first), so the statement
  nearest the question comes first and the words of one statement tie. A
  statement's words are those after the separator that ends the statement
  before it, up to and including its own separator (`statements_from_separators`:
  bAbI's passages join statements with the word '.', so the '.' after a
  statement ties with it; the last statement has none);
- a random ranking of word types (`random_type_average_precision`): each
  distinct word gets a random rank and all its occurrences tie. A model
  whose every measure is a function of the word type (an Average encoder:
  α, the gradients and leave-one-out of two occurrences of one word are
  equal) can only rank types, so this, not a random ranking of words
  (`evidence_ranking.chance_average_precision`), is its chance. Its
  expectation is estimated per document by a seeded Monte Carlo over type
  orders, with its standard error.

Every function takes arrays of a batch of documents, [B, L] over positions
(SOS at 0, the passage's words at 1..n, then EOS and padding), with a
`words` mask saying which positions are ranked.
"""

import jax
import numpy as np

from attn_jax.analysis import evidence_ranking as ev

# The [B, L, L] comparisons of one call of the AP stay about this many
# (bAbI 3's passages reach 1,348 words).
PAIRS_PER_CHUNK = 1 << 22
# Monte Carlo draws of type orders per document: the standard error of a
# mean over 1,000 bAbI questions is then about 1e-4.
TYPE_DRAWS = 2000

_average_precision = jax.jit(ev.average_precision)


def average_precision(scores: np.ndarray, evidence: np.ndarray, words: np.ndarray,
                      pairs_per_chunk: int = PAIRS_PER_CHUNK) -> np.ndarray:
  """`evidence_ranking.average_precision` in chunks of documents.

  Args:
    scores: [B, L] scores (higher: ranked first).
    evidence: [B, L] bool, the evidence words.
    words: [B, L] bool, the positions ranked.
    pairs_per_chunk: about how many [i, j] comparisons one call makes.

  Returns:
    [B] float64 AP (NaN for a document without evidence words).
  """
  scores = np.asarray(scores, np.float32)
  width = scores.shape[1]
  step = max(1, pairs_per_chunk // max(width * width, 1))
  parts = [np.asarray(_average_precision(scores[s:s + step], np.asarray(evidence[s:s + step], bool),
                                         np.asarray(words[s:s + step], bool)))
           for s in range(0, len(scores), step)]
  return np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)


def words_mask(lengths: np.ndarray, width: int) -> np.ndarray:
  """[B] lengths with SOS and EOS -> [B, width] bool, the passage's words (1..n)."""
  positions = np.arange(width)[None, :]
  return (positions >= 1) & (positions <= np.asarray(lengths)[:, None] - 2)


def later_words_first(words: np.ndarray) -> np.ndarray:
  """[B, L] bool words -> [B, L] float32 scores: each position's index, so
  the word nearest the question ranks first (no ties)."""
  words = np.asarray(words, bool)
  return np.broadcast_to(np.arange(words.shape[1], dtype=np.float32), words.shape).copy()


def statements_from_separators(separators: np.ndarray, words: np.ndarray) -> np.ndarray:
  """Each word's statement index from the separators between statements.

  Args:
    separators: [B, L] bool, the words that end a statement (bAbI: '.').
    words: [B, L] bool, the passage's words.

  Returns:
    [B, L] int32: the number of separators among the words strictly before
    each position (so a separator belongs to the statement it ends); -1
    where not a word.
  """
  ends = (np.asarray(separators, bool) & np.asarray(words, bool)).astype(np.int32)
  before = np.cumsum(ends, axis=1) - ends
  return np.where(words, before, -1).astype(np.int32)


def last_statement_first(statements: np.ndarray) -> np.ndarray:
  """[B, L] int statement index -> [B, L] float32 scores: the statement
  index, so the passage's last statement ranks first and a statement's
  words tie."""
  return np.asarray(statements, np.float32)


def random_type_average_precision(types: np.ndarray, evidence: np.ndarray, words: np.ndarray,
                                  draws: int = TYPE_DRAWS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
  """Expected AP of a random ranking of word types, per document.

  Each draw orders the document's distinct types uniformly at random; all
  occurrences of a type share its rank (one threshold of the AP). With the
  types in drawn order k = 1..K, c_k words and e_k evidence words each,

      AP = (1/R) Σ_k e_k · (Σ_{j ≤ k} e_j) / (Σ_{j ≤ k} c_j),

  which is `evidence_ranking.average_precision` of scores equal to each
  word's type rank. Document i's draws come from
  `np.random.default_rng([seed, i])`, so they do not depend on the batch.

  Args:
    types: [B, L] int, each position's word type (token id).
    evidence: [B, L] bool, the evidence words.
    words: [B, L] bool, the positions ranked.
    draws: type orders drawn per document.
    seed: the Monte Carlo seed.

  Returns:
    ([B] float64 mean AP over the draws, [B] float64 its standard error);
    NaN for a document without evidence words.
  """
  types, evidence, words = np.asarray(types), np.asarray(evidence, bool), np.asarray(words, bool)
  means, errors = np.full(len(types), np.nan), np.full(len(types), np.nan)
  for i in range(len(types)):
    kinds, inverse = np.unique(types[i][words[i]], return_inverse=True)
    counts = np.bincount(inverse, minlength=len(kinds)).astype(np.float64)
    hits = np.bincount(inverse, weights=evidence[i][words[i]].astype(np.float64), minlength=len(kinds))
    relevant = hits.sum()
    if relevant == 0:
      continue
    order = np.argsort(np.random.default_rng([seed, i]).random((draws, len(kinds))), axis=1)
    c, e = counts[order], hits[order]  # [draws, K] in drawn order
    values = (e * np.cumsum(e, axis=1) / np.cumsum(c, axis=1)).sum(axis=1) / relevant
    means[i] = values.mean()
    errors[i] = values.std(ddof=1) / np.sqrt(draws) if draws > 1 else np.nan
  return means, errors


def baseline_average_precision(evidence: np.ndarray, words: np.ndarray, types: np.ndarray = None,
                               separators: np.ndarray = None, draws: int = TYPE_DRAWS,
                               seed: int = 0) -> dict:
  """Every baseline the inputs allow, per document.

  Args:
    evidence: [B, L] bool, the evidence words.
    words: [B, L] bool, the positions ranked.
    types: [B, L] int word types (token ids), or None: no type baseline.
    separators: [B, L] bool statement ends, or None: no statement baseline.
    draws, seed: of `random_type_average_precision`.

  Returns:
    {'later_words_first': [B]} and, where given their inputs,
    'last_statement_first': [B], 'random_word_types': [B] with
    'random_word_types_se': [B] (float64; NaN without evidence words).
  """
  out = {'later_words_first': average_precision(later_words_first(words), evidence, words)}
  if separators is not None:
    out['last_statement_first'] = average_precision(
        last_statement_first(statements_from_separators(separators, words)), evidence, words)
  if types is not None:
    out['random_word_types'], out['random_word_types_se'] = random_type_average_precision(
        types, evidence, words, draws, seed)
  return out


def mean_with_error(values: np.ndarray, errors: np.ndarray = None) -> tuple[float, float]:
  """The mean over documents of per-document values (NaN dropped) and, given
  their Monte Carlo standard errors, the mean's (√Σ se² / n); 0 without."""
  values = np.asarray(values, np.float64)
  keep = np.isfinite(values)
  mean = float(values[keep].mean()) if keep.any() else float('nan')
  if errors is None or not keep.any():
    return mean, 0.0
  return mean, float(np.sqrt(np.sum(np.asarray(errors, np.float64)[keep] ** 2)) / keep.sum())
