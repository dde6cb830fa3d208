"""The one verdict function against scipy and a float64 loop by hand."""

import math

import numpy as np
import pytest
import scipy.stats

from attn_jax.analysis import verdicts


def _naive(a, b, margin, paired=False, alpha=0.05):
  """The four-way verdict from scipy's own tests, one hypothesis at a time."""
  if np.ndim(b) == 0:
    zero = scipy.stats.ttest_1samp(a, b).pvalue
    lower = scipy.stats.ttest_1samp(np.asarray(a) + margin, b, alternative='greater').pvalue
    upper = scipy.stats.ttest_1samp(np.asarray(a) - margin, b, alternative='less').pvalue
  elif paired:
    zero = scipy.stats.ttest_rel(a, b).pvalue
    lower = scipy.stats.ttest_rel(np.asarray(a) + margin, b, alternative='greater').pvalue
    upper = scipy.stats.ttest_rel(np.asarray(a) - margin, b, alternative='less').pvalue
  else:
    zero = scipy.stats.ttest_ind(a, b, equal_var=False).pvalue
    lower = scipy.stats.ttest_ind(np.asarray(a) + margin, b, equal_var=False, alternative='greater').pvalue
    upper = scipy.stats.ttest_ind(np.asarray(a) - margin, b, equal_var=False, alternative='less').pvalue
  equivalent, differs = max(lower, upper) < alpha, zero < alpha
  if equivalent:
    return ('equivalent_small' if differs else 'equivalent'), zero, max(lower, upper)
  return ('different' if differs else 'inconclusive'), zero, max(lower, upper)


@pytest.mark.parametrize('shift', [0.0, 0.01, 0.03, 0.045, 0.2])
@pytest.mark.parametrize('kind', ['welch', 'paired', 'one_sample'])
def test_compare_equals_scipys_tests(shift, kind):
  rng = np.random.default_rng(7)
  a = rng.normal(0.3, 0.02, 12)
  b = {'welch': rng.normal(0.3 + shift, 0.03, 9), 'paired': a - shift + rng.normal(0, 0.01, 12),
       'one_sample': 0.3 + shift}[kind]
  margin = 0.05
  got = verdicts.compare(a, b, margin, paired=kind == 'paired')
  verdict, p_zero, p_tost = _naive(a, b, margin, paired=kind == 'paired')
  assert got['verdict'] == verdict
  assert got['p_zero'] == pytest.approx(p_zero, rel=1e-9)
  assert got['p_tost'] == pytest.approx(p_tost, rel=1e-9)
  if kind == 'welch':
    low, high = scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
  elif kind == 'paired':
    low, high = scipy.stats.ttest_rel(a, b).confidence_interval(0.95)
  else:
    low, high = scipy.stats.ttest_1samp(a, b).confidence_interval(0.95)
    low, high = low - b, high - b
  assert (got['low95'], got['high95']) == (pytest.approx(low), pytest.approx(high))
  # The intervals and the p values say the same thing.
  assert got['equivalent'] == (-margin < got['low90'] and got['high90'] < margin) == (got['p_tost'] < 0.05)
  assert got['differs'] == (got['low95'] > 0 or got['high95'] < 0) == (got['p_zero'] < 0.05)


def test_the_four_verdicts_by_hand():
  # a: mean 1, s² = 2/3 · 0.01 (n 4); b = a + d: the same spread. se² = 2 s²/4, df = 6.
  base = np.array([0.9, 1.0, 1.0, 1.1])
  s2 = np.var(base, ddof=1)
  se = math.sqrt(2 * s2 / 4)
  t90, t95 = scipy.stats.t.ppf(0.95, 6), scipy.stats.t.ppf(0.975, 6)
  margin = t90 * se + 0.01
  assert verdicts.compare(base, base, margin)['verdict'] == 'equivalent'
  assert verdicts.compare(base, base, t90 * se - 0.001)['verdict'] == 'inconclusive'
  # A difference just beyond the 95 % half-width, inside a wide margin: equivalent, and different from zero.
  d = t95 * se + 0.001
  small = verdicts.compare(base + d, base, d + t90 * se + 0.01)
  assert small['verdict'] == 'equivalent_small' and small['difference'] == pytest.approx(d)
  # The same difference, a margin it does not fit inside: different (not beyond the margin).
  near = verdicts.compare(base + d, base, d)
  assert near['verdict'] == 'different' and not near['beyond_margin']
  # Wholly beyond the margin: different, and flagged.
  far = verdicts.compare(base, base + 0.05 + t90 * se + 0.001, 0.05)
  assert far['verdict'] == 'different' and far['beyond_margin']
  # No spread: the numbers decide; too few values: inconclusive, untested.
  assert verdicts.compare([1, 1], [1, 1], 0.02)['verdict'] == 'equivalent'
  assert verdicts.compare([1, 1], [1.01, 1.01], 0.02)['verdict'] == 'equivalent_small'
  assert verdicts.compare([1, 1], [1.03, 1.03], 0.02)['verdict'] == 'different'
  one = verdicts.compare([1], [1, 2], 0.02)
  assert one['verdict'] == 'inconclusive' and one['difference'] is None
  with pytest.raises(ValueError):
    verdicts.compare([1, 2], [1, 2], 0.0)


def test_paired_drops_incomplete_pairs_and_needs_equal_lengths():
  got = verdicts.compare([0.5, None, 0.7, 0.6], [0.4, 0.3, float('nan'), 0.5], 0.2, paired=True)
  assert got['n_a'] == 2 and got['difference'] == pytest.approx(0.1)
  with pytest.raises(ValueError):
    verdicts.compare([0.5, 0.6], [0.4], 0.2, paired=True)


def test_seeds_needed_says_what_more_seeds_can_decide():
  rng = np.random.default_rng(0)
  a, b = rng.normal(0, 0.05, 5), rng.normal(0, 0.05, 5)
  wide = verdicts.compare(a, b, 0.05)
  assert wide['verdict'] == 'inconclusive' and wide['seeds_needed_for'] == 'equivalence'
  var_sum = a.var(ddof=1) + b.var(ddof=1)
  n, room = wide['seeds_needed'], 0.05 - abs(wide['difference'])
  need = lambda k: (scipy.stats.t.ppf(0.95, 2 * k - 2) + scipy.stats.t.ppf(0.8, 2 * k - 2)) ** 2 * var_sum / room ** 2
  assert n >= need(n) and n - 1 < need(n - 1)
  assert 'if the difference' in verdicts.seeds_text(wide)
  # |Δ| beyond the margin: equivalence is out of reach; the figure is for a difference.
  beyond = verdicts.compare(rng.normal(0.08, 0.1, 4), rng.normal(0.0, 0.1, 4), 0.05)
  if beyond['verdict'] == 'inconclusive' and abs(beyond['difference']) >= 0.05:
    assert beyond['seeds_needed_for'] == 'difference' and 'no number of seeds' in verdicts.seeds_text(beyond)
  n = verdicts.seeds_for_difference(2 * 0.1 ** 2, 0.08)
  need = lambda k: (scipy.stats.t.ppf(0.975, 2 * k - 2) + scipy.stats.t.ppf(0.8, 2 * k - 2)) ** 2 * 0.02 / 0.08 ** 2
  assert n >= need(n) and n - 1 < need(n - 1)
  # Simulated: at the figure's n, the zero test detects a true difference of 0.08 about 80 % of the time.
  hits = [verdicts.compare(rng.normal(0.08, 0.1, n), rng.normal(0, 0.1, n), 0.05)['differs'] for _ in range(800)]
  assert 0.74 < np.mean(hits) < 0.88
  assert verdicts.seeds_for_equivalence(0.01, 0.05, difference=0.06) == 10_000


def test_holm_equals_the_step_down_definition():
  rng = np.random.default_rng(1)
  for _ in range(50):
    p = list(rng.uniform(0, 0.1, 6)) + [None]
    got = verdicts.holm(p)
    known = [x for x in p if x is not None]
    k = len(known)
    for i, x in enumerate(p):
      if x is None:
        assert got[i] is None
        continue
      # Rejected at α by Holm iff every smaller-or-equal p_(j) passes α / (k − j + 1).
      order = sorted(known)
      rank = order.index(x)
      for alpha in (0.01, 0.05):
        reject = all(order[j] < alpha / (k - j) for j in range(rank + 1))
        assert (got[i] < alpha) == reject


def test_count_tallies_measured_and_holm_verdicts():
  rng = np.random.default_rng(2)
  tests = [verdicts.compare(rng.normal(m, 0.02, 15), rng.normal(0.0, 0.02, 15), 0.05)
           for m in (0.0, 0.0, 0.02, 0.03, 0.2, 0.04)]
  counted = verdicts.count(tests)
  assert counted['tested'] == 6 and sum(counted['measured'].values()) == 6 == sum(counted['holm'].values())
  assert [counted['measured'][v] for v in verdicts.ORDER] == [
      sum(t['verdict'] == v for t in tests) for v in verdicts.ORDER]
  by_holm = verdicts.holm_verdicts(tests)
  assert [by_holm.count(v) for v in verdicts.ORDER] == [counted['holm'][v] for v in verdicts.ORDER]
  # Holm never shows more than the tests one at a time.
  assert counted['holm']['equivalent'] + counted['holm']['equivalent_small'] <= (
      counted['measured']['equivalent'] + counted['measured']['equivalent_small'])
