"""Integrated gradients and gradient × input against naive float64 loops, one
unpadded document at a time; integrated gradients' completeness; and the
measure registry (`MEASURES`): a measure registered is in `needs.NEEDS`,
`every_analysis` and the tables' labels."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import analysis
from attn_jax.analysis import measure, needs, path_attributions
from attn_jax.core.registry import MEASURES
from attn_jax.data.vocabulary import PAD
from analysis_helpers import documents, pad, setup, to_f64, x64_lengths

WIDTH = 11
LENGTHS = (9, 5, 3)  # 7, 3 and 1 words, padded to WIDTH


@functools.partial(jax.jit, static_argnums=(0, 3, 4))
def _naive_grad(model, params, e, n, target):
  """∂f/∂e [n, D] of one unpadded document's embeddings e [n, D], α attached."""
  words = jnp.asarray((np.arange(n) >= 1) & (np.arange(n) <= n - 2))[None]

  def f(x):
    z = model.forward_embedded(params, x[None], x64_lengths([n]), words).logits[0]
    return jax.nn.sigmoid(z) if target == 'prob' else z

  return jax.grad(f)(e), f(e)


def naive(doc, *, steps=None, baseline='zero', target='prob'):
  """Float64 per-document loop: gradient × input (steps None) or integrated
  gradients (midpoint rule, `steps` points), signed, 0 at SOS/EOS; and
  f(x) − f(baseline)."""
  model, params = setup()
  n = len(doc)
  with jax.enable_x64(True):
    p64 = to_f64(params)
    e = np.asarray(model.embed(p64, jnp.asarray(doc[None], jnp.int32))[0], np.float64)
    base = e.copy()
    if baseline == 'zero':
      base[1:n - 1] = 0.0
    else:
      base[1:n - 1] = np.asarray(model.embed(p64, jnp.full((1, 1), PAD, jnp.int32))[0, 0])
    if steps is None:
      g, _ = _naive_grad(model, p64, jnp.asarray(e), n, target)
      g = np.asarray(g)
      scores = [float(g[t] @ e[t]) for t in range(n)]
      difference = None
    else:
      total = np.zeros_like(e)
      for k in range(steps):
        a = (k + 0.5) / steps
        g, _ = _naive_grad(model, p64, jnp.asarray(base + a * (e - base)), n, target)
        total += np.asarray(g)
      scores = [float((e[t] - base[t]) @ total[t]) / steps for t in range(n)]
      difference = float(_naive_grad(model, p64, jnp.asarray(e), n, target)[1]
                         - _naive_grad(model, p64, jnp.asarray(base), n, target)[1])
  scores[0] = scores[-1] = 0.0
  return np.array(scores), difference


def _batch():
  docs = documents(LENGTHS)
  return docs, *pad(docs, WIDTH)


@pytest.mark.parametrize('target', ['prob', 'logit'])
def test_gradient_x_input_matches_a_float64_loop(target):
  model, params = setup()
  docs, tokens, lengths = _batch()
  got = np.asarray(analysis.gradient_x_input(model, params, tokens, lengths, target=target, signed=True))
  for row, doc in enumerate(docs):
    expected, _ = naive(doc, target=target)
    np.testing.assert_allclose(got[row, :len(doc)], expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert np.all(got[row, len(doc):] == 0.0)
  # Its magnitude is J&W's |∂ŷ/∂e·e| with α attached.
  unsigned = analysis.gradient_x_input(model, params, tokens, lengths, target=target)
  jw = analysis.gradient_importance(model, params, tokens, lengths, target=target, detach_attention=False)
  np.testing.assert_allclose(np.asarray(unsigned), np.asarray(jw), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize('baseline,target', [('zero', 'prob'), ('pad', 'logit')])
def test_integrated_gradients_match_a_float64_loop(baseline, target):
  model, params = setup()
  docs, tokens, lengths = _batch()
  got = np.asarray(analysis.integrated_gradients(model, params, tokens, lengths, steps=8, baseline=baseline,
                                                 target=target, signed=True))
  for row, doc in enumerate(docs):
    expected, _ = naive(doc, steps=8, baseline=baseline, target=target)
    np.testing.assert_allclose(got[row, :len(doc)], expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert np.all(got[row, len(doc):] == 0.0)
  unsigned = analysis.integrated_gradients(model, params, tokens, lengths, steps=8, baseline=baseline,
                                           target=target)
  np.testing.assert_allclose(np.asarray(unsigned), np.abs(got), rtol=1e-6)


def test_integrated_gradients_are_complete_as_the_steps_grow():
  """Σ_words IG_t → f(x) − f(baseline) (Sundararajan et al.'s completeness)."""
  model, params = setup()
  docs, tokens, lengths = _batch()
  f = jax.nn.sigmoid(model.forward(params, tokens, lengths).logits)
  _, base = path_attributions.baseline_embeddings(model, params, tokens, lengths)
  mask = model.attention_mask(tokens, lengths)
  f_base = jax.nn.sigmoid(model.forward_embedded(params, base, lengths, mask).logits)
  difference = np.asarray(f - f_base)
  errors = []
  for steps in (1, 4, 32):
    ig = analysis.integrated_gradients(model, params, tokens, lengths, steps=steps, signed=True)
    errors.append(np.abs(np.asarray(ig).sum(axis=1) - difference))
  assert np.all(errors[2] <= errors[0] + 1e-6)
  np.testing.assert_allclose(errors[2], 0.0, atol=2e-4 + 1e-2 * np.abs(difference).max())
  # The float64 loop's own completeness at the same steps: the same residual.
  for row, doc in enumerate(docs):
    scores, naive_difference = naive(doc, steps=32)
    np.testing.assert_allclose(naive_difference, difference[row], rtol=1e-4, atol=1e-6)
    assert abs(scores.sum() - naive_difference) == pytest.approx(errors[2][row], abs=1e-4)


def test_integrated_gradients_refuse_a_bad_setting():
  model, params = setup()
  _, tokens, lengths = _batch()
  with pytest.raises(ValueError, match='steps'):
    analysis.integrated_gradients(model, params, tokens, lengths, steps=0)
  with pytest.raises(ValueError, match='baseline'):
    analysis.integrated_gradients(model, params, tokens, lengths, baseline='mean')


def test_every_measure_is_one_record_that_needs_every_analysis_and_the_tables_read():
  ig = MEASURES['integrated_gradients']
  assert ig.settings == {'steps': 50, 'baseline': 'zero'} and ig.multi_class and ig.paper is None
  assert needs.NEEDS['integrated_gradients'] == ig.need
  assert set(MEASURES.names()) <= set(needs.NEEDS)
  # Meister's g(x) is one measure stored under two names.
  assert measure.stored('importance')['g_y_x'] is measure.stored('gradient')['gradient_l2']
  assert list(measure.stored('importance')) == ['g_y_x', 'd_y_x', 'g_y_i', 'd_y_i']
  assert list(measure.stored('gradient')) == ['gradient', 'gradient_logit', 'gradient_attached', 'gradient_l2']


def test_a_measure_registered_in_one_place_runs_in_every_analysis():
  model, params = setup()
  _, tokens, lengths = _batch()
  length_measure = analysis.Measure(
      name='word_position', label='the word position (a toy measure)', column='position', paper=None,
      section='a test', order=99,
      fn=lambda model, params, tokens, lengths: jnp.where(
          jnp.arange(tokens.shape[1])[None] < lengths[:, None] - 1, jnp.arange(tokens.shape[1])[None], 0).astype(jnp.float32))
  with MEASURES.registered(length_measure):
    assert 'word_position' in needs.NEEDS and measure.columns()['word_position'] == 'position'
    with jax.numpy_dtype_promotion('standard'):  # optax's Adam bias correction (the adversary)
      results, refused = analysis.every_analysis(model, params, tokens, lengths, jax.random.PRNGKey(0),
                                                 adversary_steps=2, permutations=2)
    assert results['word_position'].shape == tokens.shape and set(refused) == {'gradient_importance_all_heads'}
    for name in ('integrated_gradients', 'gradient_x_input'):
      np.testing.assert_allclose(np.asarray(results[name]),
                                 np.asarray(MEASURES[name].scores(model, params, tokens, lengths)), rtol=1e-5)
  assert 'word_position' not in needs.NEEDS
