"""One verdict for every comparison of two sets of numbers.

Lakens, Scheel & Isager (2018), *Equivalence Testing for Psychological
Research: A Tutorial* (Advances in Methods and Practices in Psychological
Science 1(2)), combine two tests on the difference d = mean_a − mean_b:

* the test of a zero difference (two-sided, level α): its (1 − α) interval
  of d excludes 0 → the difference is shown;
* the two one-sided tests of equivalence, TOST (level α each): the
  (1 − 2α) interval of d lies inside (−m, +m) → equivalence at margin m
  is shown.

Together they give four outcomes, and `compare` returns exactly one:

| verdict | TOST | test of zero | reads |
|---|---|---|---|
| `equivalent` | shown | not shown | the same within ±m, no difference seen |
| `equivalent_small` | shown | shown | a difference, smaller than the margin |
| `different` | not shown | shown | a difference, not shown to be within ±m |
| `inconclusive` | not shown | not shown | these seeds decide neither |

A `different` cell whose (1 − 2α) interval lies wholly beyond ±m is also
flagged `beyond_margin` (the difference is shown to exceed the margin).

The comparison is two independent samples (Welch: each side's spread its
own, as two implementations' seeds), paired samples (`paired=True`: the
same seeds or documents on both sides, tested on their differences), or
one sample against a number (`b` a float: e.g. a ranking that does not
depend on the model).

`seeds_needed` says what more seeds can decide, and under which
assumption (`seeds_needed_for`):
* 'equivalence' (an inconclusive cell with |d| < m): the seeds per side that
  give TOST `power` *if the difference and each side's spread were as
  observed*;
* 'difference' (an inconclusive cell with |d| ≥ m, where no number of
  seeds can show equivalence if d is what it seems): the seeds per side
  that give the test of zero `power` *if the difference were d* as observed.

`holm` adjusts a family of p values (Holm 1979); `count` tallies verdicts
of a family, as measured and with Holm's correction applied to both tests.
"""

import math
from typing import Optional, Sequence

import numpy as np

ALPHA = 0.05
MOST_SEEDS = 10_000  # the seeds-needed search stops here: 'or more'

EQUIVALENT = 'equivalent'
EQUIVALENT_SMALL = 'equivalent_small'
DIFFERENT = 'different'
INCONCLUSIVE = 'inconclusive'
ORDER = (EQUIVALENT, EQUIVALENT_SMALL, DIFFERENT, INCONCLUSIVE)
# How tables and prose name each verdict, and the cell symbol beside a number.
WORDS = {EQUIVALENT: 'equivalent', EQUIVALENT_SMALL: 'equivalent, with a difference smaller than the margin',
         DIFFERENT: 'different', INCONCLUSIVE: 'inconclusive'}
SHORT = {EQUIVALENT: 'equivalent', EQUIVALENT_SMALL: 'equivalent, small difference',
         DIFFERENT: 'different', INCONCLUSIVE: 'inconclusive'}
SYMBOLS = {EQUIVALENT: '≡', EQUIVALENT_SMALL: '≡Δ', DIFFERENT: '≠', INCONCLUSIVE: '?'}
LEGEND = ('≡ equivalent (90 % interval of the difference inside ±margin, 95 % interval contains 0); '
          '≡Δ equivalent, with a difference smaller than the margin (both); '
          '≠ different (95 % interval excludes 0, not shown inside ±margin); ? inconclusive (neither)')

# Margins: two sets of numbers are "the same" when their difference is shown
# to lie within ± these: accuracy and F1 0.02, Kendall τ 0.05 (the margins of
# the comparisons with J&W's and W&P's code since they were first run);
# average precision of the evidence ranking 0.02 (set with the position
# baselines, before any measure was compared with them). Each table states
# its margins in its legend.
MARGINS = {'accuracy': 0.02, 'f1': 0.02, 'tau': 0.05, 'ap': 0.02}


def _finite(values) -> np.ndarray:
  return np.asarray([v for v in values if v is not None and math.isfinite(v)], np.float64)


def decide(equivalent: bool, differs: bool) -> str:
  """The verdict of the two tests' outcomes (the table above)."""
  if equivalent:
    return EQUIVALENT_SMALL if differs else EQUIVALENT
  return DIFFERENT if differs else INCONCLUSIVE


def compare(a, b, margin: float, *, paired: bool = False, alpha: float = ALPHA,
            power: float = 0.8) -> dict:
  """TOST at ±`margin` and the test of zero on mean(a) − mean(b): one verdict.

  With d the difference of means, se its standard error and df its degrees
  of freedom — Welch's for two samples (se = √(s_a²/n_a + s_b²/n_b),
  Welch–Satterthwaite df), n − 1 for paired samples or one sample against
  a number (se = s_d/√n) —

      p_zero  = 2 · P(T_df > |d| / se)                 H0: d = 0
      p_lower = P(T_df > (d + margin) / se)            H0: d ≤ −margin
      p_upper = P(T_df < (d − margin) / se)            H0: d ≥ +margin
      p_tost  = max(p_lower, p_upper)

  as scipy's `ttest_ind(a, b, equal_var=False)` and `ttest_ind(a ± margin,
  b, equal_var=False, alternative=...)` (for paired: `ttest_rel`,
  `ttest_1samp` for a number). TOST shows equivalence when p_tost < α
  (the 1 − 2α interval lies inside ±margin); the zero test a difference
  when p_zero < α (the 1 − α interval excludes 0).

  Args:
    a: values of one side (None and NaN dropped; for `paired`, dropped
      together with their partner).
    b: the other side's values, or a number (one-sample test against it).
    margin: the equivalence margin, > 0.
    paired: a[i] and b[i] belong together (same seed, same document).
    alpha: level of each test.
    power: for `seeds_needed`.

  Returns:
    {'difference', 'se', 'df', 'low90', 'high90' (the 1 − 2α interval),
     'low95', 'high95' (the 1 − α interval), 'p_zero', 'p_lower', 'p_upper',
     'p_tost', 'equivalent', 'differs', 'beyond_margin', 'verdict',
     'seeds_needed', 'seeds_needed_for', 'n_a', 'n_b', 'margin', 'paired'};
    with too few values (fewer than 2 a side, or 2 pairs) every number is
    None and the verdict 'inconclusive'.
  """
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  if margin <= 0:
    raise ValueError(f'margin must be > 0, got {margin}')
  one_sample = np.ndim(b) == 0
  if paired and not one_sample:
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)]
    if len(list(a)) != len(list(b)):
      raise ValueError(f'paired samples need equal lengths, got {len(list(a))} and {len(list(b))}')
    x = np.asarray([p[0] - p[1] for p in pairs], np.float64)
    y = None
  elif one_sample:
    x, y = _finite(a) - float(b), None
  else:
    x, y = _finite(a), _finite(b)
  out = {'difference': None, 'se': None, 'df': None, 'low90': None, 'high90': None, 'low95': None,
         'high95': None, 'p_zero': None, 'p_lower': None, 'p_upper': None, 'p_tost': None,
         'equivalent': False, 'differs': False, 'beyond_margin': False, 'verdict': INCONCLUSIVE,
         'seeds_needed': None, 'seeds_needed_for': None, 'n_a': len(x),
         'n_b': None if y is None else len(y), 'margin': margin, 'paired': bool(paired and not one_sample)}
  if len(x) < 2 or (y is not None and len(y) < 2):
    return out
  spread = lambda v: float(v.var(ddof=1)) if v.min() < v.max() else 0.0  # exactly constant: no rounding dust
  if y is None:
    var_sum = spread(x)
    d, v = float(x.mean()), var_sum / len(x)
    df = len(x) - 1.0
  else:
    va_s, vb_s = spread(x), spread(y)
    var_sum = va_s + vb_s
    va, vb = va_s / len(x), vb_s / len(y)
    d, v = float(x.mean() - y.mean()), va + vb
    df = (va + vb) ** 2 / (va ** 2 / (len(x) - 1) + vb ** 2 / (len(y) - 1)) if v > 0 else math.inf
  out['difference'] = d
  if v == 0:  # no spread: the numbers decide
    equivalent, differs = abs(d) < margin, d != 0
    out.update(se=0.0, low90=d, high90=d, low95=d, high95=d, p_zero=float(not differs),
               p_lower=float(not equivalent), p_upper=float(not equivalent), p_tost=float(not equivalent),
               equivalent=equivalent, differs=differs, beyond_margin=abs(d) >= margin,
               verdict=decide(equivalent, differs))
    return out
  se = math.sqrt(v)
  half90 = float(scipy.stats.t.ppf(1 - alpha, df)) * se
  half95 = float(scipy.stats.t.ppf(1 - alpha / 2, df)) * se
  p_lower = float(scipy.stats.t.sf((d + margin) / se, df))
  p_upper = float(scipy.stats.t.cdf((d - margin) / se, df))
  p_zero = float(2 * scipy.stats.t.sf(abs(d) / se, df))
  equivalent = -margin < d - half90 and d + half90 < margin
  differs = d - half95 > 0 or d + half95 < 0
  out.update(se=se, df=float(df), low90=d - half90, high90=d + half90, low95=d - half95, high95=d + half95,
             p_zero=p_zero, p_lower=p_lower, p_upper=p_upper, p_tost=max(p_lower, p_upper),
             equivalent=bool(equivalent), differs=bool(differs),
             beyond_margin=bool(d - half90 >= margin or d + half90 <= -margin),
             verdict=decide(equivalent, differs))
  if out['verdict'] == INCONCLUSIVE:
    sides = 1 if y is None else 2
    if abs(d) < margin:
      out.update(seeds_needed=seeds_for_equivalence(var_sum, margin, alpha, power, sides=sides, difference=d),
                 seeds_needed_for='equivalence')
    else:
      out.update(seeds_needed=seeds_for_difference(var_sum, d, alpha, power, sides=sides),
                 seeds_needed_for='difference')
  return out


def seeds_for_equivalence(variance_sum: float, margin: float, alpha: float = ALPHA, power: float = 0.8,
                          sides: int = 2, difference: float = 0.0, most: int = MOST_SEEDS) -> int:
  """Seeds per side for TOST to reach `power` at `margin` if the true
  difference were `difference` (|difference| < margin), with s_a² + s_b² =
  `variance_sum` (`sides`=1: the variance of one sample or of paired
  differences): the smallest n with
  n ≥ (t_{1−α, df} + t_{q, df})² · variance_sum / (margin − |difference|)²,
  q = 1 − (1 − power)/2 at difference 0 (both one-sided tests bind), else
  q = power (Lakens 2017's approximation)."""
  import scipy.stats  # pylint: disable=g-import-not-at-top
  room = margin - abs(difference)
  if room <= 0:
    return most
  quantile = 1 - (1 - power) / 2 if difference == 0 else power
  for n in range(2, most + 1):
    df = sides * (n - 1)
    needed = (scipy.stats.t.ppf(1 - alpha, df) + scipy.stats.t.ppf(quantile, df)) ** 2
    if n >= needed * variance_sum / room ** 2:
      return n
  return most


def seeds_for_difference(variance_sum: float, difference: float, alpha: float = ALPHA, power: float = 0.8,
                         sides: int = 2, most: int = MOST_SEEDS) -> int:
  """Seeds per side for the two-sided test of zero to reach `power` if the
  difference were `difference`: the smallest n with
  n ≥ (t_{1−α/2, df} + t_{power, df})² · variance_sum / difference²."""
  import scipy.stats  # pylint: disable=g-import-not-at-top
  if difference == 0:
    return most
  for n in range(2, most + 1):
    df = sides * (n - 1)
    needed = (scipy.stats.t.ppf(1 - alpha / 2, df) + scipy.stats.t.ppf(power, df)) ** 2
    if n >= needed * variance_sum / difference ** 2:
      return n
  return most


def holm(p_values: Sequence[Optional[float]]) -> list[Optional[float]]:
  """Holm's step-down adjusted p values (None stays None and is not counted
  in the family): p_(i) adjusted = max_{j ≤ i} min(1, (k − j + 1) · p_(j))
  over the k values sorted ascending. Reject where adjusted < α."""
  known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
  k = len(known)
  out: list[Optional[float]] = [None] * len(p_values)
  running = 0.0
  for rank, (p, i) in enumerate(known):
    running = max(running, min(1.0, (k - rank) * p))
    out[i] = running
  return out


def count(tests: Sequence[dict], alpha: float = ALPHA) -> dict:
  """Verdicts of a family of comparisons, as measured and with Holm's
  correction applied across the family to each test (TOST's p_tost and the
  zero test's p_zero, each its own family).

  Returns:
    {'tested': n, 'measured': {verdict: count}, 'holm': {verdict: count}}.
  """
  measured = {v: 0 for v in ORDER}
  corrected = {v: 0 for v in ORDER}
  for t in tests:
    measured[t['verdict']] += 1
  tost = holm([t['p_tost'] for t in tests])
  zero = holm([t['p_zero'] for t in tests])
  for t, p_eq, p_diff in zip(tests, tost, zero):
    corrected[decide(p_eq is not None and p_eq < alpha, p_diff is not None and p_diff < alpha)] += 1
  return {'tested': len(tests), 'measured': measured, 'holm': corrected}


def holm_verdicts(tests: Sequence[dict], alpha: float = ALPHA) -> list[str]:
  """Each test's verdict with Holm's correction across `tests` (see `count`)."""
  tost = holm([t['p_tost'] for t in tests])
  zero = holm([t['p_zero'] for t in tests])
  return [decide(e is not None and e < alpha, z is not None and z < alpha) for e, z in zip(tost, zero)]


def describe_counts(counts: dict, key: str = 'measured') -> str:
  """'36 equivalent, 4 equivalent with a difference smaller than the margin, 2 different, 14 inconclusive'."""
  c = counts[key]
  return (f'{c[EQUIVALENT]} equivalent, {c[EQUIVALENT_SMALL]} equivalent with a difference smaller than the '
          f'margin, {c[DIFFERENT]} different, {c[INCONCLUSIVE]} inconclusive')


def seeds_text(test: dict) -> str:
  """What more seeds can decide, with its assumption; '' where nothing is left to decide."""
  if not test.get('seeds_needed'):
    return ''
  n = f'{test["seeds_needed"]:,}' + (' or more' if test['seeds_needed'] >= MOST_SEEDS else '')
  if test['seeds_needed_for'] == 'equivalence':
    return (f'~{n} seeds a side would show equivalence if the difference '
            f'({test["difference"]:+.3f}) and spreads were as observed')
  return (f'~{n} seeds a side would show a difference if it were {test["difference"]:+.3f} '
          f'(no number of seeds shows equivalence at ±{test["margin"]:g} then)')
