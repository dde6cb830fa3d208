"""Serrano & Smith's attention erasure (S&S §§4–5) against naive float64 loops.

Only the decoder z = θ·Σ_t α_t h_t + b sees an erased α, so most tests
build the hidden states by hand: h_t = c_t θ/‖θ‖² makes z = Σ_t α_t c_t + b,
which puts every decision flip exactly where the test wants it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.analysis import (binary_js, decision_gradient, erase, erase_until_flip,
                               random_rankings, ranking, removal_comparison, single_weight_erasure)
from attn_jax.analysis.attention_erasure import top_item
from analysis_helpers import documents, js_binary, pad, setup, sigmoid

# Jitted so that tests with the same shapes share one compilation.
single_weight_erasure = jax.jit(single_weight_erasure, static_argnums=(0, 6))
erase_until_flip = jax.jit(erase_until_flip, static_argnums=0)

WIDTH = 8
BIAS = 0.05  # z of the all-erased (zero) attention vector

# (contributions c_t of the words, their attention α_t); z = Σ α c + BIAS.
CASES = [
    ([3, -1, -1, -1], [0.4, 0.2, 0.2, 0.2]),     # erasing the top word flips
    ([2, 2, -2], [0.4, 0.35, 0.25]),             # flips after the top two
    ([-1, -1, -1], [0.5, 0.3, 0.2]),             # flips only at the zero vector (z = BIAS)
    ([1, 1, 1, 1, 1], [0.2, 0.2, 0.2, 0.2, 0.2]),  # never flips; ties for the top
    ([-1], [1.0]),                               # one word: the zero vector flips it
    ([0.5, -4, 1, 1, 1, 1], [0.1, 0.05, 0.4, 0.15, 0.2, 0.1]),  # top in the middle; 3 items
    ([-1, 1, 1], [0.5, 0.25, 0.25]),  # erasing any word but the top flips; by attention, never
]


def constructed(cases=CASES):
  """(model, params with decoder bias BIAS, hidden [B, W, H], α [B, W], word mask [B, W])."""
  model, params = setup('average')
  params['decoder']['output']['bias'] = jnp.full((1,), BIAS, jnp.float32)
  theta = np.asarray(params['decoder']['output']['kernel'], np.float64)[:, 0]
  hidden = np.zeros((len(cases), WIDTH, theta.size))
  alpha = np.zeros((len(cases), WIDTH))
  for b, (c, a) in enumerate(cases):
    n = len(c)
    hidden[b, 1:n + 1] = np.asarray(c, np.float64)[:, None] * theta / (theta @ theta)
    hidden[b, 0] = hidden[b, n + 1] = theta  # SOS/EOS states exist but get no attention
    alpha[b, 1:n + 1] = a
  mask = alpha > 0
  return (model, params, jnp.asarray(hidden, jnp.float32), jnp.asarray(alpha, jnp.float32),
          jnp.asarray(mask))


def from_model(seed=0):
  """A random model's hidden states and attention on padded documents."""
  model, params = setup('average')
  tokens, lengths = pad(documents(lengths=(7, 3, 8, 5, 8, 4, 6), seed=seed), WIDTH)
  fwd = model.forward(params, tokens, lengths)
  return model, params, fwd.hidden, fwd.alpha, fwd.mask


def logit64(params, hidden, alpha):
  theta = np.asarray(params['decoder']['output']['kernel'], np.float64)[:, 0]
  bias = float(params['decoder']['output']['bias'][0])
  return float(theta @ (np.asarray(alpha, np.float64) @ np.asarray(hidden, np.float64)) + bias)


def naive_erase(alpha, items):
  a = np.array(alpha, np.float64)
  a[list(items)] = 0.0
  return a / a.sum() if a.sum() > 0 else a


def test_erase_zeroes_and_renormalises():
  alpha = jnp.array([[0.0, 0.5, 0.3, 0.2, 0.0], [0.0, 0.1, 0.6, 0.3, 0.0]])
  erased = jnp.array([[False, True, False, False, False], [False, False, True, True, False]])
  np.testing.assert_allclose(erase(alpha, erased), [[0, 0, 0.6, 0.4, 0], [0, 1, 0, 0, 0]],
                             atol=1e-7)
  np.testing.assert_array_equal(erase(alpha, jnp.zeros_like(erased)), alpha)
  np.testing.assert_array_equal(erase(alpha, jnp.ones_like(erased)), 0.0)
  np.testing.assert_array_equal(erase(alpha, alpha > 0), 0.0)  # every word: the zero vector


def test_binary_js_matches_the_formula():
  rng = np.random.default_rng(0)
  a = np.concatenate([rng.normal(0, 3, 20), [30.0, -30.0, 0.0, 5.0]]).astype(np.float32)
  b = np.concatenate([rng.normal(0, 3, 20), [-30.0, 30.0, 1e-3, 5.0]]).astype(np.float32)
  got = np.asarray(binary_js(jnp.asarray(a), jnp.asarray(b)))
  np.testing.assert_allclose(got, [js_binary(float(x), float(y)) for x, y in zip(a, b)],
                             rtol=1e-4, atol=1e-6)
  assert got[20] == pytest.approx(np.log(2), abs=1e-6)
  same = np.asarray(binary_js(jnp.asarray(a), jnp.asarray(a)))
  assert np.all(same >= 0.0) and same.max() < 1e-7  # 0 up to float32 rounding of log 2


def check_erasures(out, b, params, hidden, alpha64, top, other):
  """Row b of a `SingleErasure` against float64 loops: JS and flips of
  erasing `top` and `other`, and their attention gap."""
  z = logit64(params, hidden[b], alpha64[b])
  for item, js, flip in ((top, out.js_top, out.flip_top), (other, out.js_other, out.flip_other)):
    z_erased = logit64(params, hidden[b], naive_erase(alpha64[b], [item]))
    assert float(js[b]) == pytest.approx(js_binary(z, z_erased), rel=1e-3, abs=1e-6)
    assert bool(flip[b]) == ((z_erased > 0) != (z > 0))
  assert float(out.delta_alpha[b]) == pytest.approx(alpha64[b, top] - alpha64[b, other], abs=1e-7)


@pytest.mark.parametrize('random_item', ['paper', 'code'])
@pytest.mark.parametrize('source', [constructed, from_model])
def test_single_weight_erasure_matches_a_loop(source, random_item):
  model, params, hidden, alpha, mask = source()
  keys = jax.random.split(jax.random.PRNGKey(1), alpha.shape[0])
  out = single_weight_erasure(model, params, hidden, alpha, mask, keys, random_item)
  alpha64 = np.asarray(alpha, np.float64)
  for b in range(alpha.shape[0]):
    words = np.flatnonzero(np.asarray(mask[b]))
    n = len(words)
    top = words[np.argmax(alpha64[b, words])]
    other = int(out.other[b])
    assert int(out.top[b]) == top and int(out.num_items[b]) == n
    if n > 1:
      assert other in words
      assert other != top if random_item == 'paper' else 2 <= other <= n
    check_erasures(out, b, params, hidden, alpha64, top, other)
  if source is constructed:  # both branches of the flip
    assert bool(out.flip_top[0]) and not bool(out.flip_top[3])
    assert not bool(out.flip_other[0]) and bool(out.flip_other[6]) and not bool(out.flip_top[6])
    assert int(out.top[3]) == 1  # the first of the tied maxima


def test_the_random_item_covers_exactly_its_candidates():
  """Many keys on one 6-word document whose top word is position 3."""
  model, params, hidden, alpha, mask = constructed([CASES[5]] * 400)
  keys = jax.random.split(jax.random.PRNGKey(2), 400)
  paper = single_weight_erasure(model, params, hidden, alpha, mask, keys, 'paper')
  code = single_weight_erasure(model, params, hidden, alpha, mask, keys, 'code')
  assert set(np.asarray(paper.top)) == {3}
  assert set(np.asarray(paper.other)) == {1, 2, 4, 5, 6}
  assert set(np.asarray(code.other)) == {2, 3, 4, 5, 6}  # may hit the top, never the first word


def test_decision_gradient_is_the_closed_form():
  model, params, hidden, alpha, mask = from_model(seed=3)
  got = np.asarray(decision_gradient(model, params, hidden, alpha))
  theta = np.asarray(params['decoder']['output']['kernel'], np.float64)[:, 0]
  for b in range(alpha.shape[0]):
    z = logit64(params, hidden[b], alpha[b])
    slope = np.sign(z) * sigmoid(z) * (1 - sigmoid(z))  # d = max(σ, 1 − σ)
    expected = slope * (np.asarray(hidden[b], np.float64) @ theta)
    np.testing.assert_allclose(got[b], expected, rtol=1e-4, atol=1e-7)
  assert np.abs(got).max() > 1e-3


def test_ranking_orders_words_by_descending_score_then_the_rest():
  scores = jnp.array([[9.0, 0.2, 0.5, 0.2, 0.7, -1.0, 3.0]])
  mask = jnp.array([[False, True, True, True, True, False, False]])
  np.testing.assert_array_equal(ranking(scores, mask)[0], [4, 2, 1, 3, 0, 5, 6])


def test_random_rankings_are_orders_of_the_words_then_the_rest():
  _, _, _, alpha, mask = constructed()
  keys = jax.random.split(jax.random.PRNGKey(3), alpha.shape[0])
  orders = np.asarray(random_rankings(keys, mask, 20))
  assert orders.shape == (alpha.shape[0], 20, WIDTH)
  for b in range(alpha.shape[0]):
    words = list(np.flatnonzero(np.asarray(mask[b])))
    rest = [t for t in range(WIDTH) if t not in words]
    for order in orders[b]:
      assert sorted(order[:len(words)]) == words and list(order[len(words):]) == rest
    if len(words) >= 4:
      assert len({tuple(o) for o in orders[b]}) > 10


def naive_flip_point(params, hidden, alpha, words, order):
  """Erase order[0], order[1], … cumulatively until the decision flips."""
  z = logit64(params, hidden, alpha)
  n = len(words)
  for k in range(1, n + 1):
    z_k = logit64(params, hidden, naive_erase(alpha, order[:k]))
    if (z_k > 0) != (z > 0):
      return k, k / n, float(np.sum(np.asarray(alpha, np.float64)[order[:k]]))
  return -1, -1.0, -1.0


def check_flip_points(model, params, hidden, alpha, mask, order):
  out = erase_until_flip(model, params, hidden, alpha, mask, order)
  assert out.fraction.dtype == jnp.float32
  found = []
  for b in range(alpha.shape[0]):
    words = np.flatnonzero(np.asarray(mask[b]))
    items, fraction, mass = naive_flip_point(params, hidden[b], alpha[b], words,
                                             list(np.asarray(order[b])))
    assert int(out.items[b]) == items
    assert float(out.fraction[b]) == pytest.approx(fraction, rel=1e-6)
    assert float(out.mass[b]) == pytest.approx(mass, abs=1e-6)
    found.append(items)
  return found


def test_erase_until_flip_by_attention_matches_a_loop():
  model, params, hidden, alpha, mask = constructed()
  found = check_flip_points(model, params, hidden, alpha, mask, ranking(alpha, mask))
  assert found == [1, 2, 3, -1, 1, 3, -1]  # the designed cases, every branch


def test_erase_until_flip_by_random_orders_matches_a_loop():
  for source in (constructed, from_model):
    model, params, hidden, alpha, mask = source()
    keys = jax.random.split(jax.random.PRNGKey(4), alpha.shape[0])
    orders = random_rankings(keys, mask, 3)
    for j in range(3):
      check_flip_points(model, params, hidden, alpha, mask, orders[:, j])


def test_removal_comparison_on_a_hand_example():
  items_a = np.array([1, -1, 3, 2, -1, 2])
  items_b = np.array([2, 2, 3, -1, -1, 1])
  num_items = np.array([4, 5, 6, 3, 4, 1])  # the last has one word: excluded
  assert removal_comparison(items_a, items_b, num_items) == {
      'n': 4, 'b_fewer': 1, 'a_fewer': 2, 'ties': 1}
  assert removal_comparison(items_b, items_a, num_items) == {
      'n': 4, 'b_fewer': 2, 'a_fewer': 1, 'ties': 1}


@pytest.mark.parametrize('source', [constructed, from_model])
def test_single_weight_erasure_of_another_rankings_top_matches_a_loop(source):
  """S&S App. A.3 (Figures 12–13): i* is another ranking's top item, here
  the least-attended item (never attention's own top unless all tie)."""
  model, params, hidden, alpha, mask = source()
  keys = jax.random.split(jax.random.PRNGKey(2), alpha.shape[0])
  top = top_item(-alpha, mask)
  out = single_weight_erasure(model, params, hidden, alpha, mask, keys, 'paper', top)
  alpha64 = np.asarray(alpha, np.float64)
  for b in range(alpha.shape[0]):
    words = np.flatnonzero(np.asarray(mask[b]))
    lowest = words[np.argmin(alpha64[b, words])]
    assert int(out.top[b]) == lowest
    other = int(out.other[b])
    if len(words) > 1:
      assert other in words and other != lowest
    check_erasures(out, b, params, hidden, alpha64, lowest, other)
