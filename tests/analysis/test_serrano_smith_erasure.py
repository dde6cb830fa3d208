"""S&S's erasure tests (§§4–5) on a tiny multi-class HAN, against a float64 loop
implementation of S&S's code: its saved sentence vectors and attention, the
"classifier from attention" re-run after each erasure, argmax decisions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.analysis import attention_erasure as er
from attn_jax.data import hierarchical
from serrano_smith_helpers import flat_and_lengths, model_of, random_documents

CLASSES = 8


def han_outputs(seed=0, n=10):
  model, params = model_of('han', 'rnn')
  # Larger output weights: erasures then move the decision often enough to test.
  params = jax.tree.map(lambda x: x, params)
  params['decoder']['output']['kernel'] = params['decoder']['output']['kernel'] * 40.0
  docs = [d for d in random_documents(seed, n=n)]
  sequences, lengths = flat_and_lengths(docs)
  b = hierarchical.make_batch(sequences, lengths, np.zeros(n), np.arange(n), n, (8,), (8,))
  fwd = model.forward(params, jnp.asarray(b.tokens), jnp.asarray(b.lengths))
  return model, params, fwd


class Reference:
  """S&S's `ClassifierFromAttnAndInputVects` and test loops, one document at a time."""

  def __init__(self, params, hidden, alpha, mask):
    self.w = np.asarray(params['decoder']['output']['kernel'], np.float64)
    self.b = np.asarray(params['decoder']['output']['bias'], np.float64)
    self.hidden, self.alpha = np.asarray(hidden, np.float64), np.asarray(alpha, np.float64)
    self.n = np.asarray(mask).sum(-1)

  def logits(self, d, alpha):
    n = self.n[d]
    return (alpha[:n] @ self.hidden[d, :n]) @ self.w + self.b

  def erased(self, d, items):
    a = self.alpha[d, :self.n[d]].copy()
    a[list(items)] = 0.0
    total = np.abs(a).sum()  # torch.nn.functional.normalize(p=1)
    return a / total if total > 0 else a

  def js(self, d, items):
    p = _softmax(self.logits(d, self.alpha[d]))
    q = _softmax(self.logits(d, self.erased(d, items)))
    m = (p + q) / 2
    return 0.5 * np.sum(p * np.log(p / m)) + 0.5 * np.sum(q * np.log(q / m))

  def flips(self, d, items):
    return np.argmax(self.logits(d, self.erased(d, items))) != np.argmax(self.logits(d, self.alpha[d]))

  def until_flip(self, d, order):
    for k in range(1, self.n[d] + 1):
      if self.flips(d, order[:k]):
        return k
    return -1

  def gradient(self, d, eps=1e-6):
    """∂ max softmax / ∂α by central differences in float64."""
    n, a = self.n[d], self.alpha[d]
    value = lambda x: _softmax(self.logits(d, x)).max()
    grad = np.zeros(n)
    for i in range(n):
      up, down = a.copy(), a.copy()
      up[i] += eps
      down[i] -= eps
      grad[i] = (value(up) - value(down)) / (2 * eps)
    return grad


def _softmax(z):
  e = np.exp(z - z.max())
  return e / e.sum()


def test_single_weight_erasure_equals_the_loop():
  model, params, fwd = han_outputs()
  ref = Reference(params, fwd.hidden, fwd.alpha, fwd.mask)
  keys = jax.random.split(jax.random.PRNGKey(0), fwd.alpha.shape[0])
  out = er.single_weight_erasure(model, params, fwd.hidden, fwd.alpha, fwd.mask, keys)
  for d in range(len(ref.n)):
    n = ref.n[d]
    top = int(np.argmax(ref.alpha[d, :n]))
    assert int(out.top[d]) == top and int(out.num_items[d]) == n
    other = int(out.other[d])
    if n > 1:
      assert other != top and other < n
    np.testing.assert_allclose(out.js_top[d], ref.js(d, [top]), rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(out.js_other[d], ref.js(d, [other]), rtol=2e-3, atol=1e-6)
    assert bool(out.flip_top[d]) == ref.flips(d, [top])
    assert bool(out.flip_other[d]) == ref.flips(d, [other])
  code = er.single_weight_erasure(model, params, fwd.hidden, fwd.alpha, fwd.mask, keys, 'code')
  for d in np.flatnonzero(ref.n > 1):  # S&S's code: item index 1 .. n - 1
    assert 1 <= int(code.other[d]) <= ref.n[d] - 1


@pytest.mark.heavy  # CI margin; the single-weight check and the pipeline's stay quick
def test_multi_weight_erasure_and_rankings_equal_the_loop():
  model, params, fwd = han_outputs(seed=1, n=12)
  ref = Reference(params, fwd.hidden, fwd.alpha, fwd.mask)
  grad = er.decision_gradient(model, params, fwd.hidden, fwd.alpha)
  scores = {'attention': fwd.alpha, 'gradient': grad, 'gradient_x_attention': grad * fwd.alpha,
            'attention_ascending': -fwd.alpha}
  flipped_somewhere = 0
  for d in range(len(ref.n)):
    np.testing.assert_allclose(grad[d, :ref.n[d]], ref.gradient(d), rtol=1e-3, atol=1e-6)
  for name, score in scores.items():
    got = er.erase_until_flip(model, params, fwd.hidden, fwd.alpha, fwd.mask,
                              er.ranking(score, fwd.mask))
    for d in range(len(ref.n)):
      n = ref.n[d]
      s = np.asarray(score[d, :n], np.float64)
      order = np.argsort(-s, kind='stable')  # descending; ties by position
      expected = ref.until_flip(d, order)
      assert int(got.items[d]) == expected, (name, d)
      if expected > 0:
        flipped_somewhere += 1
        np.testing.assert_allclose(got.fraction[d], expected / n, rtol=1e-6)
        np.testing.assert_allclose(got.mass[d], ref.alpha[d, order[:expected]].sum(), rtol=1e-5)
  assert flipped_somewhere >= 5  # the test sees decisions flip, not only "never"


def test_prefix_contexts_equal_renormalised_erasures():
  model, params, fwd = han_outputs(seed=2)
  order = er.ranking(fwd.alpha, fwd.mask)
  contexts = er.prefix_contexts(fwd.hidden, fwd.alpha, order)
  hidden, alpha = np.asarray(fwd.hidden, np.float64), np.asarray(fwd.alpha, np.float64)
  for d in range(alpha.shape[0]):
    for k in range(1, alpha.shape[1] + 1):
      a = alpha[d].copy()
      a[np.asarray(order[d, :k])] = 0
      want = (a / a.sum()) @ hidden[d] if a.sum() > 0 else np.zeros(hidden.shape[-1])
      np.testing.assert_allclose(contexts[k - 1, d], want, rtol=1e-4, atol=1e-6)


@pytest.mark.heavy  # CI margin; the single- and multi-weight erasure checks stay quick
def test_a_hans_erasure_split_in_two_programs_equals_one_program():
  """The stage compiles a HAN's tests per (documents, sentences) and its
  forward pass per (documents, sentences, words): the two programs give
  what one program of both gives, bit for bit."""
  from attn_jax.stages import erasure as stage  # pylint: disable=g-import-not-at-top
  model, params = model_of('han', 'rnn')
  docs = random_documents(3, n=6)
  sequences, lengths = flat_and_lengths(docs)
  b = hierarchical.make_batch(sequences, lengths, np.zeros(6), np.arange(6), 6, (8,), (8,))
  tokens, lens = jnp.asarray(b.tokens), jnp.asarray(b.lengths)
  keys = jax.random.split(jax.random.key(0), 4 * 6).reshape(4, 6)
  forward_fn, tests_fn = stage._forward_fn(model), stage._tests_fn(model, 3, 'paper')
  split = jax.jit(tests_fn)(params, jax.jit(forward_fn)(params, tokens, lens), keys[0], keys[1],
                            (keys[2], keys[3]))
  whole = jax.jit(lambda p, t, l, *k: tests_fn(p, forward_fn(p, t, l), *k))(
      params, tokens, lens, keys[0], keys[1], (keys[2], keys[3]))
  assert split.keys() == whole.keys()
  for name in split:
    np.testing.assert_array_equal(np.asarray(split[name]), np.asarray(whole[name]), err_msg=name)
