"""The batch-seed study: its arms are J&W grid models but for the batch order
(model seed k with batch seed k), and its report sets the grid's interval (one
batch order) beside the one over independent orders and J&W's code's, with
the equivalence test (TOST) of each against J&W's code."""

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from attn_jax.analysis import verdicts
from attn_jax import config as config_lib
from attn_jax.workdirs import model_axis
from attn_jax.tables import studies as report, study_results as collect, study_seeds
from attn_jax.studies import STUDIES, batch_seeds, study_runner as runner
from attn_jax.studies import __main__ as cli
from reference_trees import SPREAD, THEIRS, ours, theirs
from test_vector_seeds import one_model

STUDY = STUDIES['batch_seeds']
GRID = STUDIES['jw_grid']
FIDELITY = STUDIES['fidelity']
FROM_SCRATCH = {'imdb_bilstm_tanh_scratch': 'imdb_scratch_1'}  # the grid folder's link: fidelity's arm
ROW = (0.815, 0.63, 0.66, 0.61)  # the grid's sst_average_tanh: accuracy and the three τ, ± SPREAD
ORDERS = (-0.04, 0.03, 0.05, 0.07)  # the study's four models: wider, and higher on average
JW = (0.82, 0.64, 0.70, 0.60)  # J&W's code, ± THEIRS


@pytest.fixture
def tree(tmp_path):
  """results/jw_grid_lstm2 (sst_average_tanh, 5 seeds), results/jw_reference
  (J&W's code, 3 seeds), results/batch_seeds (the row's four arms)."""
  results = tmp_path / 'results'
  ours(results / 'jw_grid_lstm2', 'sst_average_tanh', ROW)
  theirs(results / 'jw_reference', 'sst_average_tanh', JW)
  for k, epoch in enumerate((7, 3, 6)):  # J&W's summaries count epochs from 0
    path = results / 'jw_reference' / 'sst_average_tanh' / f'seed{k}' / 'summary.json'
    path.write_text(json.dumps({**json.loads(path.read_text()), 'selected_epoch': epoch}))
  for k, d in zip(range(1, 5), ORDERS):
    one_model(results / 'batch_seeds' / f'sst_average_tanh_batches{k}', [m + d for m in ROW])
  return results


def test_each_arm_is_the_grid_model_of_its_seed_but_for_the_batch_order():
  assert STUDY.seeds == 1 and STUDY.kind == 'batch_seeds' and STUDY.analyses == 'gradient,loo,kendall'
  assert len(STUDY.arms) == sum(len(row[-1]) for row in batch_seeds.ROWS) == 4 * 6 + 2
  for arm in STUDY.arms:
    k = int(arm.name.rpartition('batches')[2])
    cfg = arm.config(STUDY.seeds, STUDY.analyses)
    assert cfg.seed == k and cfg.train.batch_seed == k and cfg.sweep == ''
    assert [(m.cfg.seed, m.cfg.train.batch_seed) for m in model_axis.members(cfg, '/w')] == [(k, k)]
    # The grid folder's from-scratch rows are the fidelity study's N(0, 1) arms.
    grid, row = (GRID, batch_seeds.arm_row(arm.name)) if 'scratch' not in arm.name else (
        FIDELITY, FROM_SCRATCH[batch_seeds.arm_row(arm.name)])
    grid_arm = next(a for a in grid.arms if a.name == row)
    grid_cfg = grid_arm.config(grid.seeds, grid.analyses)
    ours_items = config_lib.training_items(cfg)
    # A study's seed k draws its own batch order: the grid's model seed{k} is this arm.
    own = config_lib.training_items(model_axis.model_config(grid_cfg, {'seed': k}))
    assert own == ours_items
    # The grid as committed before (one program, one batch order: batch seed 0) differs in it alone.
    config_lib.set_key(grid_cfg, 'train.batch_order', 'shared')
    grid_items = config_lib.training_items(model_axis.model_config(grid_cfg, {'seed': k}))
    assert {key for key in ours_items.keys() | grid_items.keys()
            if ours_items.get(key) != grid_items.get(key)} == {'train.batch_seed'}
    assert grid_items['train.batch_seed'] == 0


def test_the_table_sets_one_order_beside_own_orders_and_j_w_code(tree):
  study_root = tree / 'batch_seeds'
  rows, counts = study_seeds.rows(STUDY, str(study_root), str(tree / 'jw_grid_lstm2'), str(tree / 'jw_reference'))
  notes = study_seeds.notes(STUDY.name, counts, 'GRID', 'REFERENCE')
  assert "the J&W grid's row (GRID)" in notes[0] and '(REFERENCE)' in notes[0]
  assert rows[0][:5] == ['configuration', 'statistic', 'attn-jax, one batch order', 'attn-jax, own batch orders',
                         'J&W code']
  assert [r[:2] for r in rows[1:]] == [['sst_average_tanh', s] for s in
                                       ('accuracy', 'τ(α, gradient)', 'τ(α, LOO)', 'τ(gradient, LOO)',
                                        'selected epoch (1 = first)')]
  # Shown from 1 on both sides, and not counted among the statistics compared.
  assert rows[5][4] == f"{report.cell(report.statistics.t_interval([8, 4, 7]), 1)} (n=3)"
  found = {'one': [], 'own': []}
  for row, mean, jw in zip(rows[1:], ROW, JW):
    one = [mean + d for d in SPREAD]
    own = [mean + SPREAD[0]] + [mean + d for d in ORDERS]  # the grid's seed0 first
    code = [jw + d for d in THEIRS]
    assert row[2] == f'{report.cell(report.statistics.t_interval(one))} (n=5)'
    assert row[3] == f'{report.cell(report.statistics.t_interval(own))} (n=5)'
    assert row[4] == f'{report.cell(report.statistics.t_interval(code))} (n=3)'
    margin = 0.02 if row[1] == 'accuracy' else 0.05
    for side, values, text in (('one', one, row[5]), ('own', own, row[6])):
      test = verdicts.compare(values, code, margin)
      assert text.startswith(verdicts.SHORT[test['verdict']] + ' (Δ ')
      found[side].append(test['verdict'])
    assert row[7] == f'{np.std(own, ddof=1) / np.std(one, ddof=1):.2f}'
  assert rows[5][5:7] == ['–', '–']  # the selected epoch: shown, not tested
  for side, label in (('one', 'one batch order'), ('own', 'own batch orders')):
    count = lambda v: found[side].count(v)
    assert (f'{label}: {len(found[side])} tested: {count("equivalent")} equivalent, {count("equivalent_small")} '
            f'equivalent with a difference smaller than the margin, {count("different")} different, '
            f'{count("inconclusive")} inconclusive') in notes[1]
  # τ(α, LOO) 0.04 below J&W's code with one order: not shown within the 0.05 margin, but off zero: different.
  assert rows[3][5].startswith('different (Δ -0.040')


def test_a_row_with_fewer_than_two_models_is_left_out(tree):
  rows, _ = study_seeds.rows(STUDY, str(tree / 'nothing'), str(tree / 'nothing'), str(tree / 'jw_reference'))
  assert rows[1:] == []


def test_report_reads_the_grid_and_j_w_code_beside_the_root_and_rewrites_its_block(tree, tmp_path, capsys):
  (tmp_path / 'setup.cfg').write_text('')
  doc = tmp_path / 'docs' / 'jain_wallace.md'
  doc.parent.mkdir()
  doc.write_text('<!-- batch_seeds-table:start -->\n<!-- batch_seeds-table:end -->\n')
  rows = report.write(STUDY, str(tree / 'batch_seeds'), readme=[str(doc)])
  assert len(rows) == 6
  text = doc.read_text()
  assert '`python -m attn_jax.studies report batch_seeds --root=results/batch_seeds' in text
  assert "the J&W grid's row (results/jw_grid_lstm2)" in text and '(results/jw_reference)' in text
  assert '| sst_average_tanh | accuracy |' in text
  capsys.readouterr()
  assert [a.name for a in runner.select(STUDY, 'sst_average_tanh*')] == [
      f'sst_average_tanh_batches{k}' for k in (1, 2, 3, 4)]
  cli.main(['report', 'batch_seeds', f'--root={tree / "batch_seeds"}'])
  assert 'own batch orders' in capsys.readouterr().out


def _config(folder, seed, batch_seed, vectors_seed=0, embeddings='in_domain'):
  folder.mkdir(parents=True, exist_ok=True)
  (folder / 'config.json').write_text(json.dumps(
      {'seed': seed, 'train': {'batch_seed': batch_seed}, 'vectors': {'seed': vectors_seed},
       'model': {'embeddings_file': embeddings}}))
  return str(folder)


def test_what_varies_among_a_rows_models_names_the_kind_of_interval(tmp_path):
  grid = [_config(tmp_path / 'grid' / f'seed{k}', k, 0) for k in range(5)]
  assert collect.varies(grid) == 'model seeds 0–4; one batch order; one set of vectors'
  own = [grid[0]] + [_config(tmp_path / f'b{k}', k, k) for k in (1, 2, 3, 4)]
  assert collect.varies(own) == 'model seeds 0–4; 5 batch orders; one set of vectors'
  # No train.batch_seed: the model seed draws the order.
  alone = [_config(tmp_path / f'a{k}', k, None, vectors_seed=k) for k in (0, 2)]
  assert collect.varies(alone) == 'model seeds 0, 2; 2 batch orders; 2 sets of vectors'
  scratch = [_config(tmp_path / f's{k}', k, 0, embeddings=None) for k in (0, 1)]
  assert collect.varies(scratch) == 'model seeds 0–1; one batch order; no pretrained vectors'
  assert collect.varies([str(tmp_path / 'nothing')]) is None
