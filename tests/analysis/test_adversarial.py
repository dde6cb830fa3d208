"""J&W's adversarial attention (`adversarial_multi`) and its JSD against naive float64 loops."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.analysis import Adversaries, adversarial_attention, jw_jsd, max_jsd_within
from attn_jax.analysis.adversarial_search import adversarial_loss
from analysis_helpers import documents, pad, setup, sigmoid

WIDTH = 11


def naive_jsd(p, q):
  """J&W's `jsd`: m from the raw inputs, then clip to [0, 1] and 1e-10 in the logs."""
  clip = lambda x: min(max(float(x), 0.0), 1.0)
  kl = lambda a, b: sum(clip(x) * (math.log(clip(x) + 1e-10) - math.log(clip(y) + 1e-10))
                        for x, y in zip(a, b))
  m = [(x + y) / 2 for x, y in zip(p, q)]
  return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def test_jw_jsd_matches_the_formula_and_is_a_bounded_symmetric_divergence():
  rng = np.random.default_rng(0)
  p = rng.dirichlet(np.full(6, 0.5), size=8).astype(np.float32)
  q = rng.dirichlet(np.full(6, 0.5), size=8).astype(np.float32)
  p[0, :3], q[0, 3:] = 0.0, 0.0  # zeros on either side
  p[1] = [0.5, 0.5, 0, 0, 0, 0]
  q[1] = [0, 0, 0, 0, 0.5, 0.5]  # disjoint supports: ln 2
  p[2, 0] += 1e-3  # slightly outside the simplex: the clip matters only here
  q[2, 1] -= 2 * q[2, 1]
  got = np.asarray(jw_jsd(jnp.asarray(p), jnp.asarray(q)))
  np.testing.assert_allclose(got, [naive_jsd(a, b) for a, b in zip(p, q)], rtol=1e-5, atol=1e-7)
  assert got[1] == pytest.approx(math.log(2), abs=1e-6)
  assert np.all(got <= math.log(2) + 1e-6) and np.all(got >= -1e-7)
  np.testing.assert_allclose(jw_jsd(jnp.asarray(q), jnp.asarray(p)), got, rtol=1e-6, atol=1e-8)
  np.testing.assert_allclose(jw_jsd(jnp.asarray(p), jnp.asarray(p)), 0.0, atol=1e-7)


def decoder_of(params):
  kernel, bias = params['decoder']['output']['kernel'], params['decoder']['output']['bias']
  return np.asarray(kernel, np.float64)[:, 0], float(bias[0])


def naive_loss(ell, hidden, alpha, mask, probs, params, eps, weight):
  """Returns (loss, total hinge) with a loop over documents and adversaries."""
  theta, bias = decoder_of(params)
  loss = hinges = 0.0
  for b in range(ell.shape[0]):
    words = np.flatnonzero(mask[b])
    advs = []
    for k in range(ell.shape[1]):
      e = np.exp(ell[b, k, words] - ell[b, k, words].max())
      adv = np.zeros(ell.shape[2])
      adv[words] = e / e.sum()
      advs.append(adv)
      hinge = max(abs(sigmoid(theta @ (adv @ hidden[b]) + bias) - probs[b]) - eps, 0.0)
      hinges += hinge
      loss += -naive_jsd(adv, alpha[b]) + weight * hinge
    pairs = [naive_jsd(a, c) for a in advs for c in advs]  # k = k' included
    loss -= sum(pairs) / len(pairs)
  return loss, hinges


def batch_and_forward(seed=0):
  model, params = setup('average')  # only the decoder is used: any encoder will do
  docs = documents(seed=seed)
  tokens, lengths = pad(docs, WIDTH)
  return model, params, tokens, lengths, model.forward(params, tokens, lengths)


def vmapped_decoder(model, params):
  return lambda h, adv: jax.vmap(lambda a: model.decode(params, h, a), in_axes=1, out_axes=1)(adv)


def test_adversarial_loss_matches_a_loop_over_documents_and_adversaries():
  model, params, tokens, lengths, fwd = batch_and_forward()
  ell = (3.0 * np.random.default_rng(1).normal(size=(3, 4, WIDTH))).astype(np.float32)
  probs = jax.nn.sigmoid(fwd.logits)
  got = adversarial_loss(jnp.asarray(ell), fwd.hidden, fwd.alpha, fwd.mask, probs,
                         vmapped_decoder(model, params), hinge_epsilon=0.01, output_weight=500.0)
  as64 = lambda x: np.asarray(x, np.float64)
  expected, hinges = naive_loss(as64(ell), as64(fwd.hidden), as64(fwd.alpha), np.asarray(fwd.mask),
                                as64(probs), params, 0.01, 500.0)
  assert hinges > 1e-4  # the hinge term is exercised
  np.testing.assert_allclose(float(got), expected, rtol=1e-5)


# Jitted so that tests with the same shapes share one compilation.
adversaries_of = jax.jit(adversarial_attention, static_argnums=0,
                         static_argnames=('num_adversaries', 'steps'))


def run_adversaries(model, params, fwd, lengths, keys, steps=60):
  return adversaries_of(model, params, fwd.hidden, fwd.alpha, fwd.mask, lengths, keys,
                        num_adversaries=3, steps=steps)


@pytest.mark.usefixtures('optax_promotion')
def test_adversaries_of_a_batch_are_each_documents_own():
  """Same key, same document: the same adversaries alone and padded wider."""
  model, params, tokens, lengths, fwd = batch_and_forward(seed=2)
  keys = jax.random.split(jax.random.PRNGKey(0), 3)
  together = run_adversaries(model, params, fwd, lengths, keys)
  wider = jnp.pad(tokens, ((0, 0), (0, 3)))
  for b, n in enumerate(np.asarray(lengths)):
    one = model.forward(params, wider[b:b + 1], lengths[b:b + 1])
    alone = run_adversaries(model, params, one, lengths[b:b + 1], keys[b:b + 1])
    for field, x, y in zip(Adversaries._fields, together, alone):
      x, y = (x[b, :, :n], y[0, :, :n]) if field == 'alpha' else (x[b], y[0])
      np.testing.assert_allclose(x, y, atol=2e-4, err_msg=field)
    assert np.all(np.asarray(alone.alpha)[0, :, n:] == 0.0)


@pytest.mark.usefixtures('optax_promotion')
def test_optimisation_lowers_the_loss_and_keeps_valid_distributions():
  model, params, tokens, lengths, fwd = batch_and_forward(seed=3)
  keys = jax.random.split(jax.random.PRNGKey(4), 3)
  probs = jax.nn.sigmoid(fwd.logits)

  def loss(adv):  # the loss depends on ℓ only through α̃ = softmax(ℓ), and softmax(log α̃) = α̃
    ell = jnp.log(jnp.where(fwd.mask[:, None, :], adv.alpha, 1.0))
    return float(adversarial_loss(ell, fwd.hidden, fwd.alpha, fwd.mask, probs,
                                  vmapped_decoder(model, params),
                                  hinge_epsilon=0.01, output_weight=500.0))

  initial = run_adversaries(model, params, fwd, lengths, keys, steps=0)
  adv = run_adversaries(model, params, fwd, lengths, keys)
  assert loss(adv) < loss(initial) - 1.0

  alpha = np.asarray(adv.alpha)
  words = np.broadcast_to(np.asarray(fwd.mask)[:, None, :], alpha.shape)
  np.testing.assert_allclose(alpha.sum(-1), 1.0, rtol=1e-5)
  assert np.all(alpha[~words] == 0.0) and np.all(alpha >= 0.0)
  theta, bias = decoder_of(params)
  hidden, y = np.asarray(fwd.hidden, np.float64), np.asarray(probs, np.float64)
  for b in range(3):
    for k in range(3):
      y_k = sigmoid(theta @ (alpha[b, k].astype(np.float64) @ hidden[b]) + bias)
      assert float(adv.probs[b, k]) == pytest.approx(y_k, abs=2e-6)
      assert float(adv.output_change[b, k]) == pytest.approx(abs(y_k - y[b]), abs=2e-6)
      assert float(adv.jsd[b, k]) == pytest.approx(naive_jsd(alpha[b, k], fwd.alpha[b]), abs=2e-6)
  assert float(adv.jsd[2].max()) > 0.1  # the 7-word document's adversaries move away


def test_max_jsd_within_picks_the_largest_divergence_among_close_outputs():
  rng = np.random.default_rng(5)
  jsd = rng.uniform(0.0, 0.69, size=(6, 4)).astype(np.float32)
  change = rng.choice([0.001, 0.03, 0.049, 0.051, 0.2], size=(6, 4)).astype(np.float32)
  change[0] = 0.3  # no adversary qualifies: the original α, JSD 0
  change[1] = [0.2, 0.01, 0.2, 0.04]
  jsd[1] = [0.6, 0.1, 0.5, 0.2]  # the largest JSDs are out of reach: 0.2
  adversaries = Adversaries(jnp.zeros((6, 4, 3)), jnp.zeros((6, 4)), jnp.asarray(jsd),
                            jnp.asarray(change))
  for epsilon in (0.05, 0.1):
    got = np.asarray(max_jsd_within(adversaries, epsilon))
    for b in range(6):
      best = 0.0
      for k in range(4):
        if change[b, k] <= epsilon:
          best = max(best, float(jsd[b, k]))
      assert got[b] == pytest.approx(best)
      if got[b] > 0:  # it is some adversary's JSD, and that adversary is within ε
        assert any(jsd[b, k] == got[b] and change[b, k] <= epsilon for k in range(4))
  got = np.asarray(max_jsd_within(adversaries))
  assert got[0] == 0.0 and got[1] == pytest.approx(0.2)
