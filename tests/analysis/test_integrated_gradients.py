"""Integrated gradients and gradient × input (`path_attributions`,
`input_times_gradient`) against naive float64 loops over one unpadded
document at a time, on a two-class and a three-class model; and integrated
gradients' completeness (Sundararajan et al. 2017, Proposition 1): the
attributions sum to f(x) − f(x') within the midpoint rule's error bound,
which shrinks as 1/m² with the steps m."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import analysis
from attn_jax.analysis import path_attributions
from attn_jax.data.vocabulary import PAD
from attn_jax.models import build_model
from analysis_helpers import VOCAB, documents, pad, setup, to_f64, x64_lengths
from conftest import tiny_model_config

WIDTH = 11
LENGTHS = (9, 5, 3)  # 7, 3 and 1 words, padded to WIDTH
CLASSES = (2, 3)  # one logit and a sigmoid; a softmax over three


@functools.lru_cache(maxsize=None)
def model_of(classes: int):
  """A tiny BiLSTM + tanh model of `classes` classes and its params (seeded)."""
  if classes == 2:
    return setup()
  cfg = tiny_model_config()
  cfg.classes = classes
  model = build_model(cfg, VOCAB)
  return model, model.init(jax.random.PRNGKey(1))


def _batch():
  docs = documents(LENGTHS)
  return docs, *pad(docs, WIDTH)


def output(model, params, tokens, lengths, embedded, target='prob', chosen=None):
  """f [B] at embeddings [B, L, D], written out here: σ(z) or z of one logit;
  with more classes the softmax probability or logit of class `chosen` [B]."""
  z = model.forward_embedded(params, embedded, lengths, model.attention_mask(tokens, lengths)).logits
  if z.ndim == 1:
    return jax.nn.sigmoid(z) if target == 'prob' else z
  values = jax.nn.softmax(z, axis=-1) if target == 'prob' else z
  return jnp.take_along_axis(values, chosen[:, None], axis=-1)[:, 0]


@functools.partial(jax.jit, static_argnums=(0, 4))
def _naive_grad(model, params, doc, e, target, chosen):
  """f and ∂f/∂e [n, D] of one unpadded document (its ids `doc` [n], its
  embeddings `e` [n, D]), α attached."""
  lengths = x64_lengths([doc.shape[0]])
  f = lambda x: output(model, params, doc[None], lengths, x[None], target, chosen[None])[0]
  return f(e), jax.grad(f)(e)


def naive(model, params, doc, *, steps=None, baseline='zero', target='prob'):
  """A float64 loop over one document: gradient × input (`steps` None) or
  integrated gradients (the midpoint rule at `steps` points), signed, 0 at
  SOS and EOS; and f(x) − f(x'), x' the baseline."""
  n = len(doc)
  with jax.enable_x64(True):
    p64 = to_f64(params)
    ids = jnp.asarray(doc[None], jnp.int32)
    e = np.asarray(model.embed(p64, ids)[0], np.float64)
    base = e.copy()  # the words replaced, SOS and EOS kept
    base[1:n - 1] = 0.0 if baseline == 'zero' else np.asarray(
        model.embed(p64, jnp.full((1, 1), PAD, jnp.int32))[0, 0])
    z = np.asarray(model.forward(p64, ids, x64_lengths([n])).logits[0])
    chosen = jnp.asarray(int(np.argmax(z)) if z.ndim == 1 else 0)  # the class predicted at the input
    grad = lambda x: _naive_grad(model, p64, jnp.asarray(doc, jnp.int32), jnp.asarray(x), target, chosen)
    f_x, g = grad(e)
    if steps is None:
      scores = [float(np.asarray(g)[t] @ e[t]) for t in range(n)]
    else:
      total = np.zeros_like(e)
      for k in range(steps):
        total += np.asarray(grad(base + (k + 0.5) / steps * (e - base))[1])
      scores = [float((e[t] - base[t]) @ total[t]) / steps for t in range(n)]
    difference = float(f_x - grad(base)[0])
  scores[0] = scores[-1] = 0.0
  return np.array(scores), difference


@pytest.mark.parametrize('classes,target', [(2, 'prob'), (2, 'logit'), (3, 'prob')])
def test_gradient_x_input_equals_a_float64_loop(classes, target):
  model, params = model_of(classes)
  docs, tokens, lengths = _batch()
  got = np.asarray(analysis.gradient_x_input(model, params, tokens, lengths, target=target, signed=True))
  for row, doc in enumerate(docs):
    expected, _ = naive(model, params, doc, target=target)
    np.testing.assert_allclose(got[row, :len(doc)], expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert np.all(got[row, len(doc):] == 0.0)
  # Its magnitude is J&W's |∂ŷ/∂e·e| with α attached (a second name for the same scores).
  unsigned = analysis.gradient_x_input(model, params, tokens, lengths, target=target)
  jw = analysis.gradient_importance(model, params, tokens, lengths, target=target, detach_attention=False)
  np.testing.assert_allclose(np.asarray(unsigned), np.asarray(jw), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize('classes,baseline,target', [(2, 'zero', 'prob'), (2, 'pad', 'logit'), (3, 'zero', 'prob')])
def test_integrated_gradients_equal_a_float64_loop(classes, baseline, target):
  model, params = model_of(classes)
  docs, tokens, lengths = _batch()
  got = np.asarray(analysis.integrated_gradients(model, params, tokens, lengths, steps=8, baseline=baseline,
                                                 target=target, signed=True))
  for row, doc in enumerate(docs):
    expected, _ = naive(model, params, doc, steps=8, baseline=baseline, target=target)
    np.testing.assert_allclose(got[row, :len(doc)], expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert np.all(got[row, len(doc):] == 0.0)
  unsigned = analysis.integrated_gradients(model, params, tokens, lengths, steps=8, baseline=baseline,
                                           target=target)
  np.testing.assert_allclose(np.asarray(unsigned), np.abs(got), rtol=1e-6)


def _third_derivative(model, params, tokens, lengths, embedded, base, chosen, points: int = 401) -> np.ndarray:
  """[B] max over a in [0, 1] of |h⁽³⁾(a)|, h(a) = f(x' + a(x − x')), by central
  differences on `points` points (float64). The sum of the attributions is
  the midpoint rule applied to h', so h⁽³⁾ bounds its error."""
  f = jax.jit(lambda e: output(model, params, tokens, lengths, e, 'prob', chosen))
  h = np.stack([np.asarray(f(base + a * (embedded - base))) for a in np.linspace(0.0, 1.0, points)])
  step = 1.0 / (points - 1)
  return np.abs(h[4:] - 2 * h[3:-1] + 2 * h[1:-3] - h[:-4]).max(axis=0) / (2 * step ** 3)


@pytest.mark.parametrize('classes', CLASSES)
def test_integrated_gradients_are_complete_within_a_bound_that_shrinks_with_the_steps(classes):
  """Σ_words IG_t is the midpoint rule for ∫₀¹ h'(a) da = f(x) − f(x'), so
  |Σ_words IG_t − (f(x) − f(x'))| ≤ max|h⁽³⁾| / (24 m²) (doubled for the
  estimate of h⁽³⁾), in float64; float32 at the default 50 steps within that
  bound and its rounding."""
  model, params = model_of(classes)
  _, tokens, lengths = _batch()
  with jax.enable_x64(True):
    p64, n64 = to_f64(params), x64_lengths(np.asarray(lengths))
    embedded, base = path_attributions.baseline_embeddings(model, p64, tokens, n64)
    z = model.forward(p64, tokens, n64).logits
    chosen = jnp.argmax(z, axis=-1) if z.ndim == 2 else None
    difference = np.asarray(output(model, p64, tokens, n64, embedded, 'prob', chosen)
                            - output(model, p64, tokens, n64, base, 'prob', chosen))
    third = _third_derivative(model, p64, tokens, n64, embedded, base, chosen)
    bound = lambda m: 2 * third / (24 * m ** 2) + 1e-12
    gaps = {}
    for m in (1, 4, 16, 64):
      ig = np.asarray(analysis.integrated_gradients(model, p64, tokens, n64, steps=m, signed=True))
      gaps[m] = np.abs(ig.sum(axis=1) - difference)
      assert np.all(gaps[m] <= bound(m)), (m, gaps[m], bound(m))
  assert np.all(np.abs(difference) > 1e-4)  # the check is not of a flat f
  assert np.all(gaps[64] <= gaps[1] + 1e-12)
  ig = np.asarray(analysis.integrated_gradients(model, params, tokens, lengths, signed=True))  # 50 steps
  rounding = 1e-5 * (1.0 + np.abs(ig).sum(axis=1))
  assert np.all(np.abs(ig.sum(axis=1) - difference) <= bound(50) + rounding)


def test_integrated_gradients_refuse_a_bad_setting():
  model, params = setup()
  _, tokens, lengths = _batch()
  with pytest.raises(ValueError, match='steps'):
    analysis.integrated_gradients(model, params, tokens, lengths, steps=0)
  with pytest.raises(ValueError, match='baseline'):
    analysis.integrated_gradients(model, params, tokens, lengths, baseline='mean')


@pytest.mark.parametrize('classes,target', [(2, 'prob'), (2, 'logit'), (3, 'prob')])
def test_gradient_norm_equals_a_float64_loop(classes, target):
  """‖∂f/∂e_t‖₂ against the float64 loop's gradient; on two classes, normalised
  over the words, it is Meister's g_ŷ(x) (`input_gradient`)."""
  model, params = model_of(classes)
  docs, tokens, lengths = _batch()
  got = np.asarray(analysis.gradient_norm(model, params, tokens, lengths, target=target))
  for row, doc in enumerate(docs):
    n = len(doc)
    with jax.enable_x64(True):
      p64 = to_f64(params)
      ids = jnp.asarray(doc[None], jnp.int32)
      e = np.asarray(model.embed(p64, ids)[0], np.float64)
      z = np.asarray(model.forward(p64, ids, x64_lengths([n])).logits[0])
      chosen = jnp.asarray(int(np.argmax(z)) if z.ndim == 1 else 0)
      _, g = _naive_grad(model, p64, jnp.asarray(doc, jnp.int32), jnp.asarray(e), target, chosen)
    expected = np.linalg.norm(np.asarray(g), axis=-1)
    expected[0] = expected[-1] = 0.0
    np.testing.assert_allclose(got[row, :n], expected, rtol=1e-4, atol=1e-4 * expected.max())
    assert np.all(got[row, n:] == 0.0)
  if classes == 2 and target == 'prob':
    meister = np.asarray(analysis.input_gradient(model, params, tokens, lengths))
    np.testing.assert_allclose(got / got.sum(axis=1, keepdims=True), meister, rtol=1e-5, atol=1e-7)
