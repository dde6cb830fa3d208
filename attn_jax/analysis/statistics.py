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
interval (`contains`): no fixed tolerance.
"""

import math
from typing import Callable, Optional

import numpy as np
import scipy.stats

CONFIDENCE = 0.95


def t_interval(values, confidence: float = CONFIDENCE) -> dict:
  """Student-t interval of the mean of per-seed values (NaN values dropped).

  Returns:
    {'mean', 'low', 'high', 'half_width', 'n', 'std'}; with one value the
    bounds are NaN (a single seed says nothing about the spread).
  """
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
