"""ERASER's comprehensiveness, sufficiency and AOPC (attn_jax.analysis.eraser_metrics)
against float64 loops over one unpadded document, one measure and one
fraction at a time: a forward-only model with one logit and with four
classes (a float64 numpy re-implementation), and J&W's QA model with its
query kept (the model re-run in float64). Also: padding, the random
baseline's keys, ties, documents shorter than 1/k words, chunking under
jit, the refusals, and a planted model on which a perfect ranking scores
above a random one."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import analysis
from attn_jax.analysis import eraser_metrics as em
from attn_jax.analysis import needs
from attn_jax.data.vocabulary import EOS, SOS
from attn_jax.models import adapters, masks, projections
from attn_jax.models.interface import InterfaceError
from analysis_helpers import documents, naive, naive_top, pad, setup, to_f64
from test_qa_analyses import documents as qa_documents, one, qa_setup, softmax

D, VOCAB = 5, 30
LENGTHS = (9, 7, 12, 5, 10, 23)  # 7, 5, 10, 3, 8 and 21 words


# ------------------------------------------------------------------ a tiny model and its float64 loop

def tiny_params(classes=2, seed=0):
  k = jax.random.split(jax.random.PRNGKey(seed), 3)
  shape = (D,) if classes == 2 else (D, classes)
  return {'E': jax.random.normal(k[0], (VOCAB, D)), 'q': jax.random.normal(k[1], (D,)),
          'w': jax.random.normal(k[2], shape) * 2.0, 'b': jnp.zeros(shape[1:]) + 0.1}


def tiny_logits(p, tokens, lengths):
  """e = E[w], h = tanh(e), α = softmax(h·q) over the words, z = (Σ α h)·w + b: [B] or [B, C]."""
  h = jnp.tanh(p['E'][tokens])
  alpha = projections.softmax(h @ p['q'], masks.word_mask(lengths, tokens.shape[1]))
  z = jnp.einsum('bl,blh->bh', alpha, h) @ p['w']
  return z + jnp.broadcast_to(p['b'], z.shape)


def tiny_model(classes=2):
  return adapters.from_forward(tiny_logits, num_classes=classes)


def distribution64(p, words):
  """The output distribution of one document's words, float64 (no words: Σ α h = 0)."""
  h = np.tanh(p['E'][np.asarray(words, np.int64)])
  if len(words):
    s = h @ p['q']
    a = np.exp(s - s.max())
    context = (a / a.sum()) @ h
  else:
    context = np.zeros(D)
  z = context @ p['w'] + p['b']
  if np.ndim(z) == 0:
    y = 1.0 / (1.0 + np.exp(-z))
    return np.array([1.0 - y, y])
  return softmax(z)


def measures(tokens, lengths, seed=0):
  """[3, B, L]: noise; coarse scores with many ties; one constant (ties everywhere)."""
  rng = np.random.default_rng(seed)
  noise = rng.normal(size=tokens.shape).astype(np.float32)
  return jnp.asarray(np.stack([noise, np.round(noise), np.zeros_like(noise)]))


def words_of(tokens, lengths):
  return [np.asarray(tokens[b, 1:n - 1]) for b, n in enumerate(np.asarray(lengths))]


def check_against_loop(got, distribution, tokens, lengths, scores, fractions, atol=2e-6, **counting):
  scores = np.asarray(scores, np.float64)
  for b, words in enumerate(words_of(tokens, lengths)):
    np.testing.assert_allclose(got.prob[b], distribution(words).max(), atol=atol)
    assert int(got.predicted[b]) == int(np.argmax(distribution(words)))
    for m in range(scores.shape[0]):
      for k, fraction in enumerate(fractions):
        comp, suff, count = naive(distribution, words, scores[m, b, 1:len(words) + 1], fraction, **counting)
        assert int(got.counts[k, b]) == count, (b, fraction)
        np.testing.assert_allclose(got.comprehensiveness[m, k, b], comp, atol=atol, err_msg=f'{m} {k} {b}')
        np.testing.assert_allclose(got.sufficiency[m, k, b], suff, atol=atol, err_msg=f'{m} {k} {b}')


# ------------------------------------------------------------------ against the float64 loops

@pytest.mark.parametrize('classes', [2, 4])
def test_each_document_measure_and_fraction_against_a_float64_loop(classes):
  model, params = tiny_model(classes), tiny_params(classes)
  tokens, lengths = pad(documents(LENGTHS, seed=4), width=25)
  scores = measures(tokens, lengths)
  p64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
  distribution = lambda words: distribution64(p64, words)
  assert needs.refusal(model, 'erasure_metrics') is None  # a forward-only model takes it
  got = analysis.erasure_metrics(model, params, tokens, lengths, scores)
  assert got.comprehensiveness.shape == got.sufficiency.shape == (3, 5, len(LENGTHS))
  check_against_loop(got, distribution, tokens, lengths, scores, em.FRACTIONS)
  assert float(jnp.abs(got.comprehensiveness).max()) > 1e-2 and float(jnp.abs(got.sufficiency).max()) > 1e-2
  # Other counting: a whole document, ceil and round, at least one word.
  for rounding in ('ceil', 'round'):
    fractions = (0.01, 0.3, 0.5, 1.0)
    got = analysis.erasure_metrics(model, params, tokens, lengths, scores, fractions=fractions,
                                   rounding=rounding, min_words=1)
    check_against_loop(got, distribution, tokens, lengths, scores, fractions, rounding=rounding, min_words=1)


def test_a_qa_models_query_stays_and_its_classes_are_softmaxed():
  """J&W's QA model (6 classes): the removed words leave the passage, the
  query follows it unchanged; each variant against the model re-run in float64."""
  model, params = qa_setup('cnn')
  passages, queries, rows, lengths = qa_documents(seed=2)
  scores = jnp.asarray(np.random.default_rng(1).normal(size=(2,) + rows.shape).astype(np.float32))
  fractions = (0.2, 0.5, 1.0)
  got = analysis.erasure_metrics(model, params, rows, lengths, scores, fractions=fractions, rounding='ceil')
  with jax.enable_x64(True):
    p64 = to_f64(params)
    for b, (passage, query) in enumerate(zip(passages, queries)):
      distribution = lambda words: softmax(one(model, p64, np.array([SOS, *words, EOS], np.int32), query).logits[0])
      words = passage[1:-1]
      for m in range(2):
        for k, fraction in enumerate(fractions):
          comp, suff, count = naive(distribution, words, np.asarray(scores[m, b, 1:len(words) + 1], np.float64),
                                    fraction, rounding='ceil')
          assert int(got.counts[k, b]) == count
          np.testing.assert_allclose(got.comprehensiveness[m, k, b], comp, atol=1e-5)
          np.testing.assert_allclose(got.sufficiency[m, k, b], suff, atol=1e-5)
  assert float(jnp.abs(got.comprehensiveness).max()) > 1e-4


# ------------------------------------------------------------------ padding, keys, ties, short documents

def test_padding_wider_changes_nothing_with_the_random_baseline_drawn_from_the_same_keys():
  model, params = setup('cnn')
  docs = documents(LENGTHS, seed=5)
  keys = jax.random.split(jax.random.PRNGKey(3), len(docs))
  results = []
  for width in (23, 40):
    tokens, lengths = pad(docs, width=width)
    alpha = model.forward(params, tokens, lengths).alpha
    scores = jnp.concatenate([alpha[None], analysis.random_scores(keys, lengths, width, num=2)])
    results.append(analysis.erasure_metrics(model, params, tokens, lengths, scores))
  narrow, wide = results
  np.testing.assert_array_equal(narrow.counts, wide.counts)
  np.testing.assert_array_equal(narrow.predicted, wide.predicted)
  for field in ('comprehensiveness', 'sufficiency', 'prob'):
    np.testing.assert_allclose(getattr(narrow, field), getattr(wide, field), atol=1e-6, err_msg=field)
  assert float(jnp.abs(narrow.comprehensiveness[1:] - narrow.comprehensiveness[:1]).max()) > 1e-4


def test_the_random_baseline_is_a_function_of_its_keys():
  _, lengths = pad(documents(LENGTHS, seed=0))
  keys = jax.random.split(jax.random.PRNGKey(0), len(LENGTHS))
  once, again = analysis.random_scores(keys, lengths, 25, num=3), analysis.random_scores(keys, lengths, 25, num=3)
  np.testing.assert_array_equal(once, again)
  wider = analysis.random_scores(keys, lengths, 40, num=3)
  np.testing.assert_array_equal(wider[..., :25], once)  # a position's draw does not depend on the width
  other = analysis.random_scores(jax.random.split(jax.random.PRNGKey(1), len(LENGTHS)), lengths, 25, num=3)
  words = np.asarray(masks.word_mask(lengths, 25))
  assert not np.any(np.asarray(once)[:, ~words]) and np.all(np.asarray(once)[:, words] >= 0)
  assert np.all(np.asarray(once)[:, words] != np.asarray(other)[:, words])
  assert len({tuple(np.asarray(once)[r, 0]) for r in range(3)}) == 3  # three rankings, not one repeated


def test_ties_go_to_the_earlier_word_and_only_words_are_ranked():
  lengths = jnp.asarray([7, 7], jnp.int32)  # 5 words at positions 1 .. 5, PAD at 7 .. 8
  scores = jnp.asarray([[[9.0, 1.0, 2.0, 2.0, -0.0, 0.0, 9.0, 9.0, 9.0],           # SOS, EOS, PAD scored high
                         [0.0, -0.0, 0.0, np.nan, 0.0, -0.0, 0.0, 0.0, 0.0]]])   # -0.0 ties 0.0; NaN last
  counts = jnp.asarray([[1, 1], [2, 2], [4, 4], [5, 5]], jnp.int32)
  top = np.asarray(em.top_words(scores, lengths, counts))[0]  # [K, B, L]
  chosen = [[list(np.flatnonzero(top[k, b])) for b in range(2)] for k in range(4)]
  assert chosen == [[[2], [1]], [[2, 3], [1, 2]], [[1, 2, 3, 4], [1, 2, 4, 5]], [[1, 2, 3, 4, 5]] * 2]
  # The constant measure of the loop test picks the first words, as its loop does (naive_top).
  assert naive_top([0.0] * 5, 2) == [0, 1]


def test_counts_are_exact_and_a_document_shorter_than_1_over_k_words_removes_none():
  lengths = jnp.asarray([32, 7, 2, 5], jnp.int32)  # 30, 5, 0 and 3 words
  np.testing.assert_array_equal(em.word_counts(lengths, (0.1,), 'ceil'), [[3, 1, 0, 1]])  # 0.1 · 30 is 3
  np.testing.assert_array_equal(em.word_counts(lengths, (0.01, 0.5)), [[0, 0, 0, 0], [15, 2, 0, 1]])
  np.testing.assert_array_equal(em.word_counts(lengths, (0.01,), min_words=1), [[1, 1, 0, 1]])
  np.testing.assert_array_equal(em.word_counts(lengths, (0.5,), 'round'), [[15, 3, 0, 2]])  # halves up
  model, params = tiny_model(), tiny_params()
  tokens, lengths = pad(documents((7, 4), seed=2), width=9)  # 5 and 2 words: 1, 5, 10 and 20 % are none
  scores = measures(tokens, lengths)
  got = analysis.erasure_metrics(model, params, tokens, lengths, scores)
  np.testing.assert_array_equal(got.counts, [[0, 0], [0, 0], [0, 0], [1, 0], [2, 1]])
  assert np.all(np.asarray(got.comprehensiveness)[:, :3] == 0.0)  # nothing removed: exactly 0
  p64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
  empty = distribution64(p64, [])
  for b, words in enumerate(words_of(tokens, lengths)):
    full = distribution64(p64, words)
    y = int(np.argmax(full))
    # Nothing kept: the drop to SOS, EOS alone, for every measure.
    np.testing.assert_allclose(got.sufficiency[:, :3, b], full[y] - empty[y], atol=2e-6)
  check_against_loop(got, lambda w: distribution64(p64, w), tokens, lengths, scores, em.FRACTIONS)


# ------------------------------------------------------------------ jit, chunks, refusals, AOPC

def test_jitted_and_chunked_give_the_same_numbers():
  model, params = tiny_model(), tiny_params()
  tokens, lengths = pad(documents(LENGTHS, seed=4), width=25)
  scores = measures(tokens, lengths)
  eager = analysis.erasure_metrics(model, params, tokens, lengths, scores)
  chunked = em.jitted()(model, params, tokens, lengths, scores, fractions=em.FRACTIONS, docs_per_chunk=4,
                        rows_per_chunk=7)
  for a, b in zip(eager, chunked):
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_refusals():
  model, params = tiny_model(), tiny_params()
  tokens, lengths = pad(documents(LENGTHS, seed=4), width=25)
  scores = measures(tokens, lengths)
  with pytest.raises(ValueError, match=r'\[M, B, L\]'):
    analysis.erasure_metrics(model, params, tokens, lengths, scores[0])
  with pytest.raises(ValueError, match=r'\(0, 1\]'):
    analysis.erasure_metrics(model, params, tokens, lengths, scores, fractions=(0.0, 0.5))
  with pytest.raises(ValueError, match='rounding'):
    analysis.erasure_metrics(model, params, tokens, lengths, scores, rounding='up')
  with pytest.raises(ValueError, match='normaliser'):
    analysis.aopc(scores, normaliser='paper')
  han = adapters.from_functions(lambda p, t: t, lambda p, e, n: e, lambda p, h, m: m, lambda p, h, a: a[:, 0],
                                capabilities=('hierarchical',))
  with pytest.raises(InterfaceError, match='sentences'):
    analysis.erasure_metrics(han, params, tokens, lengths, scores)


def test_aopc_averages_over_the_bins():
  values = jnp.asarray(np.arange(2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3))
  np.testing.assert_allclose(analysis.aopc(values), np.asarray(values).mean(axis=1), rtol=1e-6)
  np.testing.assert_allclose(analysis.aopc(values, 'bins_plus_one'), np.asarray(values).sum(axis=1) / 6,
                             rtol=1e-6)


# ------------------------------------------------------------------ it can tell rankings apart

PLANTED = 7


def bag_of_words(p, tokens, lengths):
  """z = Σ over the words of v[w]: the planted word alone moves the output."""
  return jnp.sum(jnp.where(masks.word_mask(lengths, tokens.shape[1]), p['v'][tokens], 0.0), axis=-1)


def test_a_perfect_ranking_of_a_planted_model_scores_above_random_and_a_reversed_one_below():
  rng = np.random.default_rng(0)
  v = rng.normal(scale=0.05, size=VOCAB).astype(np.float32)
  v[PLANTED] = 4.0
  params = {'v': jnp.asarray(v)}
  docs = []
  for _ in range(16):
    words = rng.integers(8, VOCAB, size=20)
    words[rng.integers(20)] = PLANTED
    docs.append(np.array([SOS, *words, EOS], np.int32))
  tokens, lengths = pad(docs)
  model = adapters.from_forward(bag_of_words)
  perfect = params['v'][tokens]  # each word's own contribution to z (ŷ = 1 on every document)
  keys = jax.random.split(jax.random.PRNGKey(0), len(docs))
  scores = jnp.concatenate([perfect[None], -perfect[None], analysis.random_scores(keys, lengths, tokens.shape[1])])
  got = analysis.erasure_metrics(model, params, tokens, lengths, scores)
  assert np.all(np.asarray(got.predicted) == 1)
  comprehensiveness = np.asarray(analysis.aopc(got.comprehensiveness)).mean(axis=-1)  # [perfect, reversed, random]
  sufficiency = np.asarray(analysis.aopc(got.sufficiency)).mean(axis=-1)
  assert comprehensiveness[0] > comprehensiveness[2] + 0.2, comprehensiveness
  assert comprehensiveness[1] < comprehensiveness[2], comprehensiveness
  assert sufficiency[0] < sufficiency[2] - 0.2, sufficiency
