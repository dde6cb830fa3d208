"""Projections onto the simplex: properties and agreement with references."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from attn_jax.models import projections


def random_case(seed, rows=6, width=9):
  rng = np.random.default_rng(seed)
  scores = jnp.asarray(rng.normal(size=(rows, width)) * 2, jnp.float32)
  lengths = rng.integers(1, width + 1, size=rows)
  mask = jnp.asarray(np.arange(width)[None, :] < lengths[:, None])
  return scores, mask


@pytest.mark.parametrize('name', ['softmax', 'sparsemax', 'sparsegen', 'uniform'])
def test_sums_to_one_and_zero_off_mask(name):
  scores, mask = random_case(0)
  alpha = projections.get(name, 0.3)(scores, mask)
  np.testing.assert_allclose(alpha.sum(-1), 1.0, rtol=1e-6)
  assert float(jnp.abs(jnp.where(mask, 0.0, alpha)).max()) == 0.0
  assert float(alpha.min()) >= 0.0


def test_softmax_matches_plain_softmax_on_the_unmasked_part():
  scores, mask = random_case(1)
  alpha = projections.softmax(scores, mask)
  for row in range(scores.shape[0]):
    n = int(mask[row].sum())
    np.testing.assert_allclose(alpha[row, :n], jax.nn.softmax(scores[row, :n]), rtol=1e-6)


def test_sparsemax_matches_optax_projection_simplex():
  scores, mask = random_case(2)
  alpha = projections.sparsemax(scores, mask)
  for row in range(scores.shape[0]):
    n = int(mask[row].sum())
    with jax.numpy_dtype_promotion('standard'):  # optax mixes int and float here
      expected = optax.projections.projection_simplex(scores[row, :n])
    np.testing.assert_allclose(alpha[row, :n], expected, atol=1e-6)


def test_sparsemax_support_and_threshold():
  scores = jnp.array([[3.0, 1.0, 0.9, -2.0, 5.0]])
  mask = jnp.array([[True, True, True, True, False]])  # the 5.0 is masked out
  alpha = projections.sparsemax(scores, mask)
  # τ = (3 + 1 + 0.9 - 1) / 3 = 1.3 > 1: only the first item survives
  np.testing.assert_allclose(alpha, [[1.0, 0.0, 0.0, 0.0, 0.0]], atol=1e-7)
  close = jnp.array([[1.0, 0.9, 0.8, -2.0]])
  alpha = projections.sparsemax(close, jnp.ones_like(close, dtype=bool))
  np.testing.assert_allclose(alpha, [[0.4333333, 0.3333333, 0.2333333, 0.0]], atol=1e-6)


def test_sparsegen_at_zero_is_sparsemax_and_tends_to_uniform_and_argmax():
  scores, mask = random_case(3)
  np.testing.assert_allclose(projections.sparsegen_lin(scores, mask, 0.0),
                             projections.sparsemax(scores, mask), atol=1e-7)
  np.testing.assert_allclose(projections.sparsegen_lin(scores, mask, -1e4),
                             projections.uniform(scores, mask), atol=1e-3)
  sharp = projections.sparsegen_lin(scores, mask, 0.999)
  for row in range(scores.shape[0]):
    assert float(sharp[row].max()) == pytest.approx(1.0)
    assert int(jnp.argmax(sharp[row])) == int(jnp.argmax(jnp.where(mask[row], scores[row], -jnp.inf)))


def test_sparsegen_support_shrinks_as_lambda_grows():
  scores, mask = random_case(4, rows=20, width=12)
  sizes = [float((projections.sparsegen_lin(scores, mask, lam) > 0).sum())
           for lam in (-4.0, -1.0, 0.0, 0.5, 0.9)]
  assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]


@pytest.mark.parametrize('name', ['softmax', 'sparsemax', 'sparsegen'])
def test_gradients_are_finite_and_zero_on_masked_scores(name):
  scores, mask = random_case(5)
  project = projections.get(name, 0.2)
  weights = jnp.arange(scores.shape[1], dtype=jnp.float32)[None, :]
  grad = jax.grad(lambda s: jnp.sum(project(s, mask) * weights))(scores)
  assert bool(jnp.isfinite(grad).all())
  assert float(jnp.abs(jnp.where(mask, 0.0, grad)).max()) == 0.0


def test_sparsemax_gradient_matches_its_jacobian():
  """On the support S, dα/ds = diag(s) - s s^T / |S| (Martins & Astudillo 2016)."""
  scores = jnp.array([0.5, 1.2, -0.3, 1.0, 0.9])
  mask = jnp.ones(5, dtype=bool)
  jac = jax.jacobian(lambda s: projections.sparsemax(s[None], mask[None])[0])(scores)
  support = (projections.sparsemax(scores[None], mask[None])[0] > 0).astype(jnp.float32)
  expected = jnp.diag(support) - jnp.outer(support, support) / support.sum()
  np.testing.assert_allclose(jac, expected, atol=1e-6)


def test_all_masked_row_gives_zeros_and_zero_gradients_not_nan():
  scores = jnp.ones((1, 4))
  mask = jnp.zeros((1, 4), dtype=bool)
  for name in projections.NAMES:
    project = projections.get(name, 0.5)
    assert float(jnp.abs(project(scores, mask)).sum()) == 0.0
    grad = jax.grad(lambda s, p=project: jnp.sum(p(s, mask) * jnp.arange(4.0)[None]))(scores)
    assert bool(jnp.isfinite(grad).all()) and float(jnp.abs(grad).max()) == 0.0
