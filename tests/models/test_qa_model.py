"""J&W's QA/NLI model (attn_jax.models.qa): the query is read from the row
after the passage, is the same in every leave-one-out variant, and the
attention and decoder are J&W's equations (a float64 reference)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.analysis import loo
from attn_jax.data import split_batches
from attn_jax.data.dataset import EncodedSplit
from attn_jax.models import build_model, qa
from conftest import tiny_model_config

CLASSES = 5


def qa_config(encoder, attention):
  cfg = tiny_model_config(encoder, attention)
  cfg.query, cfg.classes = True, CLASSES
  return cfg


def random_rows(seed, batch=3, vocab=30):
  rng = np.random.default_rng(seed)
  passages = [np.concatenate([[2], rng.integers(4, vocab, rng.integers(3, 9)), [3]]) for _ in range(batch)]
  queries = [np.concatenate([[2], rng.integers(4, vocab, rng.integers(1, 5)), [3]]) for _ in range(batch)]
  return passages, queries


# Each family's query summary and both attentions.
@pytest.fixture(scope='module', params=[('bilstm', 'tanh'), ('bilstm', 'dot'), ('cnn', 'tanh'), ('average', 'dot')],
                ids=lambda p: '-'.join(p))
def built(request):
  model = build_model(qa_config(*request.param), vocab_size=30)
  return request.param, model, model.init(jax.random.PRNGKey(0))


def test_rows_put_the_query_after_the_passage():
  rows, lengths = qa.query_rows([np.array([2, 5, 6, 3])], [np.array([2, 7, 3])])
  assert lengths.tolist() == [4] and rows.tolist() == [[2, 5, 6, 3, 2, 7, 3, 0]]


def test_logits_do_not_depend_on_padding_or_on_what_follows_the_query(built):
  _, model, params = built
  passages, queries = random_rows(1)
  rows, lengths = qa.query_rows(passages, queries)
  logits = model.forward(params, jnp.asarray(rows), jnp.asarray(lengths)).logits
  assert logits.shape == (3, CLASSES)
  wider = np.pad(rows, ((0, 0), (0, 8)))
  np.testing.assert_allclose(model.forward(params, jnp.asarray(wider), jnp.asarray(lengths)).logits,
                             logits, atol=1e-5)
  states = model.encode(params, model.embed(params, jnp.asarray(rows)), jnp.asarray(lengths))
  other_query = [np.concatenate([[2], (q[1:-1] + 1) % 30 + 4 * ((q[1:-1] + 1) % 30 < 4), [3]]) for q in queries]
  rows2, _ = qa.query_rows(passages, other_query)
  states2 = model.encode(params, model.embed(params, jnp.asarray(rows2)), jnp.asarray(lengths))
  np.testing.assert_allclose(states2['passage'], states['passage'], atol=1e-6)  # the passage alone
  assert not np.allclose(states2['query'], states['query'])


def test_reading_only_the_query_positions_gives_the_whole_rows_states(built):
  """`query_width` (the dataset's longest query) instead of the whole row:
  the same states and logits, bit for bit where the question encoder's
  summary reads positions (BiLSTM, CNN), within float32 rounding where it
  sums them (the Average encoder's mean: its summation order)."""
  (encoder, attention), model, params = built
  passages, queries = random_rows(3, batch=4)
  rows, lengths = qa.query_rows(passages, queries)
  rows, lengths = jnp.asarray(np.pad(rows, ((0, 0), (0, 16)))), jnp.asarray(lengths)
  cfg = qa_config(encoder, attention)
  cfg.query_width = 8
  narrow = build_model(cfg, vocab_size=30)
  whole, read = model.forward(params, rows, lengths), narrow.forward(params, rows, lengths)
  same = np.testing.assert_array_equal if encoder != 'average' else functools.partial(
      np.testing.assert_allclose, rtol=1e-6, atol=1e-7)
  same(read.logits, whole.logits)
  same(read.hidden['query'], whole.hidden['query'])


def test_every_leave_one_out_variant_keeps_the_query(built):
  _, model, params = built
  passages, queries = random_rows(2, batch=1)
  rows, lengths = qa.query_rows(passages, queries)
  for mode in ('delete', 'replace'):
    variant_rows, variant_lengths = loo.variants(jnp.asarray(rows[0]), jnp.asarray(lengths[0]), mode)
    words = int(lengths[0]) - 2
    states = model.encode(params, model.embed(params, variant_rows[:words]), variant_lengths[:words])
    original = model.encode(params, model.embed(params, jnp.asarray(rows)), jnp.asarray(lengths))
    np.testing.assert_allclose(states['query'], np.repeat(original['query'], words, 0), atol=1e-6)


def test_the_query_summary_is_the_question_encoder_read_alone(built):
  (encoder, _), model, params = built
  passages, queries = random_rows(3)
  rows, lengths = qa.query_rows(passages, queries)
  got = model.encode(params, model.embed(params, jnp.asarray(rows)), jnp.asarray(lengths))['query']
  table = np.asarray(params['embedding']['query'])
  q_rows, q_lengths = qa.query_rows(queries, [np.array([], np.int32)] * 3)
  states = np.asarray(model.module.encoder.question.apply(
      {'params': params['encoder']['question']}, jnp.asarray(table[q_rows] * (q_rows > 0)[..., None]),
      jnp.asarray(q_lengths)), np.float64)
  for b, n in enumerate(q_lengths):
    if encoder == 'bilstm':
      half = states.shape[-1] // 2
      want = np.concatenate([states[b, n - 1, :half], states[b, 0, half:]])
    elif encoder == 'cnn':
      want = states[b].max(0)
    else:
      want = states[b, :n].mean(0)
    np.testing.assert_allclose(got[b], want, atol=1e-5)


def test_attention_and_decoder_are_jws_equations(built):
  (_, attention), model, params = built
  passages, queries = random_rows(4)
  rows, lengths = qa.query_rows(passages, queries)
  out = model.forward(params, jnp.asarray(rows), jnp.asarray(lengths))
  h = np.asarray(out.hidden['passage'], np.float64)
  q = np.asarray(out.hidden['query'], np.float64)
  f64 = lambda tree: jax.tree.map(lambda x: np.asarray(x, np.float64), tree)
  att, dec = f64(params.get('attention', {})), f64(params['decoder'])  # dot_qa has no parameters
  dense = lambda p, x: x @ p['kernel'] + p['bias']
  for b, n in enumerate(lengths):
    words = h[b, 1:n - 1]
    if attention == 'tanh':
      scores = np.tanh(dense(att['passage'], words) + dense(att['query'], q[b])) @ att['v']['kernel'][:, 0]
    else:
      scores = words @ q[b] / np.sqrt(h.shape[-1])
    alpha = np.exp(scores - scores.max())
    alpha /= alpha.sum()
    np.testing.assert_allclose(out.alpha[b, 1:n - 1], alpha, atol=1e-5)
    assert float(jnp.abs(out.alpha[b]).sum() - jnp.abs(out.alpha[b, 1:n - 1]).sum()) == 0.0
    context = alpha @ words
    logits = dense(dec['output'], np.tanh(dense(dec['passage'], context) + dense(dec['query'], q[b])))
    np.testing.assert_allclose(out.logits[b], logits, atol=1e-4)


def test_the_model_declares_only_what_it_has(built):
  _, model, _ = built
  # Its states are a passage's and a query's, and its decoder reads the query:
  # no pooled decode, no state arrays, no windows; its passage family's
  # variant paths (the query is the same in every variant).
  assert model.question_answering and model.capabilities == {
      'imposes_attention', 'scores', 'deletion_states', 'replacement_states'}
  assert model.num_classes == CLASSES


def test_a_paired_split_batches_as_passage_then_query():
  passages, queries = random_rows(5, batch=5)
  split = EncodedSplit(passages, np.arange(5, dtype=np.int32), [str(i) for i in range(5)], queries=queries)
  buckets = split_batches.bucketing([split], 1.25, None, False)
  batches = list(split_batches.eval_batches(split, 4, buckets))
  seen = 0
  for batch in batches:
    for row, i in enumerate(batch.index):
      if i < 0:  # a filler row: a one-word passage and a one-word query
        assert batch.tokens[row, :6].tolist() == [2, 1, 3, 2, 1, 3] and batch.lengths[row] == 3
        continue
      seen += 1
      n, m = len(passages[i]), len(queries[i])
      assert batch.lengths[row] == n and batch.tokens[row, :n + m].tolist() == list(passages[i]) + list(queries[i])
      assert not batch.tokens[row, n + m:].any()
  assert seen == 5
  train = split_batches.train_batches(split, 4, buckets, 1.0, seed=0, epoch=0)
  assert sorted(i for b in train for i in b.index if i >= 0) == list(range(5))
