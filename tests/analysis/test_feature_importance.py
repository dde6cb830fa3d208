"""Gradient importance, leave-one-out and Kendall τ (J&W Table 2) against
naive float64 references computed one unpadded document at a time."""

import functools
import itertools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from attn_jax.analysis import gradient_importance, kendall_tau, leave_one_out, summarize
from attn_jax.analysis import kendall, loo as loo_lib, loo_windows
from attn_jax.core.registry import ENCODERS
from attn_jax.data.vocabulary import PAD
from analysis_helpers import documents, pad, setup, single, to_f64, x64_lengths

WIDTH = 11
GRADIENT_LENGTHS = (9, 3)  # 7 words and 1 word, padded to WIDTH


@functools.partial(jax.jit, static_argnums=0)
def _naive_gradients(model, params, tokens, lengths, words):
  """∂z/∂e of one unpadded document with α held constant and with α
  differentiated: [2, n, D]; the embeddings [n, D]; and the logit z."""
  embedded = model.embed(params, tokens)

  def logit(e, detach):
    hidden = model.encode(params, e, lengths)
    alpha = model.project(model.score(params, hidden), words)
    if detach:
      alpha = jax.lax.stop_gradient(alpha)
    return model.decode(params, hidden, alpha)[0]

  grads = [jax.grad(logit)(embedded, detach)[0] for detach in (True, False)]
  return jnp.stack(grads), embedded[0], logit(embedded, True)


@functools.cache
def naive_gradients(doc_ids):
  """Float64 reference for one document (a tuple of ids), default model:
  {(target, detach): ∂target/∂e}, with ∂σ(z)/∂e = σ(z)(1 − σ(z)) ∂z/∂e."""
  model, params = setup()
  n = len(doc_ids)
  with jax.enable_x64(True):
    words = jnp.asarray((np.arange(n) >= 1) & (np.arange(n) <= n - 2))[None]
    g, e, z = _naive_gradients(model, to_f64(params), jnp.asarray([doc_ids], dtype=jnp.int32),
                               x64_lengths([n]), words)
  g, y = np.asarray(g), 1.0 / (1.0 + math.exp(-float(z)))
  grads = {('logit', True): g[0], ('logit', False): g[1],
           ('prob', True): y * (1 - y) * g[0], ('prob', False): y * (1 - y) * g[1]}
  return grads, np.asarray(e)


def naive_gradient_scores(doc, target, detach, reduction):
  """|g_t·e_t| or ‖g_t‖ per position, 0 at SOS/EOS."""
  grads, e = naive_gradients(tuple(int(t) for t in doc))
  g = grads[target, detach]
  scores = [abs(g[t] @ e[t]) if reduction == 'dot' else math.sqrt(g[t] @ g[t])
            for t in range(len(doc))]
  scores[0] = scores[-1] = 0.0
  return np.array(scores)


@pytest.mark.parametrize('target,detach,reduction',
                         list(itertools.product(['prob', 'logit'], [True, False], ['dot', 'l2'])))
def test_gradient_importance_matches_a_float64_reference_per_document(target, detach, reduction):
  model, params = setup()
  docs = documents(GRADIENT_LENGTHS)
  tokens, lengths = pad(docs, WIDTH)
  got = np.asarray(gradient_importance(model, params, tokens, lengths, target=target,
                                       detach_attention=detach, reduction=reduction))
  for row, doc in enumerate(docs):
    expected = naive_gradient_scores(doc, target, detach, reduction)
    np.testing.assert_allclose(got[row, :len(doc)], expected, rtol=1e-4,
                               atol=1e-4 * expected.max())
    assert np.all(got[row, len(doc):] == 0.0)


def test_detaching_attention_changes_the_scores():
  model, params = setup(attention='tanh')
  tokens, lengths = pad(documents(GRADIENT_LENGTHS, seed=2), WIDTH)
  detached = gradient_importance(model, params, tokens, lengths, detach_attention=True)
  through = gradient_importance(model, params, tokens, lengths, detach_attention=False)
  assert float(jnp.max(jnp.abs(detached - through) / jnp.max(detached))) > 1e-2


def test_probability_scores_are_the_logit_scores_times_the_sigmoid_slope():
  model, params = setup()
  tokens, lengths = pad(documents(GRADIENT_LENGTHS, seed=3), WIDTH)
  prob = np.asarray(gradient_importance(model, params, tokens, lengths, target='prob'))
  logit = np.asarray(gradient_importance(model, params, tokens, lengths, target='logit'))
  y = np.asarray(jax.nn.sigmoid(model.forward(params, tokens, lengths).logits), np.float64)
  np.testing.assert_allclose(prob, (y * (1 - y))[:, None] * logit, rtol=1e-4, atol=1e-9)
  for row, n in enumerate(np.asarray(lengths)):
    np.testing.assert_array_equal(np.argsort(prob[row, 1:n - 1]), np.argsort(logit[row, 1:n - 1]))


LOO_ENCODER = 'cnn'  # context (widths up to 7) makes deleting a word differ from replacing it


def naive_loo(model, params, doc, mode):
  """ŷ and ŷ₋ₜ for each word t of one document, in float64."""
  with jax.enable_x64(True):
    p = to_f64(params)
    prob = lambda d: float(jax.nn.sigmoid(single(model, p, d).logits[0]))
    full = prob(doc)
    without = []
    for t in range(1, len(doc) - 1):
      if mode == 'delete':
        without.append(prob(np.delete(doc, t)))
      else:
        replaced = doc.copy()
        replaced[t] = PAD
        without.append(prob(replaced))
  return full, np.array(without)


# Each of these encoders has its own deletion path (`Model.encode_deletions`);
# reencode=True takes the generic one (the Transformer's) that re-encodes the
# shortened rows. Under softmax the CNN and Average encoders attend from
# prefix and suffix sums (`loo_windows`) unless windows=False, and under
# sparsemax they cannot.
LOO_CASES = [(LOO_ENCODER, False, True, 'softmax'), (LOO_ENCODER, False, False, 'softmax'),
             (LOO_ENCODER, True, True, 'softmax'), (LOO_ENCODER, False, True, 'sparsemax'),
             ('bilstm', False, True, 'softmax'), ('average', False, True, 'softmax'),
             ('average', False, False, 'softmax')]


# Deletion (J&W's) on every path; replacement on the BiLSTM's and the CNN's
# windows in the quick suite, on the others with the whole suite (heavy; CI margin).
@pytest.mark.parametrize('mode,encoder,reencode,windows,projection', [
    (mode, *case) if mode == 'delete' or case in (LOO_CASES[0], LOO_CASES[4])
    else pytest.param(mode, *case, marks=pytest.mark.heavy)
    for mode in ('delete', 'replace') for case in LOO_CASES])
def test_leave_one_out_matches_running_each_shortened_or_replaced_document(
    mode, encoder, reencode, windows, projection):
  model, params = setup(encoder, projection=projection)
  assert loo_windows.applies(model) == (encoder != 'bilstm' and projection == 'softmax')
  docs = documents(seed=4)
  tokens, lengths = pad(docs, WIDTH)
  out = leave_one_out(model, params, tokens, lengths, mode=mode, reencode=reencode,
                      windows=windows)
  for row, doc in enumerate(docs):
    n = len(doc)
    full, without = naive_loo(model, params, doc, mode)
    np.testing.assert_allclose(out.probs[row], full, atol=2e-6)
    np.testing.assert_allclose(out.probs_without[row, 1:n - 1], without, atol=2e-6)
    np.testing.assert_allclose(out.importance[row, 1:n - 1], np.abs(without - full), atol=2e-6)
    off_words = np.r_[0, np.arange(n - 1, WIDTH)]
    assert np.all(np.asarray(out.importance)[row, off_words] == 0.0)
    assert np.all(np.asarray(out.probs_without)[row, off_words] == 0.0)
  assert float(out.importance.max()) > 1e-4  # the comparison is not all zeros


@pytest.mark.parametrize('encoder', ['cnn', 'average'])
@pytest.mark.parametrize('mode', ['delete', 'replace'])
def test_prefix_and_suffix_sums_survive_scores_far_apart(encoder, mode):
  """Scores hundreds apart (one word takes all the attention; e^s would
  overflow float32 unshifted): the windowed sums still give what attending
  over every variant's states gives, with no NaN or inf."""
  model, params = setup(encoder, seed=5)
  params = jax.tree_util.tree_map_with_path(
      lambda path, x: x * 300.0 if 'v' in jax.tree_util.keystr(path) else x, params)
  tokens, lengths = pad(documents(lengths=(9, 11, 3), seed=7), WIDTH)
  fast = leave_one_out(model, params, tokens, lengths, mode=mode)
  slow = leave_one_out(model, params, tokens, lengths, mode=mode, windows=False)
  scores = model.score(params, model.forward(params, tokens, lengths).hidden)
  assert float(jnp.ptp(scores[0, 1:8])) > 100.0  # the case this is about
  assert bool(jnp.all(jnp.isfinite(fast.probs_without)))
  # float32 rounding of two summation orders (measured up to 2.0e-6; the failure this is
  # about, an overflow or a lost term, is NaN or orders larger)
  np.testing.assert_allclose(fast.probs_without, slow.probs_without, atol=1e-5)
  assert float(fast.importance.max()) > 1e-3


# Every encoder family with a fast path (`attn_jax/models/encoders`), each of its paths.
FAST_PATHS = [(e.name, mode) for mode, hook in (('delete', 'deletion_states'), ('replace', 'replacement_states'))
              for e in ENCODERS.values() if getattr(e, hook) is not None]


@pytest.mark.parametrize('encoder,mode', FAST_PATHS)
@pytest.mark.parametrize('length', [3, 4, 7, 8, WIDTH])  # 1 word, odd/even, full width
def test_variant_states_equal_encoding_the_shortened_or_replaced_rows(length, encoder, mode):
  model, params = setup(encoder, seed=3)
  assert model.encodes_deletions if mode == 'delete' else model.encodes_replacements
  doc = documents(lengths=(length,), seed=6)[0]
  tokens, lengths = pad([doc], WIDTH)
  rows, row_lengths = loo_lib.variants(tokens[0], lengths[0], mode)
  expected = model.encode(params, model.embed(params, rows), row_lengths)
  encode = model.encode_deletions if mode == 'delete' else model.encode_replacements
  got = encode(params, model.embed(params, tokens)[0], lengths[0])
  assert got.shape == expected.shape and got.shape[:2] == (WIDTH - 2, WIDTH)
  np.testing.assert_allclose(got[:length - 2], expected[:length - 2], atol=2e-6)
  if encoder != 'cnn' or length > 3:  # the CNN zeros all but words: none are left
    assert float(jnp.abs(got[:length - 2]).max()) > 1e-3


@pytest.mark.parametrize('encoder,mode', [(LOO_ENCODER, 'replace'), ('bilstm', 'delete')])
def test_leave_one_out_does_not_depend_on_the_chunking(encoder, mode):
  model, params = setup(encoder)
  tokens, lengths = pad(documents(lengths=(6, 9, 4), seed=5), WIDTH)
  one = leave_one_out(model, params, tokens, lengths, mode=mode, docs_per_chunk=1, windows=False)
  two = leave_one_out(model, params, tokens, lengths, mode=mode, docs_per_chunk=2, windows=False)
  for a, b in zip(one, two):
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_a_long_document_re_encodes_its_variant_rows_a_chunk_at_a_time():
  """`rows_per_chunk` (the stage's way through documents too long for their
  variants' states to fit at once) gives the fast path's numbers (when the
  stage chooses it: tests/stages/test_loo_chunks.py)."""
  model, params = setup('bilstm')
  tokens, lengths = pad(documents(lengths=(6, 9, 4), seed=5), WIDTH)
  fast = leave_one_out(model, params, tokens, lengths, docs_per_chunk=2)
  rows = leave_one_out(model, params, tokens, lengths, docs_per_chunk=1, reencode=True, rows_per_chunk=3)
  for a, b in zip(fast, rows):
    np.testing.assert_allclose(a, b, atol=1e-6)



def naive_tau_b(x, y):
  """Kendall τ-b by counting pairs."""
  n = len(x)
  concordant = discordant = ties_x = ties_y = 0
  for i in range(n):
    for j in range(i + 1, n):
      dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
      ties_x += dx == 0
      ties_y += dy == 0
      concordant += dx * dy > 0
      discordant += dx * dy < 0
  n0 = n * (n - 1) / 2
  return (concordant - discordant) / math.sqrt((n0 - ties_x) * (n0 - ties_y))


def test_kendall_tau_is_tau_b_over_the_words_only():
  rng = np.random.default_rng(6)
  lengths = np.array([12, 6, 9, 15])
  a = rng.integers(0, 4, size=(4, 15)).astype(np.float64)  # many ties
  b = rng.integers(0, 5, size=(4, 15)).astype(np.float32)
  b[:, 0] = b[:, -1] = 100.0  # SOS/EOS and padding must not count
  tau, p_value = kendall_tau(a, b, lengths)
  assert tau.dtype == np.float64
  for i, n in enumerate(lengths):
    np.testing.assert_allclose(tau[i], naive_tau_b(a[i, 1:n - 1], b[i, 1:n - 1]), rtol=1e-12)
    expected_p = scipy.stats.kendalltau(a[i, 1:n - 1], b[i, 1:n - 1]).pvalue
    np.testing.assert_allclose(p_value[i], expected_p, rtol=1e-12)


@pytest.mark.parametrize('ties', [False, True])
def test_kendall_tau_equals_scipy_per_document_on_every_path(ties):
  # Lengths cover the exact p-value (n <= 33, no ties), the normal
  # approximation (n > 33 or ties) and scipy itself (n > PAIRWISE_MAX_WORDS).
  rng = np.random.default_rng(7)
  lengths = np.concatenate([np.arange(1, 40), rng.integers(40, 180, size=60)])
  a = rng.normal(size=(len(lengths), 180)).astype(np.float32)
  b = rng.normal(size=(len(lengths), 180))
  if ties:
    a, b = np.round(a * 2), np.round(b * 3)
    a[5], b[6] = 0.0, 1.0  # constant: NaN
  b[20, 5] = np.nan  # propagates, as scipy's default
  a[25, 3] = np.inf  # an ordinary largest value
  tau, p_value = kendall_tau(a, b, lengths)
  expected = np.full((2, len(lengths)), np.nan)
  with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    for i, n in enumerate(lengths):
      result = scipy.stats.kendalltau(a[i, 1:n - 1], b[i, 1:n - 1])
      expected[:, i] = result.statistic, result.pvalue
  assert kendall.PAIRWISE_MAX_WORDS < lengths.max() - 2
  np.testing.assert_array_equal(tau, expected[0])  # the same float operations as scipy's
  np.testing.assert_allclose(p_value, expected[1], rtol=1e-14, atol=0)
  assert np.isnan(tau[20]) and np.isfinite(tau[25]) and np.isnan(tau[:2]).all()


def test_kendall_tau_of_identical_and_of_constant_vectors():
  x = np.array([[0.0, 0.3, 0.1, 0.7, 0.2, 9.0]])
  tau, _ = kendall_tau(x, x, np.array([6]))
  assert tau[0] == pytest.approx(1.0)
  tau, p_value = kendall_tau(x, np.array([[5.0, 1, 1, 1, 1, 0]]), np.array([6]))
  assert np.isnan(tau[0]) and np.isnan(p_value[0])


def test_summary_by_predicted_class_against_a_hand_computation():
  values = np.array([0.5, np.nan, 0.1, 0.3])
  predicted = np.array([0, 1, 1, 0])
  p_value = np.array([0.01, 0.5, 0.06, 0.05])
  s = summarize(values, predicted, p_value)
  assert np.isnan(s['overall']['mean']) and np.isnan(s['overall']['std'])
  assert s['overall']['nanmean'] == pytest.approx(0.3)
  assert s['overall']['nanstd'] == pytest.approx(math.sqrt(0.08 / 3))
  assert (s['overall']['n'], s['overall']['n_nan'], s['overall']['pval_sig']) == (4, 1, 0.5)
  assert s['neg']['mean'] == pytest.approx(0.4) and s['neg']['std'] == pytest.approx(0.1)
  assert (s['neg']['n'], s['neg']['n_nan'], s['neg']['pval_sig']) == (2, 0, 1.0)
  assert np.isnan(s['pos']['mean']) and s['pos']['nanmean'] == pytest.approx(0.1)
  assert s['pos']['nanstd'] == 0.0
  assert (s['pos']['n'], s['pos']['n_nan'], s['pos']['pval_sig']) == (2, 1, 0.0)
  assert 'pval_sig' not in summarize(values, predicted)['overall']
