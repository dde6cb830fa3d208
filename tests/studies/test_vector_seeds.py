"""The vector-seed study: its arms are the J&W grid's BiLSTM + tanh models but
for the vectors (vector seed k, model seed k), and its report sets the grid's
interval over model seeds beside the one over vectors and model seeds."""

import json
import math
import shutil

import pytest

from attn_jax.analysis import verdicts
from attn_jax import config as config_lib
from attn_jax.analysis import statistics
from attn_jax.workdirs import model_axis
from attn_jax.tables import studies as report, study_seeds
from attn_jax.studies import STUDIES, study_runner as runner, vector_seeds
from attn_jax.studies import __main__ as cli
from reference_trees import SPREAD, ours

STUDY = STUDIES['vector_seeds']
GRID = STUDIES['jw_grid']
SST = (0.81, 0.45, 0.29, 0.60)  # the grid's sst_bilstm_tanh: accuracy and the three τ, ± SPREAD
VECTORS = (-0.03, 0.0, 0.02, 0.04)  # the study's four SST models, about the same means


def one_model(folder, values):
  """A finished model trained alone (no seed axis): its arm's folder is the model's."""
  kendall = folder / 'analyses' / 'kendall' / 'test-10docs-0123456789abcdef'
  kendall.mkdir(parents=True)
  (folder / 'eval.json').write_text(json.dumps({'accuracy': values[0]}))
  pairs = {p: {'overall': {'nanmean': v}} for p, v in zip(report.TAU_PAIRS, values[1:])}
  (kendall / 'summary.json').write_text(
      json.dumps({'key': {'split': 'test', 'stage': 'kendall'}, 'documents': 10, 'pairs': pairs}))


@pytest.fixture
def tree(tmp_path):
  """results/jw_grid with SST's row (5 seeds) and IMDB's with one seed;
  results/vector_seeds with SST's four arms and one IMDB arm."""
  results = tmp_path / 'results'
  ours(results / 'jw_grid', 'sst_bilstm_tanh', SST)
  ours(results / 'jw_grid', 'imdb_bilstm_tanh', (0.88, 0.40, 0.30, 0.50))
  for k in range(1, 5):  # IMDB's grid row: seed0 only
    shutil.rmtree(results / 'jw_grid' / 'imdb_bilstm_tanh' / f'seed{k}')
  for k, d in zip(range(1, 5), VECTORS):
    one_model(results / 'vector_seeds' / f'sst_bilstm_tanh_vectors{k}', [m + d for m in SST])
  one_model(results / 'vector_seeds' / 'imdb_bilstm_tanh_vectors1', (0.87, 0.41, 0.31, 0.52))
  return results


def test_each_arm_is_the_grid_model_of_its_seed_but_for_the_vectors():
  assert [a.name for a in STUDY.arms] == [f'{d}_bilstm_tanh_vectors{k}' for d in ('sst', 'imdb')
                                          for k in (1, 2, 3, 4)]
  assert STUDY.seeds == 1 and STUDY.kind == 'vector_seeds'
  assert STUDY.analyses == 'gradient,loo,kendall,attention'
  for arm in STUDY.arms:
    k = int(arm.name.rpartition('vectors')[2])
    cfg = arm.config(STUDY.seeds, STUDY.analyses)
    assert cfg.vectors.seed == k and cfg.seed == k and cfg.sweep == '' and cfg.name == arm.name
    # One model, the config itself: trained from model seed k.
    assert [(m.cfg.seed, m.workdir) for m in model_axis.members(cfg, '/w')] == [(k, '/w')]
    # The grid's model seed{k} (one program of seeds 0..4, batch order of seed 0) differs only in the vectors.
    grid_arm = next(a for a in GRID.arms if a.name == arm.name.rpartition('_')[0])
    # (the shared-order grid the committed arms compare with; a study's arms draw their own orders since)
    grid_cfg = grid_arm.config(GRID.seeds, GRID.analyses)
    config_lib.set_key(grid_cfg, 'train.batch_order', 'shared')
    grid_model = model_axis.model_config(grid_cfg, {'seed': k})
    ours_items, grid_items = config_lib.training_items(cfg), config_lib.training_items(grid_model)
    assert {key for key in ours_items.keys() | grid_items.keys()
            if ours_items.get(key) != grid_items.get(key)} == {'vectors.seed'}
    assert grid_items['vectors.seed'] == 0


def test_the_table_sets_model_seeds_beside_vectors_and_model_seeds(tree, capsys):
  rows = report.write(STUDY, str(tree / 'vector_seeds'))
  assert rows[0][:6] == ['dataset', 'statistic', 'model seeds only', 'n', 'vectors and model seeds', 'n']
  assert [r[:2] for r in rows[1:]] == [[d, s] for d in ('sst', 'imdb') for s in
                                       ('accuracy', 'τ(α, gradient)', 'τ(α, LOO)', 'τ(gradient, LOO)')]
  for row, mean in zip(rows[1:5], SST):
    model_only = statistics.t_interval([mean + d for d in SPREAD])
    both = statistics.t_interval([mean + SPREAD[0]] + [mean + d for d in VECTORS])  # the grid's seed0 first
    assert row[2] == report.cell(model_only) and row[3] == '5'
    assert row[4] == report.cell(both) and row[5] == '5'
    assert row[6] == f'{both["half_width"] / model_only["half_width"]:.2f}'
    assert row[7] == f'{both["std"] / model_only["std"]:.2f}'
    assert float(row[6]) == pytest.approx(both['half_width'] / model_only['half_width'], abs=0.005)
    # Whether the vectors move the mean: TOST of the two sides at the statistic's margin.
    margin = 0.02 if row[1] == 'accuracy' else 0.05
    test = verdicts.compare([mean + SPREAD[0]] + [mean + d for d in VECTORS],
                                       [mean + d for d in SPREAD], margin)
    assert row[8].startswith(verdicts.SHORT[test['verdict']] + ' (Δ ') and test['verdict'] in ('equivalent', 'inconclusive')
  assert rows[1][2] == '0.810 ± 0.010' and rows[1][4] == '0.814 ± 0.034' and rows[1][6] == '3.42'
  # IMDB: the grid's seed0 alone on the model-seed side (no interval, no ratio);
  # with the study's one IMDB model, two on the other side.
  imdb = (0.88, 0.40, 0.30, 0.50)
  for row, mean, study_model in zip(rows[5:], imdb, (0.87, 0.41, 0.31, 0.52)):
    assert row[2:] == ['–', '1', report.cell(statistics.t_interval([mean + SPREAD[0], study_model])), '2', '–', '–',
                       '–']
  assert 'model seeds only' in capsys.readouterr().out


def test_a_side_with_fewer_than_two_models_prints_a_dash(tmp_path):
  root = tmp_path / 'results' / 'vector_seeds'
  root.mkdir(parents=True)
  rows = study_seeds.vector_seed_rows(STUDY, str(root))  # no grid, no model
  assert all(r[2:] == ['–', '0', '–', '0', '–', '–', '–'] for r in rows[1:])
  one_model(root / 'sst_bilstm_tanh_vectors1', SST)
  ours(tmp_path / 'results' / 'jw_grid', 'sst_bilstm_tanh', SST)
  rows = study_seeds.vector_seed_rows(STUDY, str(root))
  accuracy = rows[1]
  # The grid's seed0 and one arm's model: two, an interval; the ratio with the grid's five.
  assert accuracy[3] == '5' and accuracy[5] == '2' and accuracy[4] != '–' and accuracy[6] != '–'
  assert not math.isnan(float(accuracy[6]))


def test_save_copies_the_models_and_the_readme_block_is_rewritten(tree, tmp_path):
  work = tmp_path / 'workdirs'
  (work / 'vector_seeds').mkdir(parents=True)
  for k in range(1, 5):  # the arms trained in workdirs, the grid committed in results
    arm = f'sst_bilstm_tanh_vectors{k}'
    (tree / 'vector_seeds' / arm).rename(work / 'vector_seeds' / arm)
  (tmp_path / 'setup.cfg').write_text('')
  doc = tmp_path / 'docs' / 'jain_wallace.md'
  doc.parent.mkdir()
  doc.write_text('before\n<!-- vector_seeds-table:start -->\nNo vector-seed models yet.\n'
                 '<!-- vector_seeds-table:end -->\nafter\n')
  rows = report.write(STUDY, str(work / 'vector_seeds'), str(tree / 'vector_seeds'), [str(doc)])
  assert (tree / 'vector_seeds' / 'sst_bilstm_tanh_vectors3' / 'eval.json').exists()
  assert list((tree / 'vector_seeds' / 'sst_bilstm_tanh_vectors3' / 'analyses' / 'kendall').glob('*/summary.json'))
  assert rows[1][5] == '5'  # read from the saved copies, beside results/jw_grid
  text = doc.read_text()
  assert 'No vector-seed models yet.' not in text and text.startswith('before\n') and text.endswith('after\n')
  assert ('`python -m attn_jax.studies report vector_seeds --root=results/vector_seeds '
          '--readme docs/jain_wallace.md`') in text
  assert '| sst | accuracy | 0.810 ± 0.010 | 5 | 0.814 ± 0.034 | 5 | 3.42 |' in text
  assert '`results/jw_grid/<dataset>_bilstm_tanh/<seed>/eval.json`' in text
  # A document without the block is left alone (optional), not refused.
  other = tmp_path / 'README.md'
  other.write_text('no block\n')
  report.write(STUDY, str(tree / 'vector_seeds'), readme=[str(other)])
  assert other.read_text() == 'no block\n'


def test_the_study_is_registered_for_the_command_line(tree, capsys):
  assert vector_seeds.ARMS == STUDY.arms
  assert [a.name for a in runner.select(STUDY, 'sst_*')] == [f'sst_bilstm_tanh_vectors{k}' for k in (1, 2, 3, 4)]
  cli.main(['report', 'vector_seeds', f'--root={tree / "vector_seeds"}'])
  assert 'sst      accuracy          0.810 ± 0.010     5  0.814 ± 0.034' in capsys.readouterr().out
  description = ' '.join(STUDY.description.split())
  assert 'vector seed k, with model seed k, for k = 0..4, where k = 0 is the J&W grid\'s seed 0' in description
  assert '5 models whose vectors AND model seeds both vary' in description


def test_the_grid_of_the_same_recipe_can_be_named(tree, capsys):
  """A grid trained with another recipe than the beside one (results/jw_grid_fixed)."""
  (tree / 'jw_grid').rename(tree / 'jw_grid_fixed')
  assert report.write(STUDY, str(tree / 'vector_seeds'))[1][3] == '0'  # none beside
  capsys.readouterr()
  cli.main(['report', 'vector_seeds', f'--root={tree / "vector_seeds"}', f'--reference={tree / "jw_grid_fixed"}'])
  out = capsys.readouterr().out
  assert 'jw_grid_fixed' in out
  rows = study_seeds.vector_seed_rows(STUDY, str(tree / 'vector_seeds'), str(tree / 'jw_grid_fixed'))
  assert rows[1][3] == '5' and rows[1][5] == '5'


def test_a_root_of_another_recipe_writes_a_block_of_its_own(tree, tmp_path):
  (tree / 'vector_seeds').rename(tree / 'vector_seeds_lstm2')
  (tmp_path / 'setup.cfg').write_text('')
  doc = tmp_path / 'docs' / 'jain_wallace.md'
  doc.parent.mkdir()
  doc.write_text('<!-- vector_seeds-table:start -->\nthe default\n<!-- vector_seeds-table:end -->\n'
                 '<!-- vector_seeds-table-vector_seeds_lstm2:start -->\n<!-- vector_seeds-table-vector_seeds_lstm2:end -->\n')
  report.write(STUDY, str(tree / 'vector_seeds_lstm2'), readme=[str(doc)], reference=str(tree / 'jw_grid'))
  default, variant = doc.read_text().split('<!-- vector_seeds-table:end -->')
  assert 'the default' in default  # the study's own block is left alone
  assert '| sst | accuracy |' in variant and '--root=results/vector_seeds_lstm2' in variant
