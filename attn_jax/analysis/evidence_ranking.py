"""How well an importance ranking finds known evidence (beyond the four papers).

bAbI names, for each question, the statements that answer it (its supporting
facts). A measure that explains the model's answer should rank those
statements' words above the rest. This scores each ranking by the average
precision (AP) of the evidence words among the passage's words:

    AP = (1/R) Σ_{i evidence} |{j evidence: s_j ≥ s_i}| / |{j: s_j ≥ s_i}|

over the n words of the passage with R of them evidence — the area under the
precision-recall curve, as `sklearn.metrics.average_precision_score` computes
it (tied scores form one threshold, so a measure gains nothing from ties). AP
rather than precision at k because a document has 3–20 evidence words: it
uses every one of them, does not need a cut-off, and depends on the ranking
alone, so measures of different scales (α, |∇|, Δ output) compare directly.
Its value for a ranking at random is known exactly (`chance_average_precision`)
and depends on R and n, so each document's AP is read against its own chance.
"""

import jax
import jax.numpy as jnp
import numpy as np


def average_precision(scores: jnp.ndarray, evidence: jnp.ndarray, words: jnp.ndarray) -> jnp.ndarray:
  """AP of the evidence words in the ranking by `scores`, per document.

  Args:
    scores: [B, L] importance per position (higher: more important).
    evidence: [B, L] bool, the evidence words.
    words: [B, L] bool, the positions ranked (the passage's words: not SOS,
      EOS or padding).

  Returns:
    [B] float32 AP in (0, 1]; NaN for a document without evidence words.
  """
  scores = jnp.where(words, jnp.asarray(scores, jnp.float32), -jnp.inf)
  evidence = evidence & words
  # [B, i, j]: is j ranked at or above i (tie-inclusive, as one threshold)?
  above = (scores[:, None, :] >= scores[:, :, None]) & words[:, None, :]
  hits = jnp.sum(above & evidence[:, None, :], axis=-1).astype(jnp.float32)
  ranked = jnp.maximum(jnp.sum(above, axis=-1), 1).astype(jnp.float32)
  precision = hits / ranked
  count = jnp.sum(evidence, axis=-1).astype(jnp.float32)
  total = jnp.sum(jnp.where(evidence, precision, 0.0), axis=-1)
  return jnp.where(count > 0, total / jnp.maximum(count, 1.0), jnp.nan)


def top_hit(scores: jnp.ndarray, evidence: jnp.ndarray, words: jnp.ndarray) -> jnp.ndarray:
  """[B] 1.0 where the top-scored word is an evidence word (the first of tied tops), else 0."""
  top = jnp.argmax(jnp.where(words, jnp.asarray(scores, jnp.float32), -jnp.inf), axis=-1)
  return jnp.take_along_axis(evidence & words, top[:, None], axis=-1)[:, 0].astype(jnp.float32)


def chance_average_precision(num_evidence: np.ndarray, num_words: np.ndarray) -> np.ndarray:
  """E[AP] of a uniformly random ranking of n words, R of them evidence.

  The evidence word at rank r has, in expectation, (r − 1)(R − 1)/(n − 1)
  other evidence words above it, and r is uniform on 1..n, so
  E[AP] = ((R − 1) + (n − R) H_n / n) / (n − 1), H_n the n-th harmonic
  number; 1 for n = 1. NaN where R = 0.
  """
  r = np.asarray(num_evidence, np.float64)
  n = np.asarray(num_words, np.float64)
  harmonic = np.array([np.sum(1.0 / np.arange(1, int(k) + 1)) for k in np.ravel(n)]).reshape(n.shape)
  with np.errstate(divide='ignore', invalid='ignore'):
    value = np.where(n > 1, ((r - 1) + (n - r) * harmonic / np.maximum(n, 1)) / np.maximum(n - 1, 1), 1.0)
  return np.where(r > 0, value, np.nan)


@jax.jit
def scores_by_measure(measures: dict, evidence: jnp.ndarray, words: jnp.ndarray) -> dict:
  """{measure: [B, L] scores} -> {measure: {'ap': [B], 'top_hit': [B]}}."""
  return {name: {'ap': average_precision(s, evidence, words), 'top_hit': top_hit(s, evidence, words)}
          for name, s in measures.items()}
