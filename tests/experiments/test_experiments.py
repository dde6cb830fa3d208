"""W&P's experiments on a trained model: run, keyed, skipped, resumed, restorable."""

import os
import re

import jax
import numpy as np
import pytest

from attn_jax import experiments
from attn_jax.core.errors import ConfigError
from attn_jax.core.registry import EXPERIMENTS
from attn_jax.experiments import experiment_store as store
from attn_jax.workdirs.restore import restore
from attn_jax.training import selection
import helpers

pytestmark = [pytest.mark.usefixtures('optax_promotion'), pytest.mark.slow]  # slow: scheduled first
ALL = 'uniform,seeds,consistent_adversary,guides'


def wp_config(**overrides):
  cfg = helpers.synthetic_config(**overrides)
  cfg.experiments = ALL
  return cfg


@pytest.fixture(scope='module')
def suite(tmp_path_factory):
  """The four experiments on one smoke model: (workdir, logs)."""
  workdir = tmp_path_factory.mktemp('wp')
  logs = []
  with jax.numpy_dtype_promotion('standard'):  # module scope: before optax_promotion applies
    helpers.run(wp_config(), workdir, logs)
  return workdir, logs


def test_each_experiment_writes_a_keyed_verified_summary_and_figures(suite):
  workdir, _ = suite
  found = experiments.load_summaries(str(workdir))
  assert sorted(found) == sorted(ALL.split(','))
  for name, summary in found.items():
    folder = workdir / summary['folder']
    assert folder.parent == workdir / 'experiments' / name and folder.name == summary['key']['hash']
    assert (workdir / 'experiments' / name / 'summary.json').exists()  # the newest, copied
    assert {os.path.splitext(f)[1] for f in summary['figures']} == {'.png', '.svg'}
    for figure in summary['figures']:
      assert (workdir / figure).stat().st_size > 0
    assert store.read(str(folder))[0] is not None
  uniform = found['uniform']
  assert uniform['f1_difference'] == pytest.approx(uniform['learned']['f1_pos'] - uniform['uniform']['f1_pos'])
  seeds = found['seeds']
  assert seeds['seeds'] == [1, 2] and len(seeds['seed_models']['f1_pos']['values']) == 2
  assert 0 <= seeds['median_jsd']['median'] <= np.log(2)
  assert sum(c['n'] for c in seeds['cells']) == seeds['n']
  adversary = found['consistent_adversary']
  assert [r['lambda'] for r in adversary['rows']] == [0.01, 1.0]
  assert adversary['jw_adversary'] is not None
  guides = found['guides']
  assert [r['guide'] for r in guides['rows']] == ['uniform', 'trained_mlp', 'base', 'adversary']
  assert guides['adversary_lambda'] in (0.01, 1.0)


def test_trained_models_are_ordinary_restorable_runs(suite):
  workdir, _ = suite
  found = experiments.load_summaries(str(workdir))
  models = {name: workdir / s['models_folder'] for name, s in found.items()}
  adversary = restore(str(models['consistent_adversary'] / 'adversaries' / 'lambda1'))
  assert adversary.selection['metric'] == 'train_loss' and adversary.selection['split'] == 'train'
  assert adversary.config.train.patience == 2 and adversary.config.model.encoder == 'bilstm'
  seed = restore(str(models['seeds'] / 'seeds' / 'seed2'))
  assert seed.config.seed == 2 and seed.config.train.batch_seed == 0  # the base's batch order
  mlp = restore(str(models['guides'] / 'guided' / 'base'))
  assert mlp.config.model.encoder == 'average'
  uniform = restore(str(models['uniform'] / 'uniform' / 'uniform'))
  assert uniform.config.model.projection == 'uniform'


def test_a_rerun_verifies_and_skips_every_experiment(suite):
  workdir, _ = suite
  before = helpers.snapshot(workdir / 'experiments')
  logs = []
  helpers.run(wp_config(), workdir, logs)
  skipped = [line for line in logs if 'verified and skipped' in line]
  assert len([s for s in skipped if s.split(':')[0] in ALL.split(',')]) == 4
  assert helpers.snapshot(workdir / 'experiments') == before


def test_a_killed_experiment_resumes_from_its_trained_models(suite):
  workdir, _ = suite
  found = experiments.load_summaries(str(workdir))
  folder = workdir / found['guides']['folder']
  os.remove(folder / 'summary.json')  # killed after training, before the summary
  logs = []
  helpers.run(wp_config(), workdir, logs)
  assert any('training already finished' in line and 'guided' in line for line in logs)
  again = experiments.load_summaries(str(workdir))['guides']
  assert again['rows'] == found['guides']['rows']


def test_other_settings_sit_beside_earlier_results(suite, tmp_path):
  workdir, _ = suite
  cfg = wp_config()
  cfg.experiments = 'uniform'
  cfg.experiment.uniform.seed = 5
  helpers.run(cfg, workdir)
  listed = os.listdir(workdir / 'experiments' / 'uniform')
  assert len([d for d in listed if d.startswith('models-')]) == 2  # another seed: another model
  assert len([d for d in listed if d != 'summary.json' and not d.startswith('models-')]) == 2
  assert experiments.load_summaries(str(workdir))['uniform']['seed'] == 5


@pytest.mark.heavy
def test_a_lambda_sweep_equals_the_same_lambdas_trained_one_at_a_time(tmp_path):
  """M adversaries as one vmapped program = each trained alone."""
  def adversaries(lambdas):
    cfg = helpers.synthetic_config(train__model_axis='vmap')
    cfg.experiments = 'consistent_adversary'
    cfg.experiment.consistent_adversary.lambdas = lambdas
    helpers.run(cfg, tmp_path / 'base')
    found = store.latest(str(tmp_path / 'base'), 'consistent_adversary')
    return str(tmp_path / 'base' / found[1]['models_folder'] / 'adversaries'), found[1]

  together, summary = adversaries('0.01,1')
  alone, summary_alone = adversaries('1')
  x, y = restore(os.path.join(together, 'lambda1')), restore(os.path.join(alone, 'lambda1'))
  assert x.selection['epoch'] == y.selection['epoch']
  for p, q in zip(jax.tree.leaves(x.params), jax.tree.leaves(y.params)):
    np.testing.assert_allclose(p, q, atol=2e-5)
  row, row_alone = summary['rows'][1], summary_alone['rows'][0]
  for k in ('mean_tvd', 'mean_jsd', 'train_loss'):
    np.testing.assert_allclose(row[k], row_alone[k], rtol=1e-4, atol=1e-6)


def test_analysis_settings_recompute_the_numbers_but_retrain_no_model(suite):
  workdir, _ = suite
  cfg = wp_config()
  cfg.analysis.max_docs = 20  # the adversarial stage's key changes, the models' do not
  logs = []
  helpers.run(cfg, workdir, logs)
  assert not any(line.startswith('epoch') or ': epoch' in line for line in logs)
  found = experiments.load_summaries(str(workdir))
  assert found['seeds']['jw_adversary']['n'] == 20
  assert len([d for d in os.listdir(workdir / 'experiments' / 'seeds') if d.startswith('models-')]) == 1


def test_patience_stops_a_model_after_epochs_without_improvement():
  cfg = helpers.synthetic_config(train__patience=2)
  entry = {'best': {'epoch': 1}}
  assert not selection.out_of_patience(entry, 2, cfg.train)
  assert selection.out_of_patience(entry, 3, cfg.train)
  assert not selection.out_of_patience({'best': None}, 5, cfg.train)  # nothing to keep yet
  assert not selection.out_of_patience(entry, 30, helpers.synthetic_config().train)


@pytest.mark.parametrize('field, value, message', [
    ('experiments', 'uniform,seed', "unknown experiment 'seed' (did you mean 'seeds'?)"),
    ('seeds', '0,1', "includes the base model's own seed 0"),
    ('lambdas', '0.1,x', 'is not comma-separated numbers'),
])
def test_bad_experiment_settings_fail_before_any_work(field, value, message):
  cfg = wp_config()
  if field == 'experiments':
    cfg.experiments = value
  elif field == 'seeds':
    cfg.experiment.seeds.seeds = value
  else:
    cfg.experiment.consistent_adversary.lambdas = value
  with pytest.raises(ConfigError, match=re.escape(message)):
    helpers.run(cfg, '/nonexistent/never-created')


@pytest.mark.heavy
def test_every_adversary_guides_one_more_model_per_other_lambda(suite):
  workdir, _ = suite
  before = experiments.load_summaries(str(workdir))['guides']
  cfg = wp_config()
  cfg.experiments = 'guides'
  cfg.experiment.guides.every_adversary = True
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(cfg, workdir)
  found = experiments.load_summaries(str(workdir))['guides']
  assert found['key']['hash'] != before['key']['hash']  # beside, not over, the default's results
  other = 1.0 if found['adversary_lambda'] == 0.01 else 0.01
  assert [r['guide'] for r in found['rows']] == ['uniform', 'trained_mlp', 'base', 'adversary',
                                                  f'adversary_{other:g}']
  sweep = {r['lambda']: r for r in experiments.load_summaries(str(workdir))['consistent_adversary']['rows']}
  for row in found['rows'][3:]:
    assert row['adversary_mean_jsd'] == sweep[row['adversary_lambda']]['mean_jsd']
  assert found['rows'][4]['adversary_lambda'] == other
  # Where each guide's test attention sits against the base model's.
  base_focus = found['rows'][2]['attention_focus']
  assert base_focus['mean_shared_mass'] == pytest.approx(1.0) and base_focus['same_argmax_share'] == 1.0
  for row in found['rows'][2:]:
    focus = row['attention_focus']
    assert 0 < focus['mean_max_alpha'] <= 1 and 0 <= focus['mean_shared_mass'] <= 1 + 1e-6
    assert 0 < sum(share for _, share in focus['argmax_words']) <= 1 + 1e-9
    assert all(isinstance(word, str) for word, _ in focus['argmax_words'])
  assert 'attention_focus' not in found['rows'][0] and 'attention_focus' not in found['rows'][1]
  # The models of a program are independent: the four guides come out as before.
  assert [r['f1_pos'] for r in found['rows'][:4]] == [r['f1_pos'] for r in before['rows']]


def test_a_setting_added_later_keeps_earlier_keys_at_its_old_behaviour():
  from attn_jax.experiments.experiment_runner import _settings  # pylint: disable=g-import-not-at-top
  guides = EXPERIMENTS['guides']
  cfg = wp_config()
  assert 'every_adversary' not in _settings(cfg, guides)
  cfg.experiment.guides.every_adversary = True
  assert _settings(cfg, guides)['every_adversary'] is True
