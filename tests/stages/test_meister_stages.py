"""The stages `importance` and `state_importance` (Meister et al.) on fresh
smoke models: their numbers equal the analysis functions called directly,
their summaries carry every field the report reads, and they are keyed and
skipped like every stage."""

import collections
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.stages import stage_runner as stages_lib
from attn_jax.analysis import importance_measures as imp, kendall, loo as loo_lib
from attn_jax.data.dataset import load_dataset
from attn_jax.core.errors import ConfigError
from attn_jax.models import build_model
from attn_jax.stages import stage_runner as runner, stage_store as store

DOCS = 6
Analysed = collections.namedtuple('Analysed', 'cfg model params data tokens lengths out summaries')


def _analyse(cfg, out, model=None, params=None, data=None):
  data = data or load_dataset(cfg.data)
  if model is None:
    model = build_model(cfg.model, len(data.vocab))
    params = model.init(jax.random.PRNGKey(0))
  logs = []
  summaries = stages_lib.run_analyses(model, params, data.splits, cfg, str(out), data.fingerprint,
                                  log=logs.append)
  return model, params, data, summaries, logs


def _batch(data, docs):
  """The first `docs` test documents as one batch at their longest length."""
  split = data.splits['test']
  lengths = np.asarray(split.lengths[:docs], np.int32)
  tokens = np.zeros((docs, lengths.max()), np.int32)
  for i in range(docs):
    tokens[i, :lengths[i]] = split.sequences[i]
  return jnp.asarray(tokens), jnp.asarray(lengths)


def _config(projection='softmax', encoder='bilstm', analyses='importance,state_importance'):
  cfg = config_lib.default_config('synthetic', encoder, 'smoke')
  cfg.train.progress = False
  cfg.model.projection = projection
  cfg.analyses = analyses
  cfg.analysis.max_docs = DOCS
  cfg.analysis.batch_size = 16  # one batch: one compilation per stage
  return cfg


@pytest.fixture(scope='module', params=['softmax', pytest.param('sparsemax', marks=pytest.mark.heavy)])
def analysed(request, tmp_path_factory):
  cfg = _config(request.param)
  out = tmp_path_factory.mktemp(f'meister_{request.param}')
  model, params, data, summaries, _ = _analyse(cfg, out)
  tokens, lengths = _batch(data, DOCS)
  return Analysed(cfg, model, params, data, tokens, lengths, out, summaries)


def _arrays(out, summary):
  """The stored (summary, arrays) of the results `summary` (as run_analyses returns) names."""
  directory = store.result_dir(str(out), summary['key'])
  stored, problem = store.read_summary(directory)
  assert problem is None, problem
  return stored, store.load_arrays(directory, stored)


def test_importance_equals_the_analysis_functions(analysed):
  a = analysed
  summary, arrays = _arrays(a.out, a.summaries['importance'])
  width = int(a.lengths.max())
  m = a.model

  @jax.jit  # one compilation, not many eager ops
  def direct(params, tokens, lengths):
    return {
        'g_y_x': imp.input_gradient(m, params, tokens, lengths),
        'g_y_i': imp.hidden_gradient(m, params, tokens, lengths),
        'g_y_i_detached': imp.hidden_gradient(m, params, tokens, lengths, detach_attention=True),
        'd_y_i': imp.attention_deletion(m, params, tokens, lengths),
        'd_y_x': imp.normalised_loo(loo_lib.leave_one_out(m, params, tokens, lengths).importance, lengths),
        'alpha': m.forward(params, tokens, lengths).alpha,
    }
  expected = direct(a.params, a.tokens, a.lengths)
  for name, value in expected.items():
    assert arrays[name].shape == (DOCS, width)
    # d_y_i and d_y_x are differences of two probabilities near 0.5: float32 rounding
    # of a batch padded wider than the direct call's leaves up to ~2e-6 in them
    np.testing.assert_allclose(arrays[name], value, rtol=1e-4, atol=5e-6, err_msg=name)
  lengths = np.asarray(a.lengths)
  for name in ('g_y_x', 'd_y_x', 'g_y_i', 'd_y_i', 'g_y_i_detached'):
    tau, p = kendall.kendall_tau(arrays['alpha'], arrays[name], lengths)
    np.testing.assert_array_equal(arrays[f'tau_{name}'], tau)
    np.testing.assert_array_equal(arrays[f'p_{name}'], p)
    assert summary['tau'][name]['nanmean'] == pytest.approx(float(np.nanmean(tau)))
  for name in ('alpha', 'g_y_x', 'd_y_x', 'g_y_i'):
    h = imp.normalised_entropy(jnp.asarray(arrays[name]), a.lengths)
    np.testing.assert_allclose(arrays[f'entropy_{name}'], h, rtol=1e-6, err_msg=name)
    assert summary['entropy'][name]['nanmean'] == pytest.approx(float(np.nanmean(h)), rel=1e-5)
  words = [np.asarray(arrays['alpha'][i, 1:n - 1]) for i, n in enumerate(lengths)]
  zero = [np.mean(w == 0) for w in words]
  np.testing.assert_allclose(arrays['alpha_zero_fraction'], zero)
  assert summary['alpha_zero_fraction'] == pytest.approx(float(np.mean(zero)))
  if a.cfg.model.projection == 'softmax':
    assert summary['alpha_zero_fraction'] == 0


def test_importance_summary_has_every_field(analysed):
  summary = analysed.summaries['importance']
  assert summary['projection'] == analysed.cfg.model.projection and summary['encoder'] == 'bilstm'
  assert summary['n'] == DOCS and summary['loo_mode'] == 'delete'
  assert summary['hidden_gradient_detached'] is True
  assert summary['sparsegen_lambda'] is None  # only a sparsegen model has one
  for measure in ('g_y_x', 'd_y_x', 'g_y_i', 'd_y_i'):
    entry = summary['tau'][measure]
    assert {'mean', 'std', 'nanmean', 'nanstd', 'n', 'n_nan', 'pval_sig', 'bootstrap_ci95'} <= set(entry)
    low, high = entry['bootstrap_ci95']
    assert low <= entry['nanmean'] <= high
  assert summary['tau_detached'] == summary['tau']['g_y_i_detached']
  if analysed.cfg.model.projection == 'sparsemax':
    # α detached, ∂ŷ/∂h_i ∝ α_i: τ is 1 by construction, ties at α = 0 included.
    _, arrays = _arrays(analysed.out, summary)
    finite = arrays['tau_g_y_i_detached'][np.isfinite(arrays['tau_g_y_i_detached'])]
    assert len(finite) and np.allclose(finite, 1.0, atol=1e-6)
  for name in ('alpha', 'g_y_x', 'd_y_x', 'g_y_i'):
    assert set(summary['entropy'][name]) == {'mean', 'std', 'nanmean', 'nanstd', 'n_nan'}
    assert 0 <= summary['entropy'][name]['nanmean'] <= 1
  assert sorted(f.rsplit('.', 1)[1] for f in summary['figures']) == ['png', 'svg']


def test_state_importance_equals_the_analysis_function(analysed):
  a = analysed
  summary, arrays = _arrays(a.out, a.summaries['state_importance'])
  expected = np.asarray(imp.state_gradient_entropy(a.model, a.params, a.tokens, a.lengths))
  np.testing.assert_allclose(arrays['entropy_layer0'], expected, rtol=1e-5, atol=1e-6)  # NaN where NaN
  words = np.isfinite(expected)
  assert words.sum() == int(np.sum(np.asarray(a.lengths) - 2))  # every word of these documents
  assert summary['layers'] == [0] and summary['last_layer'] == 'layer0'
  row = summary['table1']['layer0']
  assert row['n_pairs'] == words.sum() and row['n_docs'] == DOCS
  assert row['mean'] == pytest.approx(float(np.mean(expected[words])), rel=1e-5)
  assert row['std'] == pytest.approx(float(np.std(expected[words])), rel=1e-5)
  assert row['doc_mean'] == pytest.approx(float(np.mean(np.nanmean(expected, axis=1))), rel=1e-5)
  assert 0 < row['mean'] <= 1


@pytest.mark.parametrize('analysed', ['softmax'], indirect=True)  # keying is projection-blind
def test_a_rerun_skips_and_a_changed_setting_recomputes_only_its_stage(analysed):
  a = analysed
  _, _, _, again, logs = _analyse(a.cfg, a.out, a.model, a.params, a.data)
  assert sum('skipped' in line for line in logs) == 3  # loo, importance, state_importance
  assert again['importance']['key'] == a.summaries['importance']['key']
  cfg = _config()
  cfg.analysis.importance.hidden_gradient_detached = False
  cfg.analysis.state_importance.chunk = 3
  _, _, _, changed, logs = _analyse(cfg, a.out, a.model, a.params, a.data)
  assert [line.split(':')[0] for line in logs if 'documents in' in line] == ['importance', 'state_importance']
  assert 'tau_detached' not in changed['importance'] and 'g_y_i_detached' not in changed['importance']['tau']
  assert 'g_y_i_detached' not in _arrays(a.out, changed['importance'])[1]
  # The chunk size changes the work, not the numbers.
  before, after = (_arrays(a.out, s)[1]
                   for s in (a.summaries['state_importance'], changed['state_importance']))
  np.testing.assert_allclose(before['entropy_layer0'], after['entropy_layer0'], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('analysed', ['softmax'], indirect=True)
def test_a_killed_state_importance_resumes_where_it_stopped(analysed, tmp_path, monkeypatch):
  a = analysed
  cfg = _config(analyses='state_importance')
  cfg.analysis.batch_size = 3  # two batches
  ctx = stages_lib.AnalysisContext(a.model, a.params, stages_lib.limit_split(a.data.splits['test'], DOCS), 'test',
                               cfg, a.data.fingerprint, str(tmp_path))
  stage, calls = stages_lib.STAGES['state_importance'], []

  def dies_on_the_second_batch(c, batch):
    calls.append(1)
    if len(calls) == 2:
      raise KeyboardInterrupt
    return stage.compute(c, batch)

  monkeypatch.setattr(runner, 'SAVE_EVERY_SECONDS', 0.0)
  with pytest.raises(KeyboardInterrupt):
    runner.run_stage(ctx, dataclasses.replace(stage, compute=dies_on_the_second_batch), log=lambda _: None)
  logs = []
  summary = runner.run_stage(ctx, stage, log=logs.append)
  assert any('resuming after 1 of 2' in line for line in logs)
  _, resumed = _arrays(tmp_path, summary)
  _, whole = _arrays(a.out, a.summaries['state_importance'])
  np.testing.assert_allclose(resumed['entropy_layer0'], whole['entropy_layer0'], rtol=1e-5, atol=1e-6)


@pytest.mark.heavy
def test_every_transformer_layer_gets_its_own_entropy_array(tmp_path):
  cfg = _config(encoder='transformer', analyses='state_importance')
  cfg.analysis.max_docs = 4
  cfg.analysis.state_importance.layers = 'all'
  data = load_dataset(cfg.data)
  model = build_model(cfg.model, len(data.vocab))
  # At initialisation LayerNorm's γ = 1, β = 0 make every post-LN ‖h_p‖ the
  # same constant, so g_{h_p}(x) would be rounding noise: perturb every param.
  @jax.jit  # compiled once, faster than eager initialisation
  def perturbed(seed):
    leaves, tree = jax.tree.flatten(model.init(jax.random.PRNGKey(seed)))
    keys = jax.random.split(jax.random.PRNGKey(seed + 1), len(leaves))
    return jax.tree.unflatten(tree, [x + 0.3 * jax.random.normal(k, x.shape, x.dtype)
                                     for x, k in zip(leaves, keys)])
  params = perturbed(0)
  _, _, _, summaries, _ = _analyse(cfg, tmp_path, model, params, data)
  summary, arrays = _arrays(tmp_path, summaries['state_importance'])
  assert summary['layers'] == [0, 1] and summary['last_layer'] == 'layer1'
  assert set(summary['table1']) == {'layer0', 'layer1'}
  tokens, lengths = _batch(data, 4)
  expected = jax.jit(lambda p, t, n: [imp.state_gradient_entropy(model, p, t, n, layer=k)
                                       for k in (0, 1)])(params, tokens, lengths)
  for k in (0, 1):
    np.testing.assert_allclose(arrays[f'entropy_layer{k}'], expected[k], rtol=1e-5, atol=1e-6)
  assert summaries['state_importance']['table1']['layer1']['n_pairs'] == int(np.sum(np.asarray(lengths) - 2))


@pytest.mark.parametrize('key, value, message', [
    ('layers', 'first', "analysis.state_importance.layers='first'"),
    ('chunk', 0, 'analysis.state_importance.chunk must be >= 1'),
])
def test_bad_state_importance_settings_are_named(key, value, message):
  cfg = _config()
  cfg.analysis.state_importance[key] = value
  with pytest.raises(ConfigError, match=message):
    config_lib.validate(cfg)
