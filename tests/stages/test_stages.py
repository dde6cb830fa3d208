"""Analysis stages as `run.py` runs them: files, skipping, keys, resuming."""

import dataclasses
import glob
import json
import os
import shutil

import jax
import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.stages import stage_runner as stages_lib
from attn_jax.analysis import gradient_importance
from attn_jax.data.dataset import load_dataset
from attn_jax.core.errors import ConfigError
from attn_jax.workdirs.restore import restore
from attn_jax.stages import stage_runner as runner
from attn_jax.stages.feature_importance import GRADIENT_VARIANTS
import helpers

# Training and the adversarial stage run optax (see conftest.optax_promotion).
pytestmark = [pytest.mark.usefixtures('optax_promotion'), pytest.mark.slow]  # slow: scheduled first


@pytest.fixture(scope='module')
def trained(smoke_trained, tmp_path_factory):
  """A synthetic smoke model (the session's, copied) with every stage run on it."""
  workdir = helpers.trained_copy(smoke_trained, tmp_path_factory.mktemp('trained') / 'w')
  cfg = helpers.synthetic_config(top__analyses=','.join(config_lib.ANALYSES))
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(cfg, workdir, logs)
  return workdir, cfg, logs


def stage_files(workdir, name):
  return sorted(os.listdir(helpers.stage_dir(workdir, name)))


def test_every_stage_writes_results_summary_and_figures(trained):
  workdir, cfg, _ = trained
  figures = {'kendall': 1, 'permutation': 1, 'adversarial': 1, 'erasure': 2, 'importance': 1,
             'state_importance': 1, 'evidence': 1, 'eraser': 1}
  for name in config_lib.ANALYSES:
    files = stage_files(workdir, name)
    assert 'results.npz' in files and 'summary.json' in files and 'partial.npz' not in files
    assert sum(f.endswith('.png') for f in files) == figures.get(name, 0)
    assert sum(f.endswith('.svg') for f in files) == figures.get(name, 0)
  summary = json.loads(open(os.path.join(helpers.stage_dir(workdir, 'kendall'), 'summary.json')).read())
  test_size = cfg.data.synthetic.test_size
  assert summary['documents'] == test_size
  assert summary['pairs']['attention_gradient']['overall']['n'] == test_size
  with np.load(os.path.join(helpers.stage_dir(workdir, 'loo'), 'results.npz')) as f:
    lengths = f['lengths']
    assert f['loo'].shape == (test_size, lengths.max())
    assert np.all(f['loo'][np.arange(test_size), lengths - 1] == 0)  # EOS gets no importance
  with np.load(os.path.join(helpers.stage_dir(workdir, 'adversarial'), 'results.npz')) as f:
    assert f['jsd'].shape == (test_size, cfg.analysis.adversarial.num_adversaries)


def test_rerun_skips_every_finished_stage(trained):
  workdir, cfg, _ = trained
  logs = []
  helpers.run(cfg, workdir, logs)
  assert sum('skipped' in line for line in logs) == len(config_lib.ANALYSES)


def test_a_changed_setting_recomputes_only_the_stages_it_affects(trained, tmp_path):
  workdir = tmp_path / 'copy'
  shutil.copytree(trained[0], workdir)
  changed = helpers.synthetic_config(top__analyses=','.join(config_lib.ANALYSES))
  changed.analysis.permutation.num_permutations = 7
  changed.analysis.batch_size = 5  # speed only: does not change the key
  logs = []
  helpers.run(changed, workdir, logs)  # the trained model stays valid
  recomputed = [line.split(':')[0] for line in logs if 'documents in' in line]
  assert recomputed == ['permutation']
  with np.load(os.path.join(helpers.stage_dir(workdir, 'permutation'), 'results.npz')) as f:
    assert f['differences'].shape[1] == 7


def test_recomputing_a_stage_recomputes_the_stages_that_use_it(trained, tmp_path, monkeypatch):
  workdir = tmp_path / 'copy'
  shutil.copytree(trained[0], workdir)
  loo = stages_lib.STAGES['loo']
  monkeypatch.setitem(stages_lib.STAGES, 'loo', dataclasses.replace(loo, version=loo.version + 1))
  logs = []
  helpers.run(helpers.synthetic_config(top__analyses=','.join(config_lib.ANALYSES)), workdir, logs)
  recomputed = [line.split(':')[0] for line in logs if 'documents in' in line]
  assert recomputed == ['loo', 'kendall', 'importance', 'evidence']


@pytest.mark.heavy
def test_random_draws_do_not_depend_on_batching(trained):
  workdir, cfg, _ = trained
  restored = restore(str(workdir))
  data = load_dataset(cfg.data)
  other = str(workdir / 'other_batching')
  cfg2 = helpers.synthetic_config(top__analyses='permutation,erasure')
  cfg2.analysis.batch_size = 7
  stages_lib.run_analyses(restored.model, restored.params, data.splits, cfg2, other, data.fingerprint,
                      log=lambda _: None)
  for name, keys in {'permutation': ('median',), 'erasure': ('random_fraction', 'single_other')}.items():
    ours, theirs = (np.load(os.path.join(helpers.stage_dir(w, name), 'results.npz')) for w in (other, workdir))
    for key in keys:
      np.testing.assert_allclose(ours[key], theirs[key], atol=1e-5, err_msg=f'{name}.{key}')


@pytest.mark.heavy  # CI margin; tests/analysis/test_adversarial.py checks batching at the function
def test_the_adversarial_stage_batches_by_its_own_size_and_gets_the_same_results(trained, monkeypatch):
  workdir, cfg, _ = trained
  restored = restore(str(workdir))
  data = load_dataset(cfg.data)
  other = str(workdir / 'adversarial_batching')
  cfg2 = helpers.synthetic_config(top__analyses='adversarial')
  cfg2.analysis.adversarial.batch_size = 5
  sizes, batches = [], stages_lib.AnalysisContext.batches
  monkeypatch.setattr(stages_lib.AnalysisContext, 'batches',
                      lambda self, batch_size=None: sizes.append(batch_size) or batches(self, batch_size))
  stages_lib.run_analyses(restored.model, restored.params, data.splits, cfg2, other, data.fingerprint,
                      log=lambda _: None)
  assert sizes == [5] and cfg.analysis.adversarial.batch_size != 5
  ours, theirs = (np.load(os.path.join(helpers.stage_dir(w, 'adversarial'), 'results.npz'))
                  for w in (other, workdir))
  for key in ('jsd', 'output_change', 'max_jsd'):
    np.testing.assert_allclose(ours[key], theirs[key], atol=1e-5, err_msg=key)


def test_gradient_stage_variants_equal_the_library_function(trained):
  """The stage derives probability variants from logit gradients; each must
  equal `gradient_importance` called with that variant's options."""
  workdir, cfg, _ = trained
  restored = restore(str(workdir))
  test = load_dataset(cfg.data).splits['test']
  rows = [0, 1, 2]
  tokens = helpers.padded_rows(test, rows)
  lengths = test.lengths[rows]
  with np.load(os.path.join(helpers.stage_dir(workdir, 'gradient'), 'results.npz')) as f:
    for name, (target, detach, reduction) in GRADIENT_VARIANTS.items():
      expected = gradient_importance(restored.model, restored.params, tokens, lengths, target=target,
                                     detach_attention=detach, reduction=reduction)
      np.testing.assert_allclose(f[name][rows, :tokens.shape[1]], expected, rtol=1e-4, atol=1e-7, err_msg=name)


def test_a_killed_stage_resumes_where_it_stopped(trained, tmp_path, monkeypatch):
  workdir, cfg, _ = trained
  restored = restore(str(workdir))
  data = load_dataset(cfg.data)
  cfg2 = helpers.synthetic_config(top__analyses='loo')
  ctx = stages_lib.AnalysisContext(restored.model, restored.params, data.splits['test'], 'test', cfg2,
                               data.fingerprint, str(tmp_path))
  calls = []
  original = stages_lib.STAGES['loo'].compute

  def dies_on_the_third_batch(c, batch):
    calls.append(len(batch.index))
    if len(calls) == 3:
      raise KeyboardInterrupt
    return original(c, batch)

  monkeypatch.setattr(runner, 'SAVE_EVERY_SECONDS', 0.0)
  with pytest.raises(KeyboardInterrupt):
    runner.run_stage(ctx, dataclasses.replace(stages_lib.STAGES['loo'], compute=dies_on_the_third_batch),
                     log=lambda _: None)
  assert len(glob.glob(str(tmp_path / 'analyses' / 'loo' / '*' / 'partial.npz'))) == 1
  logs, calls[:] = [], []
  counting = dataclasses.replace(stages_lib.STAGES['loo'], compute=lambda c, b: calls.append(1) or original(c, b))
  runner.run_stage(ctx, counting, log=logs.append)
  assert any('resuming after 2 of' in line for line in logs)
  assert len(calls) == ctx.num_batches() - 2
  with np.load(os.path.join(helpers.stage_dir(tmp_path, 'loo'), 'results.npz')) as ours, \
       np.load(os.path.join(helpers.stage_dir(workdir, 'loo'), 'results.npz')) as whole:
    np.testing.assert_array_equal(ours['loo'], whole['loo'])


@pytest.mark.heavy
def test_a_resume_with_another_batch_size_computes_every_document(trained, tmp_path, monkeypatch):
  """The batch size is not in the key (speed only), so a killed stage may be
  resumed with another: what was done is kept per document, not per batch."""
  workdir, cfg, _ = trained
  restored = restore(str(workdir))
  data = load_dataset(cfg.data)
  contexts = []
  for batch_size in (4, 10):
    c = helpers.synthetic_config(top__analyses='loo')
    c.analysis.batch_size = batch_size
    contexts.append(stages_lib.AnalysisContext(restored.model, restored.params, data.splits['test'], 'test',
                                           c, data.fingerprint, str(tmp_path)))
  original, calls = stages_lib.STAGES['loo'].compute, []

  def dies_on_the_fourth_batch(c, batch):
    calls.append(1)
    if len(calls) == 4:
      raise KeyboardInterrupt
    return original(c, batch)

  monkeypatch.setattr(runner, 'SAVE_EVERY_SECONDS', 0.0)
  with pytest.raises(KeyboardInterrupt):
    runner.run_stage(contexts[0], dataclasses.replace(stages_lib.STAGES['loo'], compute=dies_on_the_fourth_batch),
                     log=lambda _: None)
  logs = []
  runner.run_stage(contexts[1], stages_lib.STAGES['loo'], log=logs.append)
  assert any('(12 of 48 documents)' in line for line in logs)
  with np.load(os.path.join(helpers.stage_dir(tmp_path, 'loo'), 'results.npz')) as ours, \
       np.load(os.path.join(helpers.stage_dir(workdir, 'loo'), 'results.npz')) as whole:
    np.testing.assert_allclose(ours['loo'], whole['loo'], atol=1e-6)
    assert np.all(np.abs(ours['probs']) > 0)  # no document left at its zero fill


def test_unknown_analysis_is_named_with_the_valid_ones():
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.analyses = 'gradient,permutaton'
  with pytest.raises(ConfigError, match=r"unknown analysis 'permutaton' \(did you mean 'permutation'\?\)"):
    config_lib.validate(cfg)


def test_requirements_are_added_in_running_order():
  assert stages_lib.with_requirements_of(['kendall']) == ('gradient', 'loo', 'kendall')
  assert stages_lib.with_requirements_of(['erasure', 'gradient']) == ('gradient', 'erasure')
