"""An arm's models trained one at a time, and finished from their saved records
on a machine that has no checkpoints (attn_jax.studies.saved_models)."""

import json
import os
import shutil

import jax
import pytest

from attn_jax.data.dataset import load_dataset
from attn_jax.tables import jain_wallace_summary as summary, studies as report
from attn_jax.studies import Arm, Study, saved_models, study_runner as runner
import helpers

pytestmark = [pytest.mark.usefixtures('optax_promotion'), pytest.mark.slow]
ANALYSES = 'gradient,loo,kendall'
ARM = Arm('synthetic_average_dot', 'synthetic', 'average', {'model.attention': 'dot'}, 'smoke')
STUDY = Study('tiny', (ARM,), analyses=ANALYSES, seeds=2, description='a test')
QUIET = {'train.progress': False}


def _run(root, logs=None, **kwargs):
  with jax.numpy_dtype_promotion('standard'):
    runner.run(STUDY, str(root), overrides=QUIET, log=(logs.append if logs is not None else lambda _: None),
               **kwargs)


def _results(folder):
  """What a table reads of one model: its evaluation (no timing) and its
  stages' summaries' numbers (no timing, no file hashes)."""
  timing = ('training_seconds', 'models_in_program', 'trained_in')
  evaluation = {k: v for k, v in json.loads((folder / 'eval.json').read_text()).items() if k not in timing}
  stages = {}
  for summary in sorted(folder.glob('analyses/*/*/summary.json')):
    numbers = json.loads(summary.read_text())
    stages[summary.parent.parent.name] = {k: v for k, v in numbers.items() if k not in (
        'seconds', 'compile_seconds', 'documents_per_second', 'sha256', 'summary_sha256', 'figures')}
  return evaluation, stages


@pytest.fixture(scope='module')
def together(tmp_path_factory):
  root = tmp_path_factory.mktemp('together')
  _run(root)
  return root


@pytest.fixture(scope='module')
def saved(together, tmp_path_factory):
  """The arm's records as `report --save` keeps them: no checkpoints, no arrays."""
  target = tmp_path_factory.mktemp('saved')
  report.save(STUDY, str(together), str(target))
  return target


def test_models_trained_one_at_a_time_are_the_models_of_the_program(together, tmp_path):
  _run(tmp_path, one_at_a_time=True)
  for seed in ('seed0', 'seed1'):
    alone = tmp_path / ARM.name / seed
    assert (alone / 'checkpoints' / 'latest').is_dir()  # its own program of one
    assert _results(alone) == _results(together / ARM.name / seed)
  assert not (tmp_path / ARM.name / 'checkpoints').exists()  # no program of the arm's models
  entry, = json.loads((tmp_path / 'study.json').read_text())['arms'][ARM.name]
  assert entry['completed'] and entry['models_finished'] == 2 and entry['seconds'] > 0


def test_a_model_saved_is_finished_on_a_machine_without_its_checkpoints(together, saved, tmp_path):
  shutil.copytree(saved / ARM.name, tmp_path / ARM.name)  # a new machine: the committed records only
  logs = []
  _run(tmp_path, logs)
  assert any('2 of 2 model(s) finished in their saved records (seed0, seed1): not trained again' in line
             for line in logs)
  assert not list(tmp_path.glob('**/checkpoints'))
  assert report.grid_rows(STUDY, str(tmp_path))[1][:-1] == report.grid_rows(STUDY, str(together))[1][:-1]


def test_only_the_models_not_saved_are_trained_and_as_one_program_of_those(together, saved, tmp_path):
  (tmp_path / ARM.name).mkdir()
  shutil.copytree(saved / ARM.name / 'seed0', tmp_path / ARM.name / 'seed0')
  logs = []
  _run(tmp_path, logs)
  assert any('1 of 2 model(s) finished in their saved records (seed0)' in line for line in logs)
  assert not (tmp_path / ARM.name / 'seed0' / 'checkpoints').exists()
  assert (tmp_path / ARM.name / 'checkpoints' / 'latest').is_dir()  # seed1's program, in the arm's folder
  assert json.loads((tmp_path / ARM.name / 'config.json').read_text())['sweep'] == 'seed=1'
  assert _results(tmp_path / ARM.name / 'seed1') == _results(together / ARM.name / 'seed1')
  logs.clear()
  _run(tmp_path, logs)  # a rerun restores seed1 from its program and verifies its results
  assert any('1 of 2 model(s) finished in their saved records (seed0)' in line for line in logs)
  assert any('training already finished' in line for line in logs)
  assert sum('verified and skipped' in line for line in logs) == 3  # seed1's stages
  assert not any('documents in' in line for line in logs)  # nothing computed again


def test_records_of_another_model_or_other_analyses_do_not_finish_it(saved, tmp_path):
  cfg = ARM.config(2, ANALYSES)
  dataset = load_dataset(cfg.data)
  member = runner.model_axis.members(cfg, str(saved / ARM.name))[0]
  assert saved_models.problem(member.cfg, member.workdir, dataset) is None
  copy = tmp_path / 'seed0'
  shutil.copytree(member.workdir, copy)
  other = member.cfg.copy_and_resolve_references()
  other.analysis.loo.mode = 'replace'
  assert saved_models.problem(other, str(copy), dataset) == 'no finished loo results of these settings'
  other = member.cfg.copy_and_resolve_references()
  other.train.learning_rate *= 2
  assert saved_models.problem(other, str(copy), dataset) == 'config.json is of another model'
  other = member.cfg.copy_and_resolve_references()
  other.analyses = ANALYSES + ',permutation'
  assert saved_models.problem(other, str(copy), dataset) == 'no finished permutation results of these settings'
  shutil.rmtree(next((copy / 'analyses' / 'gradient').iterdir()))
  assert saved_models.problem(member.cfg, str(copy), dataset) == 'no finished gradient results of these settings'
  (copy / 'eval.json').write_text('{"split": "test"')  # cut short
  assert saved_models.problem(member.cfg, str(copy), dataset).startswith('its records do not read')


def test_another_study_reuses_saved_records_of_the_same_models(together, saved, tmp_path):
  twin = Study('twin', (Arm('same_models', 'synthetic', 'average', {'model.attention': 'dot'}, 'smoke'),),
               analyses='', seeds=2, description='a test')
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    runner.run(twin, str(tmp_path), overrides=QUIET, log=logs.append, reuse=[str(saved)])
  assert any(f'the same models as {saved / ARM.name}' in line for line in logs)
  assert any('2 of 2 model(s) finished in their saved records' in line for line in logs)
  for seed in ('seed0', 'seed1'):
    here = tmp_path / 'same_models' / seed
    assert json.loads((here / 'eval.json').read_text()) == json.loads(
        (together / ARM.name / seed / 'eval.json').read_text())
  assert not list(tmp_path.glob('**/checkpoints')) and not list(saved.glob('**/checkpoints'))


def test_a_run_cut_off_counts_its_time_up_to_its_last_finished_model(tmp_path):
  (tmp_path / 'study.json').write_text(json.dumps({'arms': {'a': [
      {'completed': False, 'seconds': None, 'seeds': 5, 'started': 1.0},  # cut off before any model
      {'completed': False, 'seconds': 600.0, 'seeds': 5, 'started': 2.0, 'models_finished': 2},
      {'completed': True, 'seconds': 900.0, 'seeds': 5, 'started': 3.0, 'models_finished': 3}]}}))
  assert report.wall_seconds(str(tmp_path), 'a') == (1500.0, True)


def test_a_row_with_fewer_seeds_than_its_study_is_shown_unfinished_and_not_counted(tmp_path):
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  grid, committed = STUDIES['jw_grid'], os.path.join(helpers.ROOT, 'results', 'jw_grid', 'imdb_bilstm_tanh')
  shutil.copytree(committed, tmp_path / 'imdb_bilstm_tanh')
  whole = report.grid_rows(grid, str(tmp_path))
  row = next(r for r in whole if r[0] == 'imdb_bilstm_tanh')
  assert row[2] == '5' and [r[0] for r in report.agreement_rows(grid, str(tmp_path))] == ['imdb_bilstm_tanh']
  assert any(line.startswith('imdb: BiLSTM + tanh') for line in report.patterns(grid, str(tmp_path)))
  for seed in range(1, 5):  # one model finished so far
    shutil.rmtree(tmp_path / 'imdb_bilstm_tanh' / f'seed{seed}')
  row = next(r for r in report.grid_rows(grid, str(tmp_path)) if r[0] == 'imdb_bilstm_tanh')
  assert row[2] == '1 of 5 (unfinished; not counted below)'
  assert report.agreement_rows(grid, str(tmp_path)) == [] and report.patterns(grid, str(tmp_path)) == []
  rows, counts = summary.rows_and_counts(grid, str(tmp_path), os.path.join(helpers.ROOT, 'results', 'jw_reference'))
  row = next(r for r in rows if r[0] == 'imdb_bilstm_tanh')
  assert row[1].startswith('1 of 5 (unfinished) / ') and counts['reach']['ours'] == []
  assert 'imdb_bilstm_tanh' in [name for name, _ in counts['reach']['code']]  # J&W's code's seeds still count


def test_w_and_p_table_says_an_arm_is_unfinished_and_computes_no_gap_from_it(tmp_path):
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  from attn_jax.tables import wiegreffe_pinter_table2_report as wp  # pylint: disable=g-import-not-at-top
  committed = os.path.join(helpers.ROOT, 'results', 'wp_table2')
  shutil.copytree(os.path.join(committed, '20news_learned'), tmp_path / '20news_learned')
  shutil.copytree(os.path.join(committed, '20news_uniform', 'seed0'), tmp_path / '20news_uniform' / 'seed0')
  table, notes = wp.rows(STUDIES['wp_table2'], str(tmp_path), str(tmp_path / 'no_reference'))
  uniform = next(r for r in table if r[:2] == ['20news', 'uniform'])
  assert uniform[2].endswith('(n=1 of 5, unfinished)')
  assert next(r for r in table if r[:2] == ['20news', 'learned'])[2].endswith('(n=5)')
  assert '20news: attn-jax: learned − uniform not computed: the uniform arm is unfinished' in notes
