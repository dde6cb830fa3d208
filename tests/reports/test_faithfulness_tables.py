"""The faithfulness report's tables (attn_jax.tables.faithfulness): over seeds
where a run has several, over documents where it has one, each number what
the statistics functions give on the summaries' values."""

import numpy as np
import pytest

from attn_jax.analysis import eraser_comparisons as comparisons, statistics, verdicts
from attn_jax.tables import faithfulness
from attn_jax.tables.report_registry import SECTIONS, tables

NAMES = ['alpha', 'leave_one_out', 'random']
LABELS = {'alpha': 'α', 'leave_one_out': 'leave-one-out', 'random': 'random'}


def summary(seed: int, documents: int = 40, names=NAMES) -> dict:
  """An `eraser` summary as the stage writes it, from made-up per-document AOPC
  (leave-one-out above random by 0.05 in comprehensiveness)."""
  rng = np.random.default_rng(seed)
  shift = {'alpha': 0.01, 'leave_one_out': 0.05, 'random': 0.0}
  aopc = {}
  for metric in faithfulness.METRICS:
    values = np.stack([rng.normal(0.1 + shift[n] * (metric == 'comprehensiveness'), 0.02, documents)
                       for n in names], axis=1)
    aopc[metric] = comparisons.compare_measures(comparisons.columns(values, names), 0.02, seed=seed)
  return {'measures': names, 'labels': {n: LABELS[n] for n in names}, 'margin': 0.02, 'n': documents,
          'no_words': {'0.01': 7, '0.05': 0}, 'aopc': aopc}


def test_one_model_is_shown_over_its_documents():
  s = summary(0)
  found = faithfulness.run_tests([s])
  assert found['over'] == 'documents' and found['n'] == 40 and found['names'] == NAMES
  rows = faithfulness.measure_rows([('sst cnn', [s])])
  assert rows[0][2] == 'measure' and [r[2] for r in rows[1:]] == ['α', 'leave-one-out', 'random']
  mean = s['aopc']['comprehensiveness']['means']['leave_one_out']
  assert rows[2][3] == f'{mean["mean"]:.3f} [{mean["low"]:.3f}, {mean["high"]:.3f}]'
  test = s['aopc']['comprehensiveness']['vs_random']['leave_one_out']
  assert rows[2][4].endswith(verdicts.SYMBOLS[test['verdict']]) and rows[3][4] == '–'
  assert any('1 %: 7' in line for line in faithfulness.notes([('sst cnn', [s])]))


def test_several_seeds_are_shown_over_seeds_paired_by_seed():
  seeds = [summary(k) for k in range(4)]
  found = faithfulness.run_tests(seeds)
  assert found['over'] == 'seeds' and found['n'] == 4
  for metric in faithfulness.METRICS:
    per_seed = {n: [s['aopc'][metric]['means'][n]['mean'] for s in seeds] for n in NAMES}
    for n in NAMES:
      ci = statistics.t_interval(per_seed[n])
      assert found[metric]['means'][n]['mean'] == pytest.approx(ci['mean'])
      assert found[metric]['means'][n]['high'] == pytest.approx(ci['high'])
    want = verdicts.compare(per_seed['leave_one_out'], per_seed['random'], 0.02, paired=True)
    got = found[metric]['vs_random']['leave_one_out']
    assert got['difference'] == pytest.approx(want['difference']) and got['verdict'] == want['verdict']
    pair, = found[metric]['pairs']
    assert (pair['a'], pair['b']) == ('alpha', 'leave_one_out')
    assert pair['difference'] == pytest.approx(np.mean(per_seed['alpha']) - np.mean(per_seed['leave_one_out']))
  # Leave-one-out's comprehensiveness lies 0.05 above random, beyond the 0.02 margin.
  assert found['comprehensiveness']['vs_random']['leave_one_out']['verdict'] == verdicts.DIFFERENT
  pairs = faithfulness.pair_rows([('sst cnn', seeds)])
  assert len(pairs) == 2 and pairs[1][1] == '4 seeds' and '(Holm ' in pairs[1][4]


def test_a_measure_one_seed_lacks_is_left_out_of_the_seeds_tests():
  seeds = [summary(0), summary(1, names=['alpha', 'random'])]
  assert faithfulness.run_tests(seeds)['names'] == ['alpha', 'random']


def test_the_stage_rows_and_the_report_section_are_registered():
  assert any(t.name == 'eraser' and t.paper == 'faithfulness' for t in tables('stage'))
  rows = faithfulness.stage_rows('run', 'sst', summary(0))
  assert len(rows) == 3 and rows[1][1] == 'ERASER AOPC: leave-one-out' and 'vs random' in rows[1][2]
  assert 'vs random' not in rows[2][2]  # the random ranking is the baseline itself
  section = next(s for s in SECTIONS.values() if s.paper == 'faithfulness')
  assert section.sections([]) == [] and 'analyses=eraser' in section.missing([])
