"""Every analysis stage and W&P's experiments with sparse and uniform
projections (Meister et al. 2021, §2): finite results, NaN τ
only where a ranked vector is constant, J&W's adversary in the model's own
projection, and `train.update_only` freezing the other params exactly."""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.workdirs import initial_params as initial_params_lib
from attn_jax import config as config_lib, experiments
from attn_jax.stages import stage_runner as stages_lib
from attn_jax.analysis import adversarial_search as adv_lib
from attn_jax.data.dataset import load_dataset
from attn_jax.core.errors import ConfigError
from attn_jax.experiments import experiment_store
from attn_jax.models import projections
from attn_jax.models.model import build_model
from attn_jax.workdirs.restore import restore
from attn_jax.training.optimizer import frozen_subtrees
import helpers

pytestmark = [pytest.mark.usefixtures('optax_promotion'), pytest.mark.slow]  # slow: scheduled first
# The average encoder compiles fastest; the projection, not the encoder, is under test.
ENCODER = 'average'
PROJECTIONS = ('sparsemax', 'sparsegen', 'uniform')  # sparsegen at the config's λ = 0.5
DOCS = 8


def smoke_config(projection, **overrides):
  cfg = helpers.synthetic_config(model__encoder=ENCODER, model__projection=projection, **overrides)
  return cfg


def words(lengths, width):
  return (np.arange(width)[None, :] >= 1) & (np.arange(width)[None, :] < lengths[:, None] - 1)


def load(out, name):
  directory = helpers.stage_dir(out, name)
  with np.load(os.path.join(directory, 'results.npz')) as f:
    arrays = dict(f)
  with open(os.path.join(directory, 'summary.json')) as f:
    return arrays, json.load(f)


# Every projection with the whole suite (heavy; CI margin): the quick suite
# checks sparsemax at the function level (tests/analysis/test_importance.py,
# the projections' and the adversary's tests).
@pytest.fixture(scope='module', params=[pytest.param(p, marks=pytest.mark.heavy) for p in PROJECTIONS])
def analysed(request, tmp_path_factory):
  """Every registered stage on a fresh (untrained) smoke model: the projection
  alone decides where α is 0, so training adds nothing but time."""
  cfg = smoke_config(request.param)
  cfg.analyses = ','.join(stages_lib.STAGES)
  cfg.analysis.max_docs = DOCS
  dataset = load_dataset(cfg.data)
  model = build_model(cfg.model, len(dataset.vocab))
  params = model.init(jax.random.PRNGKey(0))
  out = tmp_path_factory.mktemp(request.param)
  with jax.numpy_dtype_promotion('standard'):
    summaries = stages_lib.run_analyses(model, params, dataset.splits, cfg, str(out), dataset.fingerprint,
                                    log=lambda _: None)
  return request.param, out, summaries


def constant_on_words(vectors, lengths):
  """[B] whether each document's vector takes one value on its words."""
  mask = words(lengths, vectors.shape[1])
  high = np.where(mask, vectors, -np.inf).max(axis=1)
  low = np.where(mask, vectors, np.inf).min(axis=1)
  return high == low


def ranked_vectors(out):
  """{name: [B, L]} every vector some τ ranks, by the names τ arrays use."""
  gradient, _ = load(out, 'gradient')
  vectors = {k: gradient[k] for k in ('alpha', 'gradient', 'gradient_logit', 'gradient_attached',
                                       'gradient_l2')}
  vectors['attention'] = gradient['alpha']
  vectors['loo'] = load(out, 'loo')[0]['loo']
  if 'importance' in stages_lib.STAGES:
    importance, _ = load(out, 'importance')
    vectors.update({k: importance[k] for k in importance if k.startswith(('g_', 'd_'))})
  return vectors, gradient['lengths']


def tau_operands(name):
  """'tau_attention_loo' -> ('attention', 'loo'); 'tau_g_y_x' (importance) -> ('alpha', 'g_y_x')."""
  pair = name[len('tau_'):]
  first, _, second = pair.partition('_')
  return (first, second) if first in ('attention', 'gradient') else ('alpha', pair)


def test_every_stage_gives_finite_results(analysed):
  projection, out, summaries = analysed
  assert set(summaries) == set(stages_lib.STAGES)
  vectors, lengths = ranked_vectors(out)
  mask = words(lengths, vectors['alpha'].shape[1])
  for name in stages_lib.STAGES:
    arrays, _ = load(out, name)
    for key, values in arrays.items():
      if values.dtype.kind != 'f':
        continue
      nan = np.isnan(values)
      if key.startswith(('tau_', 'p_')):  # τ-b is undefined only for a constant vector
        a, b = tau_operands('tau_' + key.partition('_')[2])
        allowed = constant_on_words(vectors[a], lengths) | constant_on_words(vectors[b], lengths)
        assert not np.any(nan & ~allowed), f'{projection} {name}.{key}: NaN for a non-constant pair'
      elif key.startswith('entropy_layer'):  # H̃ per position p: NaN off the words only
        assert np.array_equal(nan, ~mask[:, :values.shape[1]]), f'{projection} {name}.{key}'
      elif key.startswith('entropy_'):  # H̃ is undefined for n < 2 words
        assert not np.any(nan & (lengths - 2 >= 2)), f'{projection} {name}.{key}'
      else:
        assert not np.any(nan), f'{projection} {name}.{key} has NaN'
      assert not np.any(np.isinf(values)), f'{projection} {name}.{key} has inf'


def test_the_projection_shapes_attention_as_documented(analysed):
  projection, out, _ = analysed
  vectors, lengths = ranked_vectors(out)
  alpha, mask = vectors['alpha'], words(lengths, vectors['alpha'].shape[1])
  np.testing.assert_allclose(alpha.sum(axis=1), 1.0, rtol=1e-5)
  assert np.all(alpha[~mask] == 0) and np.all(alpha >= 0)
  if projection == 'uniform':
    assert np.all(constant_on_words(alpha, lengths))
    kendall_arrays, _ = load(out, 'kendall')
    assert np.all(np.isnan(kendall_arrays['tau_attention_gradient']))  # α is all ties
  else:  # sparse: some words get exactly 0, and τ is still defined
    assert np.any((alpha == 0) & mask)
    kendall_arrays, _ = load(out, 'kendall')
    assert np.any(np.isfinite(kendall_arrays['tau_attention_gradient']))


def test_the_adversary_searches_the_models_own_projection(analysed):
  projection, out, _ = analysed
  arrays, summary = load(out, 'adversarial')
  assert summary is not None
  vectors, lengths = ranked_vectors(out)
  adversarial = arrays['adversarial_alpha']  # [B, K, L]
  mask = words(lengths, adversarial.shape[-1])[:, None, :]
  np.testing.assert_allclose(adversarial.sum(axis=-1), 1.0, rtol=1e-5)  # on the simplex
  assert np.all(adversarial >= 0) and np.all(adversarial[np.broadcast_to(~mask, adversarial.shape)] == 0)
  if projection == 'uniform':  # the model's own family is one point
    assert np.all(arrays['jsd'] == 0) and np.all(arrays['max_jsd'] == 0)
  else:
    assert np.any((adversarial == 0) & mask), 'sparse adversaries have exact zeros'
    assert np.all(arrays['jsd'] >= 0) and np.any(arrays['jsd'] > 0)


@pytest.mark.heavy  # CI margin; the adversary's own tests (tests/analysis/test_adversarial.py) stay quick
def test_the_softmax_adversary_is_jw_search_whatever_the_model():
  cfg = smoke_config('sparsemax')
  dataset = load_dataset(cfg.data)
  model = build_model(cfg.model, len(dataset.vocab))
  params = model.init(jax.random.PRNGKey(0))
  split = dataset.splits['test']
  tokens = np.zeros((4, max(len(s) for s in split.sequences[:4])), np.int32)
  for i, s in enumerate(split.sequences[:4]):
    tokens[i, :len(s)] = s
  lengths = jnp.asarray([len(s) for s in split.sequences[:4]], jnp.int32)
  fwd = model.forward(params, jnp.asarray(tokens), lengths)
  keys = jax.random.split(jax.random.PRNGKey(1), 4)
  with jax.numpy_dtype_promotion('standard'):
    softmax = adv_lib.adversarial_attention(model, params, fwd.hidden, fwd.alpha, fwd.mask, lengths,
                                            keys, steps=5, projection=projections.softmax)
  mask = np.broadcast_to(np.asarray(fwd.mask)[:, None, :], softmax.alpha.shape)
  assert np.any(np.asarray(fwd.alpha)[np.asarray(fwd.mask)] == 0)  # the model is sparse ...
  assert np.all(np.asarray(softmax.alpha)[mask] > 0)  # ... J&W's adversaries are not
  np.testing.assert_allclose(np.asarray(softmax.alpha).sum(-1), 1.0, rtol=1e-5)


@pytest.mark.heavy
def test_wp_experiments_run_on_a_sparsegen_model(tmp_path):
  cfg = smoke_config('sparsegen', model__sparsegen_lambda=-1.0)
  cfg.experiments = 'seeds,consistent_adversary'
  cfg.experiment.seeds.seeds = '1'
  cfg.analysis.max_docs = DOCS
  cfg.experiment.consistent_adversary.lambdas = '1'
  cfg.experiment.consistent_adversary.epochs = 2
  helpers.run(cfg, tmp_path)
  summaries = experiments.load_summaries(str(tmp_path))
  assert set(summaries) >= {'seeds', 'consistent_adversary'}
  for row in summaries['consistent_adversary']['rows']:
    assert np.isfinite(row['mean_jsd']) and np.isfinite(row['mean_tvd'])
  found = experiment_store.latest(str(tmp_path), 'consistent_adversary')
  adversary = restore(str(tmp_path / found[1]['models_folder'] / 'adversaries' / 'lambda1'))
  assert adversary.config.model.projection == 'sparsegen'
  assert adversary.config.model.sparsegen_lambda == -1.0
  text = json.dumps(summaries['seeds'])
  assert 'NaN' not in text and 'Infinity' not in text


@pytest.mark.heavy  # CI margin; test_frozen_subtrees_follow_update_only stays quick
def test_update_only_leaves_the_other_subtrees_bit_identical(tmp_path):
  cfg = smoke_config('sparsemax', train__update_only='attention')
  helpers.run(cfg, tmp_path)
  trained = restore(str(tmp_path))
  dataset = load_dataset(cfg.data)
  model = build_model(cfg.model, len(dataset.vocab))
  initial = initial_params_lib.initial_params(model, cfg, dataset, lambda _: None)
  for subtree in ('embedding', 'encoder', 'decoder'):
    for p, q in zip(jax.tree.leaves(trained.params[subtree]), jax.tree.leaves(initial[subtree])):
      np.testing.assert_array_equal(p, q)
  assert not all(np.array_equal(p, q) for p, q in zip(jax.tree.leaves(trained.params['attention']),
                                                      jax.tree.leaves(initial['attention'])))


def test_frozen_subtrees_follow_update_only_and_freeze_embeddings():
  cfg = smoke_config('softmax')
  assert frozen_subtrees(cfg) == ()
  cfg.model.freeze_embeddings = True
  assert frozen_subtrees(cfg) == ('embedding',)
  cfg.train.update_only = 'embedding, decoder'
  assert frozen_subtrees(cfg) == ('embedding', 'encoder', 'attention')  # frozen embeddings win
  cfg.model.freeze_embeddings = False
  assert frozen_subtrees(cfg) == ('encoder', 'attention')


@pytest.mark.parametrize('value', ['scorer', 'attention,', ',', 'attention,decoders'])
def test_a_bad_update_only_is_refused_with_the_subtrees(value):
  cfg = smoke_config('softmax', train__update_only=value)
  if value == 'attention,':  # a trailing comma is harmless
    config_lib.validate(cfg)
    return
  with pytest.raises(ConfigError, match='must name params subtrees among embedding, encoder'):
    config_lib.validate(cfg)


def test_only_a_non_default_adversary_projection_changes_the_stage_key():
  """Results of softmax models computed before the option existed stay valid."""
  adversarial = stages_lib.STAGES['adversarial']
  cfg = smoke_config('sparsemax')
  assert 'projection' not in adversarial.key_settings(cfg.analysis)
  cfg.analysis.adversarial.projection = 'softmax'
  assert adversarial.key_settings(cfg.analysis)['projection'] == 'softmax'
