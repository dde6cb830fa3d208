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
interval (`contains`): no fixed tolerance. "Are two implementations the
same?" is shown by an equivalence test at stated margins
(`equivalence_test`, TOST: shown equivalent, shown different or
inconclusive, with the seeds that would decide); Welch's test of a
difference (`welch_t_test`) cannot show sameness.
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


# Equivalence margins (issue 52): two implementations' means are "the same"
# when their difference is shown to lie within ± these.
MARGINS = {'accuracy': 0.02, 'f1': 0.02, 'tau': 0.05}


def equivalence_test(a, b, margin: float, alpha: float = 0.05, power: float = 0.8) -> dict:
  """Two one-sided Welch tests (TOST) of |mean_a − mean_b| < `margin`.

  Sameness is shown, not assumed: a test of difference that finds none says
  nothing when the seeds are few. With d = m_a − m_b, se = √(s_a²/n_a +
  s_b²/n_b) and Welch's df (as `welch_t_test`),

      p_lower = P(T_df > (d + margin) / se)     H0: d ≤ −margin
      p_upper = P(T_df < (d − margin) / se)     H0: d ≥ +margin
      p_tost  = max(p_lower, p_upper)

  equal to scipy's `ttest_ind(a + margin, b, equal_var=False,
  alternative='greater')` and `ttest_ind(a − margin, b, ..., 'less')`.
  The verdict reads the (1 − 2α) interval of d, d ± t_{1−α, df}·se:
  'equivalent' when it lies inside (−margin, margin) (p_tost < α),
  'different' when it lies wholly beyond ±margin (the difference is
  shown to exceed the margin), 'inconclusive' otherwise.

  `seeds_needed` (inconclusive cells): the seeds per side that would give
  TOST `power` at this margin if the means were equal and each side's
  spread were as observed: the smallest n with
  n ≥ (t_{1−α, 2n−2} + t_{1−(1−power)/2, 2n−2})² · (s_a² + s_b²) / margin².

  Returns:
    {'difference', 'low95', 'high95' (the 95 % Welch interval of d),
     'p_lower', 'p_upper', 'p', 'verdict', 'seeds_needed', 'n_a', 'n_b',
     'margin'}; with fewer than 2 values a side, every number is None and
    the verdict 'inconclusive'.
  """
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  x, y = _finite(a), _finite(b)
  out = {'difference': None, 'low95': None, 'high95': None, 'p_lower': None, 'p_upper': None, 'p': None,
         'verdict': 'inconclusive', 'seeds_needed': None, 'n_a': len(x), 'n_b': len(y), 'margin': margin}
  if len(x) < 2 or len(y) < 2:
    return out
  va_s, vb_s = (float(v.var(ddof=1)) if v.min() < v.max() else 0.0 for v in (x, y))
  va, vb = va_s / len(x), vb_s / len(y)
  d = float(x.mean() - y.mean())
  out['difference'] = d
  if va + vb == 0:  # no spread: the means decide
    inside = abs(d) < margin
    return {**out, 'low95': d, 'high95': d, 'p_lower': 0.0 if inside else 1.0, 'p_upper': 0.0 if inside else 1.0,
            'p': 0.0 if inside else 1.0, 'verdict': 'equivalent' if inside else 'different'}
  se = math.sqrt(va + vb)
  df = (va + vb) ** 2 / (va ** 2 / (len(x) - 1) + vb ** 2 / (len(y) - 1))
  half95 = float(scipy.stats.t.ppf(0.975, df)) * se
  p_lower = float(scipy.stats.t.sf((d + margin) / se, df))
  p_upper = float(scipy.stats.t.cdf((d - margin) / se, df))
  half = float(scipy.stats.t.ppf(1 - alpha, df)) * se
  if -margin < d - half and d + half < margin:
    verdict = 'equivalent'
  elif d - half >= margin or d + half <= -margin:
    verdict = 'different'
  else:
    verdict = 'inconclusive'
  out.update(low95=d - half95, high95=d + half95, p_lower=p_lower, p_upper=p_upper,
             p=max(p_lower, p_upper), verdict=verdict)
  if verdict == 'inconclusive':
    out['seeds_needed'] = seeds_for_equivalence(va_s + vb_s, margin, alpha, power)
  return out


def seeds_for_equivalence(variance_sum: float, margin: float, alpha: float = 0.05, power: float = 0.8,
                          most: int = 10_000) -> int:
  """Seeds per side for TOST to reach `power` at `margin` when the means are
  equal and s_a² + s_b² = `variance_sum` (see `equivalence_test`)."""
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  beta_quantile = 1 - (1 - power) / 2
  for n in range(2, most + 1):
    df = 2 * n - 2
    needed = (scipy.stats.t.ppf(1 - alpha, df) + scipy.stats.t.ppf(beta_quantile, df)) ** 2
    if n >= needed * variance_sum / margin ** 2:
      return n
  return most
