"""Meister et al.'s importance measures and normalised entropy (§3.1
and App. A) against float64 references computed one unpadded document, one
position and one word at a time with plain loops."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from attn_jax.analysis import importance_measures as imp
from analysis_helpers import documents, pad, setup, to_f64, x64_lengths

WIDTH = 11
LENGTHS = (9, 3, 6)  # 7, 1 and 4 words, padded to WIDTH
MODELS = [('bilstm', 'tanh', 'softmax'), ('bilstm', 'tanh', 'sparsemax'),
          ('transformer', 'dot', 'softmax')]


def _normalised(values):
  total = sum(values)
  return [v / total if total > 0 else 0.0 for v in values]


def _entropy(p):
  n = len(p)
  if n < 2 or sum(p) == 0:
    return math.nan
  return -sum(x * math.log(x) for x in p if x > 0) / math.log(n)


def _padded_row(doc, word_values):
  row = np.zeros(WIDTH)
  row[1:len(doc) - 1] = word_values
  return row


def _single(doc):
  return jnp.asarray(np.asarray(doc, np.int32)[None]), x64_lengths([len(doc)])


@functools.partial(jax.jit, static_argnums=0)
def _state_norm_gradient(model, params, tokens, lengths, p):
  """∂‖h_p‖/∂e [n, D] of one unpadded document, one position p."""
  norm = lambda x: jnp.linalg.norm(model.encode(params, x, lengths)[0, p])
  return jax.grad(norm)(model.embed(params, tokens))[0]


def naive(model, params, doc):
  """{measure: [WIDTH] row} and g_{h_p}(x) as {p: [WIDTH] row} for one document in float64."""
  n = len(doc)
  words = list(range(1, n - 1))
  # flax's LayerNorm mixes in a float32 constant: standard promotion keeps float64.
  with jax.enable_x64(True), jax.numpy_dtype_promotion('standard'):
    p64 = to_f64(params)
    tokens, lengths = _single(doc)
    mask = jnp.asarray((np.arange(n) >= 1) & (np.arange(n) <= n - 2))[None]
    e = model.embed(p64, tokens)

    def prob_from_hidden(h, detach=False):
      alpha = model.project(model.score(p64, h), mask)
      alpha = jax.lax.stop_gradient(alpha) if detach else alpha
      return jax.nn.sigmoid(model.decode(p64, h, alpha))[0]

    h = model.encode(p64, e, lengths)
    y = float(prob_from_hidden(h))
    g_e = np.asarray(jax.grad(lambda x: prob_from_hidden(model.encode(p64, x, lengths)))(e))[0]
    g_h = np.asarray(jax.grad(prob_from_hidden)(h))[0]
    g_h_det = np.asarray(jax.grad(lambda x: prob_from_hidden(x, True))(h))[0]
    scores = model.score(p64, h)
    d_i = []
    for i in words:
      keep = mask & jnp.asarray(np.arange(n) != i)[None]
      alpha = model.project(scores, keep)
      d_i.append(abs(float(jax.nn.sigmoid(model.decode(p64, h, alpha))[0]) - y))
    states = {}
    for p in words:
      grad = np.asarray(_state_norm_gradient(model, p64, tokens, lengths, p))
      states[p] = _padded_row(doc, _normalised([float(np.linalg.norm(grad[i])) for i in words]))
  norm = lambda g: _normalised([float(np.linalg.norm(g[i])) for i in words])
  return {'g_y_x': _padded_row(doc, norm(g_e)), 'g_y_i': _padded_row(doc, norm(g_h)),
          'g_y_i_detached': _padded_row(doc, norm(g_h_det)),
          'd_y_i': _padded_row(doc, _normalised(d_i))}, states


def _informative_layer_norms(params):
  """Random LayerNorm scales and biases: at their initial 1 and 0 the norm of
  a post-LN state is √H whatever the input, so ∂‖h_p‖/∂e is float noise."""
  rng = np.random.default_rng(0)
  def perturb(path, x):
    named = 'norm' in jax.tree_util.keystr(path)
    return jnp.asarray(rng.normal(0.5, 0.5, x.shape), x.dtype) if named else x
  return jax.tree_util.tree_map_with_path(perturb, params)


# Sparsemax's BiLSTM in the quick suite; softmax's and the Transformer with
# the whole suite (heavy; CI margin).
@pytest.fixture(scope='module', params=[m if m[2] == 'sparsemax' else pytest.param(m, marks=pytest.mark.heavy)
                                        for m in MODELS],
                ids=['-'.join(m) for m in MODELS])
def case(request):
  model, params = setup(*request.param)
  params = _informative_layer_norms(params)
  docs = documents(LENGTHS, seed=3)
  tokens, lengths = pad(docs, WIDTH)
  return model, params, docs, tokens, lengths, [naive(model, params, d) for d in docs]


def test_measures_match_the_float64_reference(case):
  model, params, docs, tokens, lengths, references = case
  got = {'g_y_x': imp.input_gradient(model, params, tokens, lengths),
         'g_y_i': imp.hidden_gradient(model, params, tokens, lengths),
         'g_y_i_detached': imp.hidden_gradient(model, params, tokens, lengths, detach_attention=True),
         'd_y_i': imp.attention_deletion(model, params, tokens, lengths)}
  for b, (reference, _) in enumerate(references):
    for name, values in got.items():
      np.testing.assert_allclose(np.asarray(values[b]), reference[name], atol=2e-5, err_msg=name)


def test_state_gradient_matches_the_reference_row_by_row_and_any_chunk(case):
  model, params, docs, tokens, lengths, references = case
  rows = np.asarray(imp.state_gradient(model, params, tokens, lengths, chunk=4))
  assert rows.shape == (len(docs), WIDTH, WIDTH)
  for b, (doc, (_, states)) in enumerate(zip(docs, references)):
    for p in range(WIDTH):
      expected = states.get(p, np.zeros(WIDTH))  # rows p off the words are 0
      np.testing.assert_allclose(rows[b, p], expected, atol=2e-5, err_msg=f'doc {b} p {p}')
  other = np.asarray(imp.state_gradient(model, params, tokens, lengths, chunk=3))
  np.testing.assert_allclose(other, rows, atol=1e-6)
  entropy = np.asarray(imp.state_gradient_entropy(model, params, tokens, lengths, chunk=5))
  for b, (doc, (_, states)) in enumerate(zip(docs, references)):
    for p in range(WIDTH):
      if p in states:
        expected = _entropy(list(states[p][1:len(doc) - 1]))
        np.testing.assert_allclose(entropy[b, p], expected, atol=2e-5, equal_nan=True)
      else:
        assert np.isnan(entropy[b, p])


def test_normalised_entropy_is_one_for_uniform_zero_for_one_hot_nan_for_one_word():
  lengths = jnp.asarray([6, 6, 3, 6], jnp.int32)
  p = np.zeros((4, 6), np.float32)
  p[0, 1:5] = 0.25
  p[1, 2] = 1.0
  p[2, 1] = 1.0  # a single word: n = 1
  p[3, 1:5] = [0.1, 0.2, 0.3, 0.4]
  h = np.asarray(imp.normalised_entropy(jnp.asarray(p), lengths))
  assert h[0] == pytest.approx(1.0) and h[1] == pytest.approx(0.0) and np.isnan(h[2])
  assert h[3] == pytest.approx(_entropy([0.1, 0.2, 0.3, 0.4]), abs=1e-6)
  n = np.asarray(imp.normalise(jnp.asarray([[9.0, 1.0, 3.0, 0.0, 7.0, 5.0]]), jnp.asarray([6])))
  np.testing.assert_allclose(n, [[0, 1 / 11, 3 / 11, 0, 7 / 11, 0]], atol=1e-7)  # SOS, EOS excluded


def test_encode_layers_ends_with_the_encoder_output():
  for encoder, attention, projection in MODELS:
    model, params = setup(encoder, attention, projection)
    tokens, lengths = pad(documents(LENGTHS), WIDTH)
    embedded = model.embed(params, tokens)
    layers = model.encode_layers(params, embedded, lengths)
    assert layers.shape[0] == (2 if encoder == 'transformer' else 1)
    np.testing.assert_array_equal(np.asarray(layers[-1]), np.asarray(model.encode(params, embedded, lengths)))


def test_sparsemax_with_detached_attention_ranks_states_exactly_as_attention():
  # With α detached, ∂ŷ/∂h_i = σ'(z)·α_i·θ: its norm is proportional to α_i,
  # so τ(α, g_ŷ(I)) = 1 — why the attached variant is the default.
  model, params = setup('bilstm', 'tanh', 'sparsemax')
  tokens, lengths = pad(documents((9, 10), seed=5), WIDTH)
  alpha = np.asarray(model.forward(params, tokens, lengths).alpha)
  g = np.asarray(imp.hidden_gradient(model, params, tokens, lengths, detach_attention=True))
  for b, n in enumerate(np.asarray(lengths)):
    words = slice(1, n - 1)
    np.testing.assert_allclose(g[b, words], alpha[b, words] / alpha[b, words].sum(), atol=1e-6)
    if np.ptp(alpha[b, words]) > 0:
      assert scipy.stats.kendalltau(alpha[b, words], g[b, words]).statistic == pytest.approx(1.0)
