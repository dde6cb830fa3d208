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


@pytest.mark.parametrize('n_a, n_b, scale_b, shift', [(2, 2, 1.0, 0.0), (5, 3, 4.0, 0.5), (5, 5, 0.1, -0.2),
                                                      (3, 9, 2.5, 1.0), (10, 4, 0.01, 0.03)])
def test_welch_t_test_equals_scipys(n_a, n_b, scale_b, shift):
  rng = np.random.default_rng(n_a * 100 + n_b)
  a, b = rng.normal(0.4, 0.05, size=n_a), rng.normal(0.4 + shift, 0.05 * scale_b, size=n_b)
  got = statistics.welch_t_test(a, b)
  ref = scipy.stats.ttest_ind(a, b, equal_var=False)
  np.testing.assert_allclose([got['t'], got['df'], got['p']], [ref.statistic, ref.df, ref.pvalue], rtol=1e-10)
  assert (got['n_a'], got['n_b']) == (n_a, n_b)
  assert got['mean_a'] == pytest.approx(a.mean()) and got['mean_b'] == pytest.approx(b.mean())


def test_welch_t_test_drops_missing_values_and_needs_two_on_each_side():
  a, b = [0.1, None, 0.3, float('nan'), 0.2], [0.5, 0.6, 0.4]
  got = statistics.welch_t_test(a, b)
  ref = scipy.stats.ttest_ind([0.1, 0.3, 0.2], b, equal_var=False)
  assert got['n_a'] == 3 and got['p'] == pytest.approx(ref.pvalue, rel=1e-10)
  one = statistics.welch_t_test([0.4], b)
  assert one['p'] is None and one['t'] is None and one['df'] is None
  assert one['n_a'] == 1 and one['mean_a'] == 0.4
  empty = statistics.welch_t_test([None, float('nan')], b)
  assert empty['n_a'] == 0 and empty['mean_a'] is None and empty['p'] is None


@pytest.mark.filterwarnings('ignore:Precision loss')  # scipy's, about the constant side
def test_welch_t_test_of_constant_samples_is_decided_by_their_means():
  same = statistics.welch_t_test([0.5, 0.5, 0.5], [0.5, 0.5])
  assert (same['t'], same['df'], same['p']) == (0.0, None, 1.0)  # scipy: NaN
  apart = statistics.welch_t_test([0.5, 0.5], [0.7, 0.7, 0.7])
  assert apart['t'] == -math.inf and apart['p'] == 0.0
  # One side constant is an ordinary test: all the spread is the other side's.
  got = statistics.welch_t_test([0.5, 0.5, 0.5], [0.4, 0.6, 0.55])
  ref = scipy.stats.ttest_ind([0.5, 0.5, 0.5], [0.4, 0.6, 0.55], equal_var=False)
  np.testing.assert_allclose([got['t'], got['df'], got['p']], [ref.statistic, ref.df, ref.pvalue], rtol=1e-10)


def test_prediction_interval_covers_one_more_draw_at_its_rate():
  # float64 by hand for one sample, then the coverage over many (a t-distributed pivot: exact).
  x = np.array([0.2, 0.25, 0.31, 0.27])
  got = statistics.prediction_interval(x)
  half = scipy.stats.t.ppf(0.975, 3) * x.std(ddof=1) * math.sqrt(1 + 1 / 4)
  assert (got['low'], got['high']) == (pytest.approx(x.mean() - half), pytest.approx(x.mean() + half))
  rng = np.random.default_rng(3)
  hits = [statistics.contains(statistics.prediction_interval(rng.normal(0, 1, 5)), rng.normal(0, 1))
          for _ in range(4000)]
  assert abs(np.mean(hits) - 0.95) < 0.015
  assert math.isnan(statistics.prediction_interval([0.3])['low'])
