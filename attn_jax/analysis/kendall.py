"""Kendall τ-b between two importance rankings of each document (J&W Table 2).

J&W use plain `scipy.stats.kendalltau` (τ-b, two-sided p-value) over the
words only (SOS/EOS excluded), then report the mean and std (ddof 0) over
documents and the fraction with p ≤ 0.05, overall and by *predicted* class.
A constant vector gives τ = NaN, which J&W let propagate into the mean; the
summary also gives NaN-robust means.
"""

import functools
import math
import warnings

import numpy as np
import scipy.special

# Documents of at most this many words take the pairwise path (O(n²) per
# document, no per-call overhead); longer ones scipy's O(n log n) merge sort,
# whose ~0.3 ms per call is then the smaller cost.
PAIRWISE_MAX_WORDS = 128
_PAIRS_PER_CHUNK = 1 << 22  # bounds the [docs, n, n] arrays to a few tens of MB
_DOCS_PER_CHUNK = 256


def kendall_tau(a: np.ndarray, b: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """τ-b and its p-value per document over positions 1 .. L − 2.

  The numbers of `scipy.stats.kendalltau(x, y)` (τ-b, two-sided, method
  'auto': the exact null distribution without ties for n ≤ 33, else the
  tie-corrected normal approximation), computed for many documents at once.

  Args:
    a, b: [N, W] scores; lengths: [N] (with SOS and EOS).

  Returns:
    (tau [N], p_value [N]) as float64; NaN where either vector is constant
    or holds a NaN (scipy's nan_policy 'propagate').
  """
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  words = np.maximum(np.asarray(lengths, np.int64) - 2, 0)
  tau = np.full(len(words), np.nan)
  p_value = np.full(len(words), np.nan)
  order = np.argsort(words, kind='stable')
  short = order[words[order] <= PAIRWISE_MAX_WORDS]
  start = 0
  while start < len(short):  # length-sorted chunks: little padding, the last row the widest
    width = max(int(words[short[min(start + _DOCS_PER_CHUNK, len(short)) - 1]]), 1)
    rows = short[start:start + min(_DOCS_PER_CHUNK, max(_PAIRS_PER_CHUNK // (width * width), 1))]
    width = max(int(words[rows[-1]]), 1)
    tau[rows], p_value[rows] = _pairwise(a[rows, 1:width + 1], b[rows, 1:width + 1], words[rows])
    start += len(rows)
  with warnings.catch_warnings():
    warnings.simplefilter('ignore')  # scipy warns on constant input; NaN is the answer
    for i in order[words[order] > PAIRWISE_MAX_WORDS]:
      result = scipy.stats.kendalltau(a[i, 1:words[i] + 1], b[i, 1:words[i] + 1])
      tau[i], p_value[i] = result.statistic, result.pvalue
  return tau, p_value


def _signs(x: np.ndarray, pairs: np.ndarray) -> np.ndarray:
  """[C, n, n] sign(x_i − x_j) as int8, 0 off `pairs`; by comparison, so
  distinct values never round to a tie."""
  return ((x[:, :, None] > x[:, None, :]).astype(np.int8)
          - (x[:, :, None] < x[:, None, :]).astype(np.int8)) * pairs


def _tie_terms(signs: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, ...]:
  """scipy's tie statistics Σ c(c−1)/2, Σ c(c−1)(c−2), Σ c(c−1)(2c+5) over
  groups of c equal values, each as a sum over the words: a word in a group
  of c adds (c−1)/2, (c−1)(c−2) and (c−1)(2c+5)."""
  others = np.sum((signs == 0) & pairs, axis=2, dtype=np.int64)  # c − 1 per word
  valid = pairs.any(axis=2)
  return (np.sum(others * valid, axis=1) // 2,
          np.sum(others * (others - 1) * valid, axis=1),
          np.sum(others * (2 * others + 7) * valid, axis=1))


def _pairwise(a: np.ndarray, b: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """[C, W] scores of C documents of n ≤ W words -> (τ-b [C], p [C])."""
  width = a.shape[1]
  valid = np.arange(width)[None, :] < n[:, None]
  pairs = valid[:, :, None] & valid[:, None, :] & ~np.eye(width, dtype=bool)
  sa, sb = _signs(a, pairs), _signs(b, pairs)
  s = np.sum(sa.astype(np.int64) * sb, axis=(1, 2)) // 2  # concordant − discordant
  xtie, x0, x1 = _tie_terms(sa, pairs)
  ytie, y0, y1 = _tie_terms(sb, pairs)
  ntie = np.sum((sa == 0) & (sb == 0) & pairs, axis=(1, 2), dtype=np.int64) // 2
  tot = n * (n - 1) // 2
  finite = ~(np.isnan(a) & valid).any(axis=1) & ~(np.isnan(b) & valid).any(axis=1)
  tau = np.full(len(n), np.nan)
  p_value = np.full(len(n), np.nan)
  for i in np.flatnonzero(finite & (xtie < tot) & (ytie < tot)):
    size, t, cmd = int(n[i]), int(tot[i]), int(s[i])
    # The same float operations, in the same order, as scipy's.
    tau[i] = min(1.0, max(-1.0, cmd / np.sqrt(t - int(xtie[i])) / np.sqrt(t - int(ytie[i]))))
    dis = (t - int(xtie[i]) - int(ytie[i]) + int(ntie[i]) - cmd) // 2
    if xtie[i] == 0 and ytie[i] == 0 and (size <= 33 or min(dis, t - dis) <= 1):
      p_value[i] = _exact_p(size, t - dis)
    else:
      m = size * (size - 1.)
      var = ((m * (2 * size + 5) - int(x1[i]) - int(y1[i])) / 18
             + (2 * int(xtie[i]) * int(ytie[i])) / m + int(x0[i]) * int(y0[i]) / (9 * m * (size - 2)))
      p_value[i] = 2 * scipy.special.ndtr(-abs(cmd / np.sqrt(var)))
  return tau, p_value


@functools.lru_cache(maxsize=None)
def _exact_p(n: int, c: int) -> float:
  """The two-sided p-value of c concordant pairs among n untied words under
  independence (Kendall 1970): twice the tail of the number of inversions of
  a random permutation, computed as scipy does."""
  c = min(c, n * (n - 1) // 2 - c)
  if n <= 2:
    return 1.0
  if c == 0:
    return min(2.0 / math.factorial(n), 1.0)
  if c == 1:
    return min(2.0 / math.factorial(n - 1), 1.0)
  if 4 * c == n * (n - 1):
    return 1.0
  counts = np.zeros(c + 1)
  counts[0:2] = 1.0
  for j in range(3, n + 1):
    counts = np.cumsum(counts)
    if j <= c:
      counts[j:] -= counts[:c + 1 - j]
  return float(np.clip(2.0 * np.sum(counts) / math.factorial(n), 0, 1))


def summarize(values: np.ndarray, predicted: np.ndarray, p_value: np.ndarray | None = None,
              groups: dict | None = None) -> dict:
  """J&W's summary of a per-document statistic, overall and by predicted class.

  Args:
    values: [N] numpy, the statistic per document (e.g. τ from `kendall_tau`).
    predicted: [N] numpy, each document's predicted class (used by the default groups).
    p_value: [N] numpy p-values, or None; given, each group also reports the
      fraction with p ≤ 0.05 ('pval_sig').
    groups: name -> [N] bool rows (default: 'overall', and 'neg' and 'pos'
      by `predicted` — a binary model's).

  Returns:
    {'overall'|'neg'|'pos' (or `groups`' names): {'mean', 'std' (NaN-propagating,
    ddof 0), 'nanmean', 'nanstd', 'n', 'n_nan', and 'pval_sig' when p-values are given}};
    'nanmean' and 'nanstd' over the finite values; a statistic is None where
    its group (or its finite part) is empty.
  """
  if groups is None:
    groups = {'overall': np.ones(len(values), bool), 'neg': predicted == 0, 'pos': predicted == 1}
  out = {}
  for name, rows in groups.items():
    v = values[rows]
    finite = v[np.isfinite(v)]
    entry = {'n': int(rows.sum()), 'n_nan': int(len(v) - len(finite)),
             'mean': float(np.mean(v)) if len(v) else None,
             'std': float(np.std(v)) if len(v) else None,
             'nanmean': float(np.mean(finite)) if len(finite) else None,
             'nanstd': float(np.std(finite)) if len(finite) else None}
    if p_value is not None:
      entry['pval_sig'] = float(np.mean(p_value[rows] <= 0.05)) if len(v) else None
    out[name] = entry
  return out
