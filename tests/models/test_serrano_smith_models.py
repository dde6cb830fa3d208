"""S&S's models (HAN, FLAN × rnn, conv, noenc): forward passes against a
float64 loop reference, and HAN's sentence batching against unbatched runs."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.data import hierarchical
from attn_jax.data.vocabulary import EOS, SOS
from serrano_smith_helpers import flat_and_lengths, model_of, random_documents

ENCODERS = ('rnn', 'conv', 'noenc')


# ---------------------------------------------------------------- float64 loop reference

def _sigmoid(x):
  return 1.0 / (1.0 + np.exp(-x))


def ref_gru(p, xs):
  """PyTorch's biGRU over the rows of xs [n, D], one step at a time."""
  hidden = p['w_hh'].shape[1]
  out = np.zeros((len(xs), 2 * hidden))
  for z, steps in ((0, range(len(xs))), (1, reversed(range(len(xs))))):
    h = np.zeros(hidden)
    for t in steps:
      gx = xs[t] @ p['w_ih'][z] + p['b_ih'][z]
      gh = h @ p['w_hh'][z] + p['b_hh'][z]
      r = _sigmoid(gx[:hidden] + gh[:hidden])
      u = _sigmoid(gx[hidden:2 * hidden] + gh[hidden:2 * hidden])
      n = np.tanh(gx[2 * hidden:] + r * gh[2 * hidden:])
      h = (1 - u) * n + u * h
      out[t, z * hidden:(z + 1) * hidden] = h
  return out


def ref_conv(p, xs):
  """Two 'same' convolutions (widths 3, 5), ReLU, concatenated, position by position."""
  outs = []
  for k in (3, 5):
    w, b, r = p[f'conv{k}']['kernel'], p[f'conv{k}']['bias'], (k - 1) // 2
    padded = np.concatenate([np.zeros((r, xs.shape[1])), xs, np.zeros((r, xs.shape[1]))])
    outs.append(np.stack([sum(padded[t + j] @ w[j] for j in range(k)) + b
                          for t in range(len(xs))]))
  return np.maximum(np.concatenate(outs, axis=1), 0.0)


def ref_encode(encoder, p, xs):
  return {'rnn': ref_gru, 'conv': ref_conv, 'noenc': lambda _, x: x}[encoder](p, xs)


def ref_attend(p, hs):
  """S&S's SimpleHanAttention over the rows of hs: (α, Σ α_i h_i)."""
  scores = np.array([np.tanh(h @ p['projection']['kernel'] + p['projection']['bias'])
                     @ p['context']['kernel'][:, 0] for h in hs])
  e = np.exp(scores - scores.max())
  alpha = e / e.sum()
  return alpha, sum(a * h for a, h in zip(alpha, hs))


def ref_flan(encoder, p, words):
  """FLAN over one document's word ids (J&W's layout: SOS, words, EOS)."""
  table = p['embedding']['table']
  ids = [SOS] + list(words) + [EOS]
  hs = ref_encode(encoder, p.get('encoder'), np.stack([table[i] for i in ids]))
  if encoder != 'rnn':
    hs = hs * np.array([0.0] + [1.0] * len(words) + [0.0])[:, None]
  alpha, context = ref_attend(p['attention'], hs[1:-1])
  return context @ p['decoder']['output']['kernel'] + p['decoder']['output']['bias'], alpha


def ref_han(encoder, p, sentences):
  """HAN over one document given as a list of sentences of word ids."""
  table = p['embedding']['table']
  vectors = []
  for sentence in sentences:
    hs = ref_encode(encoder, p['encoder'].get('word_encoder'), np.stack([table[i] for i in sentence]))
    vectors.append(ref_attend(p['encoder']['word_scorer'], hs)[1])
  hs = ref_encode(encoder, p['encoder'].get('sentence_encoder'), np.stack(vectors))
  alpha, context = ref_attend(p['attention'], hs)
  return context @ p['decoder']['output']['kernel'] + p['decoder']['output']['bias'], alpha


def f64(params):
  return jax.tree.map(lambda x: np.asarray(x, np.float64), params)


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize('encoder', ENCODERS)
def test_flan_forward_equals_a_float64_loop(encoder):
  model, params = model_of('flan', encoder)
  docs = random_documents(0)
  sequences, _ = flat_and_lengths(docs)
  width = max(len(s) for s in sequences) + 3
  tokens = np.zeros((len(docs), width), np.int32)
  for row, s in enumerate(sequences):
    tokens[row, :len(s)] = s
  out = model.forward(params, jnp.asarray(tokens), jnp.asarray([len(s) for s in sequences], jnp.int32))
  assert out.logits.shape == (len(docs), 8)
  for row, s in enumerate(sequences):
    logits, alpha = ref_flan(encoder, f64(params), s[1:-1])
    np.testing.assert_allclose(out.logits[row], logits, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out.alpha[row, 1:len(s) - 1], alpha, rtol=1e-4, atol=1e-6)
    assert float(jnp.abs(out.alpha[row, len(s) - 1:]).max()) == 0.0


@pytest.mark.parametrize('encoder', ENCODERS)
def test_han_forward_equals_a_float64_loop(encoder):
  model, params = model_of('han', encoder)
  docs = random_documents(1)
  sequences, lengths = flat_and_lengths(docs)
  batch = hierarchical.make_batch(sequences, lengths, np.zeros(len(docs)), np.arange(len(docs)),
                                  len(docs), (8,), (8,))
  out = model.forward(params, jnp.asarray(batch.tokens), jnp.asarray(batch.lengths))
  assert out.alpha.shape == (len(docs), 8) and out.hidden.shape[:2] == (len(docs), 8)
  for row, sentences in enumerate(docs):
    logits, alpha = ref_han(encoder, f64(params), sentences)
    np.testing.assert_allclose(out.logits[row], logits, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out.alpha[row, :len(sentences)], alpha, rtol=1e-4, atol=1e-6)
    assert float(jnp.abs(out.alpha[row, len(sentences):]).max()) == 0.0
  word_alpha = model.word_attention(params, jnp.asarray(batch.tokens), jnp.asarray(batch.lengths))
  np.testing.assert_allclose(word_alpha.sum(-1), (batch.lengths > 0).astype(np.float32), atol=1e-6)


# A second seed per encoder draws other lengths, and the rnn encoder (the
# slowest to compile) runs: with the whole suite (heavy; CI margin).
@pytest.mark.parametrize('encoder,seed', [(e, 2) if e != 'rnn' else pytest.param(e, 2, marks=pytest.mark.heavy)
                                          for e in ENCODERS] + [pytest.param(e, 3, marks=pytest.mark.heavy)
                                                                for e in ENCODERS])
def test_han_batches_equal_unbatched_runs(encoder, seed):
  """Any bucketing, any batch company, any row order: each document's
  outputs are those of the document alone, unpadded."""
  model, params = model_of('han', encoder)
  docs = random_documents(seed, n=9)
  sequences, lengths = flat_and_lengths(docs)
  labels = np.arange(9) % 8
  alone = {}
  for i in range(9):
    b = hierarchical.make_batch(sequences, lengths, labels, np.array([i]), 1,
                                (len(docs[i]),), (max(len(s) for s in docs[i]),))
    alone[i] = model.forward(params, jnp.asarray(b.tokens), jnp.asarray(b.lengths))
  seen = []
  for batch in hierarchical.eval_batches(sequences, lengths, labels, 4, 200, (2, 4, 8), (4, 8)):
    assert batch.tokens.shape[0] * batch.tokens.shape[1] * batch.tokens.shape[2] <= 200 or (
        (batch.index >= 0).sum() == 1)
    out = model.forward(params, jnp.asarray(batch.tokens), jnp.asarray(batch.lengths))
    for row, i in enumerate(batch.index):
      if i < 0:
        continue
      seen.append(int(i))
      n = len(docs[i])
      np.testing.assert_allclose(out.logits[row], alone[i].logits[0], atol=1e-5)
      np.testing.assert_allclose(out.alpha[row, :n], alone[i].alpha[0, :n], atol=1e-6)
      assert int(labels[i]) == int(batch.labels[row])
  assert sorted(seen) == list(range(9))


def test_hierarchical_train_batches_cover_every_document_once_per_epoch():
  docs = random_documents(4, n=37)
  sequences, lengths = flat_and_lengths(docs)
  labels = np.arange(37) % 8
  for epoch in (0, 1):
    batches = hierarchical.train_batches(sequences, lengths, labels, 8, 300, (2, 4, 8), (4, 8), 0, epoch)
    index = np.concatenate([b.index[b.index >= 0] for b in batches])
    assert sorted(index.tolist()) == list(range(37))
    for b in batches:
      assert b.tokens.shape[0] in (1, 2, 4, 8) and b.weights[b.index < 0].sum() == 0
      rows, s, w = b.tokens.shape
      assert rows * s * w <= 300 or (b.index >= 0).sum() == 1
  again = hierarchical.train_batches(sequences, lengths, labels, 8, 300, (2, 4, 8), (4, 8), 0, 1)
  assert all(np.array_equal(a.tokens, b.tokens) for a, b in zip(batches, again))


def test_sentences_of_a_batch_are_the_documents_words_in_order():
  docs = random_documents(5, n=3)
  sequences, lengths = flat_and_lengths(docs)
  b = hierarchical.make_batch(sequences, lengths, np.zeros(3), np.arange(3), 4, (8,), (8,))
  for row, sentences in enumerate(docs):
    for s, words in enumerate(sentences):
      assert b.tokens[row, s, :len(words)].tolist() == [int(w) for w in words]
      assert b.lengths[row, s] == len(words)
    assert b.lengths[row, len(sentences):].sum() == 0
  assert b.index[3] == -1 and b.weights[3] == 0


def test_bigru_gradient_equals_finite_differences():
  """The biGRU trains through `gru_scan`'s autodiff: its gradient against
  central differences in float64."""
  from attn_jax.models.encoders.bigru import BiGRUEncoder  # pylint: disable=g-import-not-at-top
  with jax.enable_x64(True):
    encoder = BiGRUEncoder(hidden=3, items='all')
    x = jnp.asarray(np.random.default_rng(0).normal(size=(2, 5, 4)))
    lengths = jnp.asarray(np.array([5, 3], np.int64))
    params = jax.tree.map(lambda p: p.astype(jnp.float64),
                          encoder.init(jax.random.PRNGKey(0), x.astype(jnp.float32), lengths))
    loss = jax.jit(lambda p: jnp.sum(jnp.sin(encoder.apply(p, x, lengths))))
    grads = jax.grad(loss)(params)
    leaf = params['params']['w_hh']
    for index in [(0, 1, 2), (1, 0, 7), (1, 2, 5)]:
      bumped = lambda d: jax.tree.map(lambda p: p, params) | {
          'params': {**params['params'], 'w_hh': leaf.at[index].add(d)}}
      numeric = (loss(bumped(1e-6)) - loss(bumped(-1e-6))) / 2e-6
      np.testing.assert_allclose(grads['params']['w_hh'][index], numeric, rtol=1e-5, atol=1e-8)


def test_allennlp_initializers_are_s_and_s_list():
  """`model.init='allennlp'`: GRU input weights Xavier-uniform, recurrent
  weights orthogonal per direction, input bias 0, recurrent bias 1 at
  AllenNLP's `lstm_hidden_bias` slots (3H // 4 .. 2 · (3H // 4)); the
  classifier Xavier-uniform with bias 0."""
  from attn_jax.models.encoders.bigru import BiGRUEncoder  # pylint: disable=g-import-not-at-top
  from attn_jax.models.decoder import Decoder  # pylint: disable=g-import-not-at-top
  hidden, dim = 4, 6
  x, lengths = jnp.ones((2, 5, dim)), jnp.asarray([5, 3])
  p = BiGRUEncoder(hidden=hidden, items='all', initializer='allennlp').init(
      jax.random.PRNGKey(0), x, lengths)['params']
  for z in range(2):
    w = np.asarray(p['w_hh'][z], np.float64)  # [H, 3H]: PyTorch's [3H, H] transposed
    np.testing.assert_allclose(w @ w.T, np.eye(hidden), atol=1e-5)
  bound = np.sqrt(6.0 / (dim + 3 * hidden))
  assert np.abs(p['w_ih']).max() <= bound and np.abs(p['w_ih']).max() > 0.5 * bound
  assert not np.any(p['b_ih'])
  expected = np.zeros(3 * hidden)
  expected[3:6] = 1.0  # 3H // 4 = 3
  np.testing.assert_array_equal(p['b_hh'], np.stack([expected, expected]))
  torch_params = BiGRUEncoder(hidden=hidden, items='all').init(jax.random.PRNGKey(0), x, lengths)
  assert np.any(torch_params['params']['b_ih'])  # PyTorch's default: U(±1/√H) everywhere
  d = Decoder(classes=5, initializer='allennlp').init(
      jax.random.PRNGKey(1), jnp.ones((2, 3, 8)), jnp.full((2, 3), 1 / 3))['params']['output']
  assert not np.any(d['bias']) and np.abs(d['kernel']).max() <= np.sqrt(6.0 / (8 + 5))


def test_conv_dropout_acts_in_training_only():
  from attn_jax.models.encoders.cnn import CNNEncoder  # pylint: disable=g-import-not-at-top
  x = jax.random.normal(jax.random.PRNGKey(0), (2, 7, 6))
  lengths = jnp.asarray([7, 4])
  plain, dropped = CNNEncoder(hidden=4, kernel_sizes=(3, 5), items='all'), CNNEncoder(
      hidden=4, kernel_sizes=(3, 5), items='all', dropout=0.3)
  params = plain.init(jax.random.PRNGKey(1), x, lengths)
  np.testing.assert_array_equal(dropped.apply(params, x, lengths), plain.apply(params, x, lengths))
  train = dropped.apply(params, x, lengths, deterministic=False, rngs={'dropout': jax.random.PRNGKey(2)})
  assert not np.allclose(train, plain.apply(params, x, lengths))


def test_batches_split_to_fit_as_allennlp_does():
  """S&S's FLAN batches: a chunk of length-sorted documents is cut, in
  order, wherever documents × the longest one's words would pass the cap;
  against a plain loop, and the epoch's batches keep every document once."""
  from attn_jax.data import batching  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  words = rng.integers(1, 400, size=300)
  chunk = np.argsort(words + rng.integers(0, 30, size=300))[:64]

  def naive(chunk, cap):
    out, current = [], []
    for doc in chunk:
      if current and max(int(words[d]) for d in current + [doc]) * (len(current) + 1) > cap:
        out.append(current)
        current = []
      current.append(int(doc))
    return out + [current]

  for cap in (None, 500, 2000, 20_000):
    pieces = batching.split_to_fit(chunk, words, cap)
    assert [list(map(int, p)) for p in pieces] == (naive(chunk, cap) if cap else [list(map(int, chunk))])
  sequences = [np.arange(n + 2) for n in words]
  labels = np.zeros(len(words), np.int32)
  buckets = batching.bucket_lengths(int(words.max()) + 2, 1.2)
  capped = batching.train_batches(sequences, labels, 64, buckets, 1.0, 0, 0, max_tokens=2000)
  plain = batching.train_batches(sequences, labels, 64, buckets, 1.0, 0, 0)
  assert len(capped) > len(plain) == 5
  seen = np.concatenate([b.index[b.index >= 0] for b in capped])
  assert sorted(seen) == list(range(len(words)))
  for b in capped:
    real = b.index >= 0
    assert real.sum() == 1 or real.sum() * (b.lengths[real].max() - 2) <= 2000


def test_unit_rows_scale_every_pretrained_row_to_norm_one(tmp_path):
  from attn_jax.workdirs.initial_params import pretrained_matrix  # pylint: disable=g-import-not-at-top
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  cfg = config_lib.default_config('synthetic', 'bigru', 'smoke')
  dataset = load_dataset(cfg.data)
  path = tmp_path / 'v.txt'
  words = dataset.vocab.tokens[1:8]  # <UNK> among them
  path.write_text(''.join(f'{w} ' + ' '.join(str(3.0 * (i + 1)) for _ in range(cfg.model.embed_dim))
                          + '\n' for i, w in enumerate(words)))
  cfg.model.embeddings_file = str(path)
  cfg.model.embeddings_unit_rows = True
  matrix, record = pretrained_matrix(cfg, dataset, lambda *_: None)
  norms = np.linalg.norm(matrix, axis=1)
  np.testing.assert_allclose(norms[1:8], 1.0, rtol=1e-6)
  assert not np.any(norms[8:]) and norms[0] == 0
  assert record['unit_rows'] and record['unk_from_vectors']


def test_han_batches_keep_s_and_s_cap_on_documents_times_longest_sentence():
  """`data.max_batch_sentence_words`: every training batch of documents
  × its longest sentence fits the cap (or is one document), every
  document comes once, and the cap only ever adds batches."""
  rng = np.random.default_rng(3)
  sentence_lengths = [rng.integers(1, 60, size=rng.integers(1, 9)) for _ in range(150)]
  sequences = [np.concatenate([[SOS], np.arange(int(x.sum())) % 30 + 4, [EOS]]).astype(np.int32)
               for x in sentence_lengths]
  labels = np.zeros(150, np.float32)
  args = (sequences, sentence_lengths, labels, 16, 100_000, (2, 4, 8), (8, 16, 32, 64), 0, 0)
  capped = hierarchical.train_batches(*args, max_sentence_words=300)
  plain = hierarchical.train_batches(*args)
  assert len(capped) > len(plain)
  seen = []
  for b in capped:
    docs = b.index[b.index >= 0]
    seen += list(docs)
    longest = max(int(np.max(sentence_lengths[d])) for d in docs)
    assert len(docs) == 1 or len(docs) * longest <= 300
  assert sorted(seen) == list(range(150))
  assert hierarchical.count_batches(sentence_lengths, 16, 100_000, (2, 4, 8), (8, 16, 32, 64), 300) > \
      hierarchical.count_batches(sentence_lengths, 16, 100_000, (2, 4, 8), (8, 16, 32, 64))
