"""Meister et al.'s sparsegen λ sweep as one program (eq. 3): each model's λ is
its own value on the model axis (`Model.with_values`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.workdirs import model_axis
from attn_jax.models import build_model, projections
from attn_jax.workdirs.restore import restore
from attn_jax.training import trainer
import helpers
from conftest import tiny_model_config

pytestmark = pytest.mark.usefixtures('optax_promotion')
LAMBDAS = (-1.0, 0.5)


def sparsegen_config(**overrides):
  # The average encoder compiles fastest; λ's path through the program is the same.
  return helpers.synthetic_config(model__encoder='average', model__projection='sparsegen',
                                  train__batch_seed=0, **overrides)


def test_with_values_sets_the_sparsegen_lambda():
  cfg = tiny_model_config(projection='sparsegen')
  model = build_model(cfg, 30)
  assert model.with_values({}) is model and model.with_values({'lambda': 1.0}) is model
  scores = jnp.asarray([[0.3, 1.2, -0.4, 0.9, 0.0]], jnp.float32)
  mask = jnp.asarray([[True, True, True, True, False]])
  for lam in LAMBDAS:
    cfg.sparsegen_lambda = lam
    expected = build_model(cfg, 30).project(scores, mask)
    traced = jax.jit(lambda v, s: model.with_values({'sparsegen_lambda': v}).project(s, mask))
    got = traced(jnp.float32(lam), scores)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, projections.sparsegen_lin(scores, mask, lam))


def test_each_sparsegen_model_carries_its_own_lambda_only_when_sparsegen():
  cfg = sparsegen_config(top__sweep='model.sparsegen_lambda=-1,0.5')
  members = model_axis.members(cfg, '/nowhere')
  np.testing.assert_array_equal(trainer.projection_values(members)['sparsegen_lambda'],
                                np.float32(LAMBDAS))
  cfg.model.projection = 'softmax'
  assert trainer.projection_values(model_axis.members(cfg, '/nowhere')) == {}


@pytest.mark.heavy
def test_a_lambda_sweep_equals_each_lambda_trained_alone(tmp_path):
  """2 λ as one vmapped program = each λ trained alone (its own config), and
  each model restores as an ordinary sparsegen model with its λ."""
  together = tmp_path / 'sweep'
  helpers.run(sparsegen_config(top__sweep='model.sparsegen_lambda=-1,0.5', train__model_axis='vmap'),
              together)
  # λ = −1 is not the config's default: a sweep model evaluated with the base
  # config's λ would differ from the one trained alone.
  lam = LAMBDAS[0]
  alone = tmp_path / 'alone'
  cfg = sparsegen_config()
  cfg.model.sparsegen_lambda = lam
  helpers.run(cfg, alone)
  x, y = restore(str(together / 'sparsegen_lambda-1')), restore(str(alone))
  assert x.config.model.projection == 'sparsegen' and x.config.model.sparsegen_lambda == lam
  assert x.selection['epoch'] == y.selection['epoch']
  for p, q in zip(jax.tree.leaves(x.params), jax.tree.leaves(y.params)):
    np.testing.assert_allclose(p, q, atol=2e-5)
  e, f = helpers.eval_without_timing(together / 'sparsegen_lambda-1'), helpers.eval_without_timing(alone)
  for key in ('accuracy', 'roc_auc', 'selected_epoch'):
    np.testing.assert_allclose(e[key], f[key], atol=1e-6)
  probs = [np.load(d / 'sparsegen_lambda-1' / 'predictions_test.npz')['probs'] if d == together
           else np.load(d / 'predictions_test.npz')['probs'] for d in (together, alone)]
  np.testing.assert_allclose(probs[0], probs[1], atol=1e-5)
  # The other model really trained with its own λ: it differs from the λ = −1 model.
  other = restore(str(together / 'sparsegen_lambda0.5'))
  assert other.config.model.sparsegen_lambda == 0.5
  assert any(not np.allclose(p, q) for p, q in zip(jax.tree.leaves(other.params),
                                                   jax.tree.leaves(x.params)))
