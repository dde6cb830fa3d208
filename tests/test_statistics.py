"""Confidence intervals against scipy."""

import math

import numpy as np
import pytest
import scipy.stats

from attn_jax.analysis import statistics


@pytest.mark.parametrize('n', [2, 3, 5, 9])
def test_t_interval_equals_scipys(n):
  values = np.random.default_rng(n).normal(0.3, 0.05, size=n)
  got = statistics.t_interval(values)
  low, high = scipy.stats.t.interval(0.95, n - 1, loc=values.mean(), scale=scipy.stats.sem(values))
  np.testing.assert_allclose([got['low'], got['high']], [low, high], rtol=1e-12)
  assert got['n'] == n and got['mean'] == pytest.approx(values.mean())
  np.testing.assert_allclose(got['half_width'], (high - low) / 2, rtol=1e-12)


def test_t_interval_of_one_seed_has_no_bounds_and_nan_values_are_dropped():
  one = statistics.t_interval([0.4])
  assert one['mean'] == 0.4 and math.isnan(one['low']) and one['n'] == 1
  assert statistics.t_interval([0.1, float('nan'), None, 0.3])['n'] == 2
  assert statistics.contains(one, 0.4) is None


def test_bootstrap_interval_agrees_with_scipys_percentile_bootstrap():
  values = np.random.default_rng(0).gamma(2.0, 0.1, size=400)
  got = statistics.bootstrap_interval(values, resamples=20000, seed=1)
  ref = scipy.stats.bootstrap((values,), np.mean, n_resamples=20000, method='percentile',
                              confidence_level=0.95, rng=np.random.default_rng(2)).confidence_interval
  # Two independent sets of resamples: equal up to Monte Carlo error (~1 % of the width).
  width = ref.high - ref.low
  assert abs(got['low'] - ref.low) < 0.03 * width and abs(got['high'] - ref.high) < 0.03 * width
  assert got['low'] < values.mean() < got['high'] and got['n'] == 400


def test_bootstrap_interval_is_deterministic_and_takes_any_statistic():
  values = np.random.default_rng(3).normal(size=101)
  a = statistics.bootstrap_interval(values, np.median, resamples=500, seed=7)
  assert a == statistics.bootstrap_interval(values, np.median, resamples=500, seed=7)
  assert a['estimate'] == pytest.approx(np.median(values))
  with_nan = statistics.bootstrap_interval(np.r_[values, np.nan], np.median, resamples=500, seed=7)
  assert with_nan == a


def test_contains():
  interval = {'low': 0.2, 'high': 0.4}
  assert statistics.contains(interval, 0.3) and not statistics.contains(interval, 0.41)
  assert statistics.contains(interval, None) is None
