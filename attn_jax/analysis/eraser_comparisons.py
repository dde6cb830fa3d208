"""Which measure's AOPC stands apart: intervals, the difference from a random
ranking and paired tests between measures (`attn_jax.analysis.eraser_metrics`).

One function for both kinds of sample the reports have: the per-document
AOPC of one model (the `eraser` stage's summary: bootstrap intervals over
documents) and the per-seed mean AOPC of several models (the report's
tables: Student-t intervals over seeds). Either way the rows of every
column are paired (the same documents, or the same seeds, for every
measure), so the differences are paired tests (`verdicts.compare(...,
paired=True)`).

Comprehensiveness is larger for a more faithful ranking; sufficiency
smaller (keeping the top words alone changes p(ŷ) less). A difference is
always column − the other, whichever way is better.
"""

import itertools
from typing import Literal

import numpy as np

from attn_jax.analysis import statistics, verdicts

RANDOM = 'random'  # the column of the random ranking (the mean of its rows where there are several)
# What each stored test keeps of `verdicts.compare` (its p_tost too, for Holm's counts).
TEST_FIELDS = ('difference', 'low95', 'high95', 'low90', 'high90', 'p_zero', 'p_tost', 'verdict', 'n_a')


def columns(values: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
  """[n, M] values of the rows `names` -> {name: [n]}, the random rows ('random',
  or 'random_0', 'random_1', ...) averaged into one `RANDOM` column, last.

  Args:
    values: [n, M] per document (or per seed) AOPC of each row.
    names: the M row names, in order.

  Returns:
    {name: [n] float64}: the measures in `names` order, then `RANDOM`.
  """
  values = np.asarray(values, np.float64)
  randoms = [i for i, n in enumerate(names) if is_random(n)]
  out = {n: values[:, i] for i, n in enumerate(names) if not is_random(n)}
  if randoms:
    out[RANDOM] = values[:, randoms].mean(axis=1)
  return out


def is_random(name: str) -> bool:
  """Whether row `name` is a random ranking's."""
  return name == RANDOM or name.startswith(RANDOM + '_')


def _test(a, b, margin: float) -> dict:
  found = verdicts.compare(a, b, margin, paired=True)
  return {k: found[k] for k in TEST_FIELDS}


def compare_measures(values: dict[str, np.ndarray], margin: float,
                     interval: Literal['bootstrap', 't'] = 'bootstrap', seed: int = 0) -> dict:
  """Each column's mean with its 95 % interval, each measure against the
  random column, and every pair of measures, paired over the rows.

  Args:
    values: {name: [n]} AOPC per document or per seed (`columns`); the
      `RANDOM` column, if any, is the baseline.
    margin: the equivalence margin of `verdicts.compare` (AOPC units).
    interval: 'bootstrap' (percentile bootstrap over rows: documents) or
      't' (Student-t over rows: seeds).
    seed: the bootstrap's seed.

  Returns:
    {'means': {name: {'mean', 'low', 'high', 'n'}},
     'vs_random': {measure: test} (absent without a random column),
     'pairs': [{'a', 'b', test..., 'p_zero_holm', 'verdict_holm'}]}, a
    test being `TEST_FIELDS` of `verdicts.compare(a, b, margin, paired=True)`;
    Holm's correction is across the pairs of this call (one family per metric).
  """
  means = {}
  for name, v in values.items():
    if interval == 'bootstrap':
      found = statistics.bootstrap_interval(v, seed=seed)
      means[name] = {'mean': found['estimate'], 'low': found['low'], 'high': found['high'], 'n': found['n']}
    else:
      found = statistics.t_interval(v)
      means[name] = {k: found[k] for k in ('mean', 'low', 'high', 'n')}
  measures = [n for n in values if n != RANDOM]
  out = {'means': means, 'pairs': []}
  if RANDOM in values:
    out['vs_random'] = {n: _test(values[n], values[RANDOM], margin) for n in measures}
  tests = [_test(values[a], values[b], margin) for a, b in itertools.combinations(measures, 2)]
  adjusted = verdicts.holm([t['p_zero'] for t in tests])
  corrected = verdicts.holm_verdicts(tests)
  for (a, b), test, p, verdict in zip(itertools.combinations(measures, 2), tests, adjusted, corrected):
    out['pairs'].append({'a': a, 'b': b, **test, 'p_zero_holm': p, 'verdict_holm': verdict})
  return out
