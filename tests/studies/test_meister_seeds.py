"""The Meister et al. study with seeds: its arms follow their Table 4, and its
table sets each arm's interval over seeds beside the published number with
the one verdict function."""

import pytest

from attn_jax.analysis import statistics, verdicts
from attn_jax.papers import published
from attn_jax.studies import STUDIES, meister_seeds
from attn_jax.tables import meister_seeds_report as report

STUDY = STUDIES['meister_seeds']


def test_the_arms_are_meisters_rows_at_their_table_4_learning_rates():
  names = [a.name for a in STUDY.arms]
  assert names[:6] == ['sst_bilstm_softmax', 'sst_bilstm_sparsemax', 'sst_bilstm_sparsegen-64',
                       'sst_bilstm_sparsegen0.9', 'sst_transformer_softmax', 'sst_transformer_sparsemax']
  assert len(names) == 12 and STUDY.seeds == 5 and STUDY.kind == 'meister_seeds'
  for arm in STUDY.arms:
    cfg = arm.config(STUDY.seeds, STUDY.analyses)
    assert cfg.train.learning_rate == {'bilstm': 1e-4, 'transformer': 1e-5}[arm.encoder]
    assert cfg.train.weight_decay == 1e-5 and cfg.train.batch_order == 'own'
    assert cfg.model.attention == {'bilstm': 'tanh', 'transformer': 'dot'}[arm.encoder]
    assert cfg.sweep == 'seed=0,1,2,3,4' and 'importance' in cfg.analyses and 'state_importance' in cfg.analyses
  assert STUDY.arms[2].config(5, '').model.sparsegen_lambda == meister_seeds.LAMBDA_ENDS[0]


def test_the_table_tests_the_seeds_against_the_published_mean(monkeypatch):
  sst = {'accuracy': [0.82, 0.83, 0.81, 0.82, 0.83], 'entropy': [0.86, 0.85, 0.87, 0.86, 0.85],
         'g_y_x': [0.25, 0.27, 0.23, 0.26, 0.24], 'd_y_x': [0.35, 0.36, 0.34, 0.35, 0.36],
         'g_y_i': [0.80, 0.81, 0.79, 0.80, 0.80], 'd_y_i': [0.49, 0.50, 0.48, 0.49, 0.50]}
  unfinished = {k: v[:2] for k, v in sst.items()}
  values = {'sst_bilstm_softmax': sst, 'sst_bilstm_sparsegen-64': sst, 'sst_transformer_softmax': unfinished}
  empty = {k: [] for k in sst}
  monkeypatch.setattr(report, 'arm_values', lambda study, root, arm: values.get(arm.name, empty))
  table, notes = report.rows(STUDY, 'nowhere')
  assert [r[0] for r in table[1:]] == ['sst_bilstm_softmax', 'sst_bilstm_sparsegen-64', 'sst_transformer_softmax']
  row = table[1]
  assert row[1] == '5'
  paper = published.MEISTER_TABLE6[('sst', 'bilstm_softmax')]
  for column, (name, _, _, margin) in zip(row[2:], report.COLUMNS):
    want = report.published_values(STUDY.arms[0])[name][0]
    test = verdicts.compare(sst[name], want, margin)
    assert column.startswith(report.study_results.cell(statistics.t_interval(sst[name])))
    assert column.endswith(verdicts.SYMBOLS[test['verdict']])
  # By hand: τ(α, g_ŷ(x)) 0.25 ± small against Meister's 0.25: equivalent; entropy 0.858 against 0.93: different.
  assert paper['g_y_x'] == (0.25, 0.28) and row[4].endswith('(0.25 ± 0.28) ≡')
  assert row[3].endswith('(0.93 ± 0.05) ≠')
  # The λ-grid end has no published row; an unfinished row is shown, not tested.
  assert '(' not in table[2][3] and table[3][1] == '2 of 5 (unfinished)'
  assert not table[3][3].endswith(('≡', '≠', '?', 'Δ'))
  # Only the finished row with a published row is tested: 6 cells, entropy the one different.
  assert notes[0].startswith("against Meister et al.'s published mean, cells: 6 tested: 5 equivalent, 0 equivalent with a "
                            'difference smaller than the margin, 1 different, 0 inconclusive')


@pytest.mark.parametrize('arm_name,key', [('sst_bilstm_sparsemax', 'bilstm_sparsemax'),
                                          ('imdb_transformer_softmax', 'transformer_softmax')])
def test_published_values_are_meisters_row(arm_name, key):
  arm = next(a for a in STUDY.arms if a.name == arm_name)
  values = report.published_values(arm)
  assert values['entropy'] == published.MEISTER_TABLE1[(arm.dataset, key)]
  assert values['g_y_i'] == published.MEISTER_TABLE6[(arm.dataset, key)]['g_y_i']
  assert ('accuracy' in values) == key.endswith('softmax')
