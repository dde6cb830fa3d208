"""W&P's losses for the model axis against naive float64 loops, and imposed
(guide) attention: no gradient into a guide, exactly the α the decoder sees."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.analysis.divergences import attention_kl, jw_jsd, wp_tvd
from attn_jax.data.batching import Batch
from attn_jax.training.consistency_loss import consistency_inputs, consistency_loss
from attn_jax.training.guided import guide_inputs, guided_logits, guided_loss, uniform_alpha
import analysis_helpers as ah

EPS = 1e-10


def random_simplex(rng, n, width, zeros=False):
  """[n, width] rows on the simplex over positions 1 .. width − 2 (some exact zeros)."""
  x = rng.random((n, width))
  x[:, 0] = x[:, -1] = 0.0
  if zeros:
    x[x < 0.3] = 0.0
  x[:, 1] = np.maximum(x[:, 1], 0.05)
  return x / x.sum(axis=1, keepdims=True)


def naive_kl(p, q, mask):
  return sum(p[t] * (math.log(p[t] + EPS) - math.log(q[t] + EPS)) for t in range(len(p)) if mask[t])


def naive_jsd(p, q):
  m = [(a + b) / 2 for a, b in zip(p, q)]
  kl = lambda x, y: sum(a * (math.log(a + EPS) - math.log(b + EPS)) for a, b in zip(x, y))
  return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def test_tvd_kl_and_jsd_equal_float64_loops():
  rng = np.random.default_rng(0)
  p, q = random_simplex(rng, 6, 9, zeros=True), random_simplex(rng, 6, 9)
  mask = np.zeros((6, 9), bool)
  mask[:, 1:-1] = True
  with jax.enable_x64(True):
    kl = np.asarray(attention_kl(jnp.asarray(p), jnp.asarray(q), jnp.asarray(mask)))
    jsd = np.asarray(jw_jsd(jnp.asarray(p), jnp.asarray(q)))
    a, b = rng.random(6), rng.random(6)
    tvd = np.asarray(wp_tvd(jnp.asarray(a), jnp.asarray(b)))
  for i in range(6):
    assert kl[i] == pytest.approx(naive_kl(p[i], q[i], mask[i]), rel=1e-12, abs=1e-14)
    assert jsd[i] == pytest.approx(naive_jsd(p[i], q[i]), rel=1e-12, abs=1e-14)
    assert tvd[i] == pytest.approx(0.5 * abs(a[i] - b[i]), rel=1e-14)
  assert np.all(jsd <= math.log(2) + 1e-12)


def test_kl_ignores_positions_outside_the_mask():
  p = jnp.asarray([[0.0, 0.5, 0.5, 0.3]])
  q = jnp.asarray([[0.0, 0.25, 0.75, 1e-30]])
  mask = jnp.asarray([[False, True, True, False]])
  assert float(attention_kl(p, q, mask)[0]) == pytest.approx(
      0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75), rel=1e-5)


def make_batch(docs, labels, weights, index, width=None):
  tokens, lengths = ah.pad(docs, width)
  return Batch(np.asarray(tokens), np.asarray(lengths), np.asarray(labels, np.float32),
               np.asarray(weights, np.float32), np.asarray(index, np.int32))


def test_consistency_loss_equals_a_naive_loop_with_a_filler_row():
  model, params = ah.setup(seed=3)
  docs = ah.documents((7, 5, 9), seed=4) + ah.documents((3,), seed=5)
  batch = make_batch(docs, [1, 0, 1, 0], [2.0, 1.0, 2.0, 0.0], [2, 0, 1, -1], width=10)
  rng = np.random.default_rng(1)
  # float32 values, as the trainer's batch inputs carry them
  probs = rng.random(3).astype(np.float32).astype(np.float64)
  alpha = random_simplex(rng, 3, 12).astype(np.float32).astype(np.float64)
  lam = 0.3
  inputs = consistency_inputs({'train': (probs, alpha)})('train', batch.index, 10)
  with jax.enable_x64(True):
    p64 = ah.to_f64(params)
    batch64 = batch._replace(weights=batch.weights.astype(np.float64),
                             lengths=ah.x64_lengths(batch.lengths))
    loss = float(consistency_loss(model, p64, batch64,
                                  None, {'lambda': jnp.float64(lam)},
                                  {k: jnp.asarray(v, jnp.float64) for k, v in inputs.items()}))
    tvd = kl = 0.0
    for row, doc in enumerate(docs[:3]):  # the filler row counts in neither sum
      fwd = ah.single(model, p64, doc)
      target = batch.index[row]
      y_adv = float(jax.nn.sigmoid(fwd.logits[0]))
      tvd += 0.5 * abs(y_adv - probs[target])
      a = np.asarray(fwd.alpha[0])
      kl += naive_kl(a, alpha[target][:len(a)], np.asarray(fwd.mask[0]))
  assert loss == pytest.approx((tvd - lam * kl) * (2.0 + 1.0 + 2.0), rel=1e-9)


def test_batch_inputs_pad_to_a_batch_wider_than_the_stored_rows():
  alpha = np.arange(12, dtype=np.float32).reshape(3, 4)
  inputs = consistency_inputs({'train': (np.array([0.1, 0.2, 0.3]), alpha)})('train', np.array([2, -1]), 6)
  np.testing.assert_array_equal(inputs['target_alpha'], [[8, 9, 10, 11, 0, 0], [0] * 6])
  np.testing.assert_allclose(inputs['target_probs'], [0.3, 0.0])
  guides = guide_inputs({'dev': [alpha, 2 * alpha]})('dev', np.array([1, 0]), 3)['guides']
  assert guides.shape == (2, 2, 3)
  np.testing.assert_array_equal(guides[1, 0], 2 * alpha[1, :3])


def test_uniform_alpha_is_one_over_n_on_the_words_and_zero_elsewhere():
  alpha = uniform_alpha(np.array([7, 3, 2]), 9)
  np.testing.assert_allclose(alpha[0], [0] + [0.2] * 5 + [0, 0, 0])
  np.testing.assert_allclose(alpha[1], [0, 1, 0] + [0] * 6)
  np.testing.assert_array_equal(alpha[2], np.zeros(9))  # no words: nothing to attend


def guided_setup():
  model, params = ah.setup(encoder='average', seed=2)
  docs = ah.documents(seed=6)
  tokens, lengths = ah.pad(docs)
  rng = np.random.default_rng(2)
  guides = jnp.asarray(np.stack([uniform_alpha(np.asarray(lengths), tokens.shape[1]),
                                 random_simplex(rng, 3, tokens.shape[1])]), jnp.float32)
  return model, params, tokens, lengths, guides


def test_the_decoder_sees_exactly_the_guide_and_no_gradient_reaches_it():
  model, params, tokens, lengths, guides = guided_setup()
  hidden = model.encode(params, model.embed(params, tokens), lengths)
  for g in (0, 1):
    logits = guided_logits(model, params, tokens, lengths, {'guide': jnp.int32(g)}, {'guides': guides})
    np.testing.assert_allclose(logits, model.decode(params, hidden, guides[g]), rtol=1e-6)
  grad = jax.grad(lambda gs: jnp.sum(guided_logits(model, params, tokens, lengths,
                                                   {'guide': jnp.int32(1)}, {'guides': gs})))(guides)
  np.testing.assert_array_equal(grad, np.zeros_like(guides))
  batch = Batch(tokens, lengths, jnp.ones(3), jnp.ones(3), jnp.arange(3, dtype=jnp.int32))
  grads = jax.grad(lambda p: guided_loss(model, p, batch, None, {'guide': jnp.int32(1)},
                                         {'guides': guides}))(params)
  assert not np.any(np.asarray(grads['attention']['projection']['kernel']))  # the scorer is unused


def test_guide_minus_one_is_the_models_own_attention():
  model, params, tokens, lengths, guides = guided_setup()
  own = guided_logits(model, params, tokens, lengths, {'guide': jnp.int32(-1)}, {'guides': guides})
  np.testing.assert_allclose(own, model.forward(params, tokens, lengths).logits, rtol=1e-6)
  no_guides = guide_inputs({'test': []})('test', np.arange(3), tokens.shape[1])
  assert no_guides['guides'].shape == (0, 3, tokens.shape[1])
  alone = guided_logits(model, params, tokens, lengths, {'guide': jnp.int32(-1)}, no_guides)
  np.testing.assert_allclose(alone, own, rtol=1e-6)


def test_attention_focus_equals_a_float64_loop():
  from attn_jax.analysis import attention_focus  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(3)
  n, width = 7, 9
  lengths = rng.integers(3, width + 1, n).astype(np.int32)  # SOS + words + EOS
  alpha, beta = np.zeros((n, width)), np.zeros((n, width))
  for i, length in enumerate(lengths):
    for x in (alpha, beta):
      x[i, 1:length - 1] = rng.dirichlet(np.full(length - 2, 0.3))
  alpha[0] = beta[0]  # identical rows: everything shared, same argmax
  alpha[1, :] = 0.0
  alpha[1, lengths[1] - 2] = 1.0  # all mass on the last word
  got = jax.jit(attention_focus)(jnp.asarray(alpha, jnp.float32), jnp.asarray(beta, jnp.float32),
                                 jnp.asarray(lengths))
  for i in range(n):
    words = range(1, lengths[i] - 1)
    top_a = max(words, key=lambda t: (alpha[i, t], -t))
    top_b = max(words, key=lambda t: (beta[i, t], -t))
    assert got.max_alpha[i] == pytest.approx(max(alpha[i, t] for t in words), abs=1e-6)
    assert got.shared_mass[i] == pytest.approx(sum(min(alpha[i, t], beta[i, t]) for t in words),
                                               abs=1e-6)
    assert got.shared_mass[i] == pytest.approx(
        1 - 0.5 * sum(abs(alpha[i, t] - beta[i, t]) for t in words), abs=1e-6)
    assert int(got.argmax[i]) == top_a
    assert bool(got.same_argmax[i]) == (top_a == top_b)
    assert bool(got.argmax_is_last_word[i]) == (top_a == lengths[i] - 2)
  assert got.shared_mass[0] == pytest.approx(1.0) and bool(got.same_argmax[0])
  assert got.max_alpha[1] == 1.0 and bool(got.argmax_is_last_word[1])
  assert got.max_alpha.dtype == jnp.float32 and got.argmax.dtype == jnp.int32
