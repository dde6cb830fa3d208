"""The pure-function model: stages, masking, padding invariance, imposed α."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.data.batching import make_batch
from attn_jax.models import build_model
from attn_jax.models import masks
from conftest import tiny_model_config

VARIANTS = list(itertools.product(['bilstm', 'cnn', 'average', 'transformer'], ['tanh', 'dot']))


def documents(seed=0, n=5, vocab=40):
  rng = np.random.default_rng(seed)
  return [np.array([2] + list(rng.integers(4, vocab, size=rng.integers(2, 12))) + [3], np.int32)
          for _ in range(n)]


def setup(encoder, attention, projection='softmax', vocab=40):
  model = build_model(tiny_model_config(encoder, attention, projection), vocab)
  return model, model.init(jax.random.PRNGKey(1))


def batch_of(docs, width=None, batch_size=None):
  width = width or max(len(d) for d in docs)
  b = make_batch(docs, np.zeros(len(docs)), np.arange(len(docs)), batch_size or len(docs), [width])
  return jnp.asarray(b.tokens), jnp.asarray(b.lengths)


@pytest.mark.parametrize('encoder,attention', VARIANTS)
def test_shapes_and_attention_only_on_words(encoder, attention):
  model, params = setup(encoder, attention)
  docs = documents()
  tokens, lengths = batch_of(docs, width=16)
  out = model.forward(params, tokens, lengths)
  hidden = 2 * 8 if encoder == 'bilstm' else 8
  assert out.logits.shape == (5,) and out.alpha.shape == (5, 16)
  assert out.hidden.shape == (5, 16, hidden) and out.embedded.shape == (5, 16, 16)
  words = masks.word_mask(lengths, 16)
  assert float(jnp.abs(jnp.where(words, 0.0, out.alpha)).max()) == 0.0
  np.testing.assert_allclose(out.alpha.sum(-1), 1.0, rtol=1e-5)


def padded_equals_alone(model, params, docs):
  """Each document's outputs in a padded batch of 8 equal its own; the
  padded batch's forward pass."""
  alone = [model.forward(params, *batch_of([d])) for d in docs]
  padded = model.forward(params, *batch_of(docs, width=29, batch_size=8))
  for i, single in enumerate(alone):
    n = len(docs[i])
    np.testing.assert_allclose(padded.logits[i], single.logits[0], atol=1e-5)
    np.testing.assert_allclose(padded.alpha[i, :n], single.alpha[0], atol=1e-6)
    np.testing.assert_allclose(padded.hidden[i, :n], single.hidden[0], atol=1e-5)
    assert float(jnp.abs(padded.hidden[i, n:]).max()) == 0.0
  return padded


@pytest.mark.parametrize('encoder,attention', VARIANTS)
def test_padding_never_changes_an_output(encoder, attention):
  model, params = setup(encoder, attention)
  padded_equals_alone(model, params, documents(1))


@pytest.mark.parametrize('encoder,attention', VARIANTS)
def test_stages_compose_to_the_forward_pass(encoder, attention):
  model, params = setup(encoder, attention)
  tokens, lengths = batch_of(documents(2), width=14)
  e = model.embed(params, tokens)
  h = model.encode(params, e, lengths)
  alpha = model.project(model.score(params, h), masks.attention_mask(tokens, lengths))
  np.testing.assert_allclose(model.decode(params, h, alpha),
                             model.forward(params, tokens, lengths).logits, atol=1e-6)


def test_imposed_attention_is_what_the_decoder_uses():
  model, params = setup('bilstm', 'tanh')
  tokens, lengths = batch_of(documents(3), width=14)
  h = model.encode(params, model.embed(params, tokens), lengths)
  theta = params['decoder']['output']['kernel'][:, 0]
  bias = params['decoder']['output']['bias'][0]
  words = masks.word_mask(lengths, 14).astype(jnp.float32)
  uniform = words / words.sum(-1, keepdims=True)
  expected = jnp.einsum('blh,h->bl', h, theta)
  np.testing.assert_allclose(model.decode(params, h, uniform),
                             (expected * uniform).sum(-1) + bias, atol=1e-5)
  one_hot = jax.nn.one_hot(jnp.full((5,), 2), 14)
  np.testing.assert_allclose(model.decode(params, h, one_hot), expected[:, 2] + bias, atol=1e-5)


def test_uniform_projection_ignores_the_scorer():
  model, params = setup('cnn', 'tanh', projection='uniform')
  tokens, lengths = batch_of(documents(4), width=12)
  out = model.forward(params, tokens, lengths)
  words = masks.word_mask(lengths, 12).astype(jnp.float32)
  np.testing.assert_allclose(out.alpha, words / words.sum(-1, keepdims=True), atol=1e-7)


@pytest.mark.parametrize('encoder', ['bilstm', 'cnn', 'average', 'transformer'])
def test_output_is_differentiable_in_embeddings_hidden_states_and_alpha(encoder):
  model, params = setup(encoder, 'tanh')
  tokens, lengths = batch_of(documents(5), width=12)
  out = model.forward(params, tokens, lengths)
  mask = masks.attention_mask(tokens, lengths)

  def from_embedded(e):
    return model.forward_embedded(params, e, lengths, mask).probs.sum()

  g_e = jax.grad(from_embedded)(out.embedded)
  g_h = jax.grad(lambda h: model.decode(params, h, out.alpha).sum())(out.hidden)
  g_a = jax.grad(lambda a: model.decode(params, out.hidden, a).sum())(out.alpha)
  assert g_e.shape == out.embedded.shape and g_h.shape == out.hidden.shape
  assert g_a.shape == out.alpha.shape
  for g in (g_e, g_h, g_a):
    assert bool(jnp.isfinite(g).all()) and float(jnp.abs(g).max()) > 0


def test_pad_token_embeds_to_zero_and_gets_no_gradient():
  model, params = setup('average', 'tanh')
  params['embedding']['table'] = params['embedding']['table'].at[0].set(7.0)
  tokens, lengths = batch_of(documents(6), width=15)
  assert float(jnp.abs(model.embed(params, tokens)[tokens == 0]).max()) == 0.0
  grad = jax.grad(lambda p: model.forward(p, tokens, lengths).logits.sum())(params)
  assert float(jnp.abs(grad['embedding']['table'][0]).max()) == 0.0


def test_a_token_replaced_by_pad_gets_zero_attention():
  model, params = setup('bilstm', 'tanh')
  tokens, lengths = batch_of(documents(7), width=14)
  tokens = tokens.at[:, 1].set(0)
  alpha = model.forward(params, tokens, lengths).alpha
  assert float(jnp.abs(alpha[:, 1]).max()) == 0.0
  np.testing.assert_allclose(alpha.sum(-1), 1.0, rtol=1e-5)


def test_transformer_dropout_needs_an_rng_and_is_otherwise_deterministic():
  cfg = tiny_model_config('transformer', 'dot')
  cfg.dropout = 0.5
  model = build_model(cfg, 40)
  params = model.init(jax.random.PRNGKey(0))
  tokens, lengths = batch_of(documents(8), width=14)
  a = model.forward(params, tokens, lengths).logits
  np.testing.assert_array_equal(a, model.forward(params, tokens, lengths).logits)
  b = model.forward(params, tokens, lengths, dropout_rng=jax.random.PRNGKey(3)).logits
  assert float(jnp.abs(a - b).max()) > 1e-4


@pytest.mark.parametrize('attention,norm', [('key_dot', 'post'), ('dot', 'pre')])
def test_pre_ln_transformer_and_key_dot_scorer(attention, norm):
  """Meister's Transformer variants (issue 35): padding changes nothing; the
  key-projected scorer is u · (W h + b) / √H; pre-LN states keep their own
  norms (post-LN's are all near √H)."""
  cfg = tiny_model_config('transformer', attention)
  cfg.transformer_norm = norm
  model = build_model(cfg, 40)
  params = model.init(jax.random.PRNGKey(1))
  docs = documents(1)
  padded = padded_equals_alone(model, params, docs)
  h = np.asarray(padded.hidden[0, :len(docs[0])], np.float64)
  if attention == 'key_dot':
    p = params['attention']
    keys = h @ np.asarray(p['key']['kernel'], np.float64) + np.asarray(p['key']['bias'], np.float64)
    scores = keys @ np.asarray(p['query']['kernel'], np.float64)[:, 0] / np.sqrt(h.shape[-1])
    np.testing.assert_allclose(model.score(params, padded.hidden)[0, :len(docs[0])], scores, rtol=1e-4, atol=1e-6)
  else:
    norms = np.linalg.norm(h, axis=-1)
    assert norms.std() > 0.01 * norms.mean()
