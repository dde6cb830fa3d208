"""Studies: arms of seeds trained as programs, resumable, and their table."""

import json
import shutil

import jax
import pytest

from attn_jax.tables import studies as report, study_results as collect
from attn_jax.studies import Arm, Study, study_runner as runner

pytestmark = [pytest.mark.usefixtures('optax_promotion'), pytest.mark.slow]  # slow: scheduled first
TINY = Study('tiny', (Arm('synthetic_bilstm_tanh', 'synthetic', 'bilstm', {'model.attention': 'tanh'}, 'smoke'),
                      Arm('synthetic_average_dot', 'synthetic', 'average', {'model.attention': 'dot'}, 'smoke')),
             analyses='gradient,loo,kendall,attention,permutation,adversarial', seeds=2,
             description='a test')


@pytest.fixture(scope='module')
def ran(tmp_path_factory):
  root = tmp_path_factory.mktemp('study')
  with jax.numpy_dtype_promotion('standard'):
    runner.run(TINY, str(root), overrides={'train.progress': False}, log=lambda _: None)
  return root


@pytest.mark.heavy
def test_each_arm_trains_its_seeds_and_records_its_wall_time(ran):
  record = json.loads((ran / 'study.json').read_text())
  for arm in TINY.arms:
    assert [r['completed'] for r in record['arms'][arm.name]] == [True]
    numbers = collect.collect_arm(str(ran / arm.name))
    assert numbers['models'] == ['seed0', 'seed1']
    assert all(len(v) == 2 for v in numbers['values'].values())
    assert numbers['ci']['tau_attention_loo']['n'] == 2 and numbers['ci']['accuracy']['half_width'] >= 0


@pytest.mark.heavy
def test_the_table_has_one_row_per_arm_with_intervals_over_seeds(ran, tmp_path, capsys):
  readme = tmp_path / 'README.md'
  readme.write_text('<!-- tiny-table:start -->\n<!-- tiny-table:end -->\n')
  rows = report.write(TINY, str(ran), save_to=str(tmp_path / 'results'), readme=str(readme))
  assert [r[0] for r in rows[1:]] == ['synthetic_bilstm_tanh', 'synthetic_average_dot']
  assert all(r[1] == 'scratch σ=1.0' and r[2] == '2' and ' ± ' in r[3] for r in rows[1:])
  text = readme.read_text()
  assert '| synthetic_average_dot | scratch σ=1.0 | 2 |' in text and 'BiLSTM + tanh: τ(grad, LOO)' in text
  assert "synthetic: J&W's pattern, τ(grad, LOO) above τ(α, ·) for the BiLSTM (tanh): " in text
  saved = tmp_path / 'results' / 'synthetic_average_dot' / 'seed1'
  assert (saved / 'eval.json').exists() and len(list((saved / 'analyses' / 'kendall').glob('test-*docs-*/summary.json'))) == 1
  assert rows == report.write(TINY, str(tmp_path / 'results'))  # the saved files give the same table


@pytest.mark.heavy
def test_a_rerun_with_other_settings_is_refused_and_the_saved_model_kept(ran, tmp_path):
  saved = tmp_path / 'results'
  report.save(TINY, str(ran), str(saved))
  model = saved / 'synthetic_average_dot' / 'seed0'
  config = json.loads((model / 'config.json').read_text())
  config['model']['embeddings_file'] = 'in_domain'  # as saved by an earlier run with other vectors
  (model / 'config.json').write_text(json.dumps(config))
  old = model / 'analyses' / 'kendall' / 'test-9docs-0123456789abcdef'
  old.mkdir(parents=True)
  (old / 'summary.json').write_text('{}')
  kept = saved / 'synthetic_bilstm_tanh' / 'seed0' / 'analyses' / 'kendall' / 'test-9docs-0123456789abcdef'
  kept.mkdir(parents=True)
  # Another model where the saved one stands: refused before anything is copied, nothing of it replaced.
  with pytest.raises(report.errors.ConfigError, match='holds the saved records of another model'):
    report.save(TINY, str(ran), str(saved))
  assert old.exists() and kept.exists() and json.loads((model / 'config.json').read_text()) == config
  # Removed by its owner, it is saved anew; the same model saved again is only updated.
  shutil.rmtree(model)
  report.save(TINY, str(ran), str(saved))
  assert kept.exists() and json.loads((model / 'config.json').read_text()) == json.loads(
      (ran / 'synthetic_average_dot' / 'seed0' / 'config.json').read_text())


@pytest.mark.heavy
def test_saving_leaves_out_the_record_of_an_arm_with_no_model_yet(ran, tmp_path):
  root = tmp_path / 'root'
  root.mkdir()
  for arm in TINY.arms[:1]:
    (root / arm.name).symlink_to(ran / arm.name)
  started = {'completed': False, 'seconds': None, 'seeds': 2, 'started': 1.0}  # still training, nothing saved
  (root / 'study.json').write_text(json.dumps({'arms': {TINY.arms[0].name: [started], TINY.arms[1].name: [started]}}))
  report.save(TINY, str(root), str(tmp_path / 'results'))
  saved = json.loads((tmp_path / 'results' / 'study.json').read_text())['arms']
  assert saved == {TINY.arms[0].name: [started]}


@pytest.mark.heavy
def test_an_arm_not_run_yet_has_its_row_saying_so(ran):
  wider = Study('tiny', TINY.arms + (Arm('synthetic_cnn_tanh', 'synthetic', 'cnn', {'model.attention': 'tanh'},
                                         'smoke'),), analyses=TINY.analyses, seeds=2, description='a test')
  rows = report.grid_rows(wider, str(ran))
  assert [r[0] for r in rows[1:]] == ['synthetic_bilstm_tanh', 'synthetic_average_dot', 'synthetic_cnn_tanh']
  assert rows[-1][1:4] == ['–', '0 (not run yet)', '–'] and rows[-1][-1] == '–'
  assert rows[1][-1].endswith('min')


@pytest.mark.heavy
def test_a_rerun_does_only_what_is_missing(ran):
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    runner.run(TINY, str(ran), only='*average*', overrides={'train.progress': False}, log=logs.append)
  assert any('training already finished' in line for line in logs)
  assert sum('skipped' in line for line in logs) == 2 * 6  # every stage of both seeds


def test_unknown_arm_patterns_are_refused():
  from attn_jax.core.errors import ConfigError  # pylint: disable=g-import-not-at-top
  with pytest.raises(ConfigError, match='matches no arm'):
    runner.select(TINY, 'imdb_*')


def test_set_takes_analysis_settings_only_and_names_a_misspelt_one():
  from attn_jax.core.errors import ConfigError  # pylint: disable=g-import-not-at-top
  from attn_jax.studies.__main__ import analysis_overrides  # pylint: disable=g-import-not-at-top
  assert analysis_overrides(['analysis.sample_docs=500', 'analysis.split=dev']) == {
      'analysis.sample_docs': 500, 'analysis.split': 'dev'}
  with pytest.raises(ConfigError, match="their training is the study's definition"):
    analysis_overrides(['train.epochs=2'])
  with pytest.raises(ConfigError, match="did you mean 'analysis.sample_docs'"):
    analysis_overrides(['analysis.sample_doc=5'])
  with pytest.raises(ConfigError, match='write KEY=VALUE'):
    analysis_overrides(['analysis.sample_docs'])
  # The stages an arm runs are an analysis setting: one stage added to trained arms, or none.
  assert analysis_overrides(['analyses=eraser', 'analyses=']) == {'analyses': ''}
  assert analysis_overrides(['analyses=eraser']) == {'analyses': 'eraser'}


@pytest.mark.heavy
def test_set_analyses_runs_one_more_stage_on_the_trained_arms_alone(tmp_path):
  from attn_jax.studies.__main__ import analysis_overrides  # pylint: disable=g-import-not-at-top
  study = Study('tiny_eraser', TINY.arms[1:], analyses='', seeds=2, description='a test')
  quiet = {'train.progress': False}
  with jax.numpy_dtype_promotion('standard'):
    runner.run(study, str(tmp_path), overrides=quiet, log=lambda _: None)  # trained, no analysis
    logs = []
    runner.run(study, str(tmp_path), overrides={**analysis_overrides(['analyses=eraser', 'analysis.max_docs=4']),
                                                **quiet}, log=logs.append)
  assert any('training already finished' in line for line in logs)
  assert [line.split(':')[0] for line in logs if ' documents in ' in line] == ['eraser', 'eraser']  # a seed each
  for seed in ('seed0', 'seed1'):
    assert [p.name for p in (tmp_path / TINY.arms[1].name / seed / 'analyses').iterdir()] == ['eraser']


def test_a_pattern_holds_apart_only_when_every_interval_is_apart():
  ci = lambda mean, half: {'mean': mean, 'low': mean - half, 'high': mean + half, 'n': 5}
  top = ci(0.7, 0.02)
  assert report.above(top, ci(0.3, 0.02), ci(0.5, 0.02)) == report.APART
  assert report.above(top, ci(0.3, 0.02), ci(0.66, 0.05)) == report.MEANS_ONLY
  assert report.above(top, ci(0.3, 0.02), ci(0.71, 0.01)) == report.NOT_ABOVE


def test_another_seed_count_trains_and_reports_beside_the_study_not_over_it():
  assert TINY.with_seeds(None) is TINY and TINY.with_seeds(2) is TINY
  three = TINY.with_seeds(3)
  assert three.seeds == 3 and [three.folder_name(a) for a in three.arms] == [
      'synthetic_bilstm_tanh-3seeds', 'synthetic_average_dot-3seeds']
  assert three.arms[0].config(three.seeds, three.analyses).sweep == 'seed=0,1,2'



def test_an_arm_may_train_more_seeds_than_its_study_and_a_seed_count_given_overrides_it():
  from attn_jax.studies import STUDIES
  wide = Study('wide', (TINY.arms[0], Arm('more', 'synthetic', 'average', {}, 'smoke', seeds=4)),
               analyses='gradient', seeds=2, description='a test')
  assert [wide.seeds_of(a) for a in wide.arms] == [2, 4]
  assert wide.arms[1].config(wide.seeds_of(wide.arms[1]), wide.analyses).sweep == 'seed=0,1,2,3'
  assert wide.folder_name(wide.arms[1]) == 'more'  # the arm's own count: the study's own folder
  for given in (2, 3):  # a count on the command line is every arm's, in folders beside the study's
    other = wide.with_seeds(given)
    assert [other.seeds_of(a) for a in other.arms] == [given, given]
    assert other.folder_name(other.arms[1]) == f'more-{given}seeds'
  grid = STUDIES['jw_grid']
  assert {a.name: grid.seeds_of(a) for a in grid.arms if a.dataset == 'sst'} == {
      f'sst_{e}_{a}': 15 for e in ('bilstm', 'cnn', 'average') for a in ('tanh', 'dot')}
  assert {grid.seeds_of(a) for a in grid.arms if a.dataset != 'sst'} == {5}

@pytest.mark.heavy
def test_an_arm_another_study_trained_is_analysed_from_its_models_not_trained_again(ran, tmp_path):
  twin = Study('twin', (Arm('same_models', 'synthetic', 'average', {'model.attention': 'dot'}, 'smoke'),
                        Arm('other_models', 'synthetic', 'average', {'model.attention': 'tanh'}, 'smoke')),
               analyses='gradient,loo,kendall', seeds=2, description='a test')
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    runner.run(twin, str(tmp_path), only='same_models', overrides={'train.progress': False},
               log=logs.append, reuse=[str(ran)])
  assert any('training already finished' in line for line in logs)
  assert any(f'the same models as {ran / "synthetic_average_dot"}' in line for line in logs)
  # The source's finished analyses with the same keys are copied, not computed again.
  assert any('6 finished analysis result(s) of the same models copied' in line for line in logs)
  assert sum('skipped' in line for line in logs) == 2 * 3  # gradient, loo, kendall of both seeds
  for seed in ('seed0', 'seed1'):
    here, there = tmp_path / 'same_models' / seed, ran / 'synthetic_average_dot' / seed
    assert not (here / 'checkpoints').exists() and (there / 'checkpoints').exists()
    assert json.loads((here / 'eval.json').read_text()) == json.loads((there / 'eval.json').read_text())
    assert len(list((here / 'analyses' / 'kendall').glob('test-*/summary.json'))) == 1
    assert not (here / 'analyses' / 'permutation').exists()  # not one of this study's analyses
    assert (here / 'metrics.jsonl').read_bytes() == (there / 'metrics.jsonl').read_bytes()
    for stage in ('gradient', 'loo', 'kendall'):
      mine, theirs = [next((d / 'analyses' / stage).glob('test-*')) for d in (here, there)]
      assert mine.name == theirs.name and (mine / 'results.npz').read_bytes() == (
          theirs / 'results.npz').read_bytes()
  record = json.loads((tmp_path / 'study.json').read_text())['arms']['same_models'][0]
  assert record['completed'] and record['trained_in'] == str(ran / 'synthetic_average_dot')
  # A different training config finds no source: it would train in its own folder.
  cfg = twin.arms[1].config(twin.seeds, twin.analyses)
  assert runner.trained_in(cfg, [str(ran)]) is None
  with pytest.raises(Exception, match='no such folder'):
    runner.trained_in(cfg, [str(tmp_path / 'nowhere')])


def test_agreement_counts_rows_within_the_tolerance_and_published_values_inside_intervals():
  ci = lambda mean, half: {'mean': mean, 'low': mean - half, 'high': mean + half, 'n': 5}  # noqa: E731
  paper = {'attention_gradient': (0.40, 0.2, 0.5), 'attention_loo': (0.30, 0.2, 0.4),
           'gradient_loo': (0.50, 0.1, 0.9)}
  close = {'attention_gradient': ci(0.45, 0.06), 'attention_loo': ci(0.37, 0.01),
           'gradient_loo': ci(0.52, 0.01)}  # all within 0.08; only τ(α, grad)'s interval holds 0.40
  far = {**close, 'gradient_loo': ci(0.70, 0.30)}  # 0.20 off, but its wide interval holds 0.50
  lines = report.agreement([('a_bilstm', 'sst', close, paper), ('b_cnn', 'sst', far, paper),
                            ('c_bilstm', 'imdb', close, paper)])
  assert lines == [
      "imdb: 1 of 1 rows with all three τ within 0.08 of J&W's (c_bilstm); 1 of 3 published τ inside our "
      'intervals, 3 within 0.08 of our means',
      "sst: 1 of 2 rows with all three τ within 0.08 of J&W's (a_bilstm); 3 of 6 published τ inside our "
      'intervals, 5 within 0.08 of our means',
      "all datasets: 2 of 3 rows with all three τ within 0.08 of J&W's (a_bilstm, c_bilstm); 4 of 9 "
      'published τ inside our intervals, 8 within 0.08 of our means']
