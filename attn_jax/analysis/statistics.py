"""Confidence intervals for the numbers attn-jax reports.

Two kinds, for two questions:

* Over seeds (`t_interval`): how much of a number is the seed. The statistic
  (a test accuracy, a mean τ) is computed once per trained model; the 95 %
  interval is the Student-t interval of those per-seed values,
  mean ± t_{0.975, n−1} · s / √n with s the sample standard deviation
  (ddof 1). It is what a rerun with a new seed is expected to land near.
* Over test documents (`bootstrap_interval`), for a single model: how much of
  a number is the particular test documents. The percentile bootstrap:
  resample the documents with replacement `resamples` times, recompute the
  statistic, take the 2.5 % and 97.5 % quantiles.

"Within published?" asks whether the published number lies inside the
interval (`contains`): no fixed tolerance. Whether two sets of numbers are
the same, or differ, is one verdict of `attn_jax.analysis.verdicts.compare`
(TOST and the test of zero together); Welch's test of a difference alone
(`welch_t_test`) cannot show sameness.
"""

import math
from typing import Callable, Optional

import numpy as np

CONFIDENCE = 0.95


def t_interval(values, confidence: float = CONFIDENCE) -> dict:
  """Student-t interval of the mean of per-seed values (NaN values dropped).

  Returns:
    {'mean', 'low', 'high', 'half_width', 'n', 'std'}; with one value the
    bounds are NaN (a single seed says nothing about the spread).
  """
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  x = np.asarray([v for v in values if v is not None and math.isfinite(v)], np.float64)
  n = len(x)
  if n == 0:
    return {'mean': math.nan, 'low': math.nan, 'high': math.nan, 'half_width': math.nan,
            'n': 0, 'std': math.nan}
  mean = float(x.mean())
  if n == 1:
    return {'mean': mean, 'low': math.nan, 'high': math.nan, 'half_width': math.nan,
            'n': 1, 'std': math.nan}
  std = float(x.std(ddof=1))
  half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1) * std / math.sqrt(n))
  return {'mean': mean, 'low': mean - half, 'high': mean + half, 'half_width': half, 'n': n,
          'std': std}


def prediction_interval(values, confidence: float = CONFIDENCE) -> dict:
  """Where one more run (seed) is expected to land: the Student-t
  prediction interval mean ± t_{(1+c)/2, n−1} · s · √(1 + 1/n) of per-seed
  values (NaN dropped). Wider than `t_interval`, which is about the mean.

  Returns:
    {'mean', 'low', 'high', 'half_width', 'n'}; bounds NaN under 2 values.
  """
  import scipy.stats  # pylint: disable=g-import-not-at-top
  x = _finite(values)
  n = len(x)
  if n < 2:
    mean = float(x.mean()) if n else math.nan
    return {'mean': mean, 'low': math.nan, 'high': math.nan, 'half_width': math.nan, 'n': n}
  half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1) * x.std(ddof=1) * math.sqrt(1 + 1 / n))
  mean = float(x.mean())
  return {'mean': mean, 'low': mean - half, 'high': mean + half, 'half_width': half, 'n': n}


def bootstrap_interval(values, statistic: Callable[[np.ndarray], float] = np.mean,
                       resamples: int = 2000, seed: int = 0,
                       confidence: float = CONFIDENCE) -> dict:
  """Percentile bootstrap interval over the rows of `values` (NaN rows dropped).

  Returns:
    {'estimate', 'low', 'high', 'n', 'resamples'}.
  """
  x = np.asarray(values, np.float64)
  x = x[np.isfinite(x)]
  n = len(x)
  if n == 0:
    return {'estimate': math.nan, 'low': math.nan, 'high': math.nan, 'n': 0, 'resamples': resamples}
  rng = np.random.default_rng(seed)
  draws = np.empty(resamples)
  for start in range(0, resamples, 256):  # bounded memory for long test sets
    stop = min(start + 256, resamples)
    index = rng.integers(0, n, size=(stop - start, n))
    draws[start:stop] = [statistic(x[row]) for row in index] if statistic is not np.mean \
        else x[index].mean(axis=1)
  tail = (1 - confidence) / 2
  low, high = np.quantile(draws, [tail, 1 - tail])
  return {'estimate': float(statistic(x)), 'low': float(low), 'high': float(high), 'n': n,
          'resamples': resamples}


def contains(interval: dict, value: Optional[float]) -> Optional[bool]:
  """Whether `value` lies in [low, high]; None when either is unknown."""
  if value is None or not math.isfinite(interval.get('low', math.nan)):
    return None
  return bool(interval['low'] <= value <= interval['high'])


def _finite(values) -> np.ndarray:
  return np.asarray([v for v in values if v is not None and math.isfinite(v)], np.float64)


def welch_t_test(a, b) -> dict:
  """Welch's two-sample t-test of equal means, variances not assumed equal.

  For comparing two implementations over their seeds: each side's seeds
  scatter by their own amount (different code, different noise), so the
  pooled-variance Student test does not fit. With means m, sample variances
  s² (ddof 1) and sizes n of the values that are neither None nor NaN,

      v_a = s_a² / n_a,  v_b = s_b² / n_b
      t   = (m_a − m_b) / √(v_a + v_b)
      df  = (v_a + v_b)² / (v_a² / (n_a − 1) + v_b² / (n_b − 1))   (Welch–Satterthwaite)
      p   = 2 · P(T_df > |t|)                                        (two-sided)

  as `scipy.stats.ttest_ind(a, b, equal_var=False)`.

  Returns:
    {'t', 'df', 'p', 'n_a', 'n_b', 'mean_a', 'mean_b'}. A mean is None for a
    side with no values; t, df and p are None when either side has fewer
    than 2 values (no spread to test against). When both sides are constant
    (v_a + v_b = 0) df is None and the test is decided by the means alone:
    equal means give t = 0, p = 1; different means t = ±inf, p = 0 (scipy
    returns NaN for the first).
  """
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  x, y = _finite(a), _finite(b)
  out = {'t': None, 'df': None, 'p': None, 'n_a': len(x), 'n_b': len(y),
         'mean_a': float(x.mean()) if len(x) else None, 'mean_b': float(y.mean()) if len(y) else None}
  if len(x) < 2 or len(y) < 2:
    return out
  # An exactly constant side has no spread (np.var can leave rounding dust).
  va, vb = (float(v.var(ddof=1)) / len(v) if v.min() < v.max() else 0.0 for v in (x, y))
  difference = out['mean_a'] - out['mean_b']
  if va + vb == 0:
    return {**out, 't': 0.0 if difference == 0 else math.copysign(math.inf, difference),
            'p': 1.0 if difference == 0 else 0.0}
  t = difference / math.sqrt(va + vb)
  df = (va + vb) ** 2 / (va ** 2 / (len(x) - 1) + vb ** 2 / (len(y) - 1))
  return {**out, 't': float(t), 'df': float(df), 'p': float(2 * scipy.stats.t.sf(abs(t), df))}
