"""Any model, against float64 loops on small random inputs: a model given as
its forward function (attn_jax.models.forward_only), a compact linen module,
flax's stock attention layers (attn_jax.models.stock), and a multi-head
model's gradients with one head or every head detached and its per-head
scores (attn_jax.models.heads)."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import attn_jax as aj
from attn_jax import analysis
from attn_jax.explain import GRADIENT_ATTACHED, GRADIENT_DETACHED
from attn_jax.analysis import needs
from attn_jax.models import adapters, heads, masks, projections, stock
from attn_jax.models.interface import InterfaceError
from analysis_helpers import documents, pad

D = 5


def batch():
  return pad(documents((9, 7, 12, 5, 10), seed=4), width=13)


def rows(tokens, lengths):
  return [np.asarray(tokens[b, 1:n - 1]) for b, n in enumerate(np.asarray(lengths))]


# ------------------------------------------------------------------ one forward function

def reference(p, words):
  """σ(z) and ∂σ(z)/∂e [n, D] of one document's words, float64: e = E[w], h = tanh(e),
  α = softmax(h·q), z = (Σ α h)·w + b."""
  e = p['E'][words]
  h = np.tanh(e)
  s = h @ p['q']
  a = np.exp(s - s.max())
  a /= a.sum()
  c = a @ h
  y = 1.0 / (1.0 + np.exp(-(c @ p['w'] + p['b'])))
  # ∂z/∂h_t = α_t w + α_t ((h_t − c)·w) q; ∂h/∂e = 1 − h².
  dz_dh = a[:, None] * p['w'][None] + (a * ((h - c) @ p['w']))[:, None] * p['q'][None]
  return y, y * (1 - y) * dz_dh * (1 - h * h)


def forward_params(seed=0):
  k = jax.random.split(jax.random.PRNGKey(seed), 3)
  return {'E': jax.random.normal(k[0], (30, D)), 'q': jax.random.normal(k[1], (D,)),
          'w': jax.random.normal(k[2], (D,)) * 2.0, 'b': jnp.float32(0.1)}


def logits_of_embeddings(p, e, lengths):
  h = jnp.tanh(e)
  a = projections.softmax(h @ p['q'], masks.word_mask(lengths, e.shape[1]))
  return jnp.einsum('bl,blh->bh', a, h) @ p['w'] + p['b']


def check_against_reference(model, params, p64, tokens, lengths, gradients=True):
  loo = np.asarray(analysis.leave_one_out(model, params, tokens, lengths).importance)
  if gradients:
    times_input = np.asarray(analysis.gradient_importance(model, params, tokens, lengths,
                                                          detach_attention=False))
    g_y_x = np.asarray(analysis.input_gradient(model, params, tokens, lengths))
  for b, words in enumerate(rows(tokens, lengths)):
    y, grad = reference(p64, words)
    for i in range(len(words)):
      np.testing.assert_allclose(loo[b, i + 1], abs(reference(p64, np.delete(words, i))[0] - y), atol=2e-6)
    if gradients:
      e = p64['E'][words]
      np.testing.assert_allclose(times_input[b, 1:len(words) + 1], np.abs(np.sum(grad * e, -1)), rtol=1e-4,
                                 atol=1e-7)
      norms = np.linalg.norm(grad, axis=-1)
      np.testing.assert_allclose(g_y_x[b, 1:len(words) + 1], norms / norms.sum(), rtol=1e-4, atol=1e-7)


def as64(values, names):
  return {name: np.asarray(value, np.float64) for name, value in zip(names, values)}


def test_a_forward_function_gets_leave_one_out_and_with_embed_the_attached_gradients():
  params, (tokens, lengths) = forward_params(), batch()
  p64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
  ids_only = adapters.from_forward(lambda p, t, n: logits_of_embeddings(p, p['E'][t], n))
  check_against_reference(ids_only, params, p64, tokens, lengths, gradients=False)
  with pytest.raises(InterfaceError, match='needs embed=|embed='):
    analysis.input_gradient(ids_only, params, tokens, lengths)
  split = adapters.from_forward(logits_of_embeddings, embed=lambda p, t: p['E'][t])
  check_against_reference(split, params, p64, tokens, lengths)
  with pytest.raises(InterfaceError, match=r"'imposes_attention'.*forward function.*four-function split"):
    analysis.gradient_importance(split, params, tokens, lengths)  # α detached: nothing to detach
  assert needs.refusal(split, 'leave_one_out') is None


class Compact(nn.Module):
  """The same model as one compact __call__, its mask read from the ids."""

  @nn.compact
  def __call__(self, tokens, lengths):
    h = jnp.tanh(nn.Embed(30, D)(tokens))
    a = projections.softmax(nn.Dense(1, use_bias=False)(h)[..., 0],
                            masks.word_mask(lengths, tokens.shape[1]) & (tokens > 3))
    return nn.Dense(1)(jnp.einsum('bl,blh->bh', a, h))[:, 0]


def test_a_compact_linen_module_through_its_embedding_layer():
  tokens, lengths = batch()
  module = Compact()
  params = module.init(jax.random.PRNGKey(2), tokens, lengths)['params']
  p64 = as64((params['Embed_0']['embedding'], params['Dense_0']['kernel'][:, 0], params['Dense_1']['kernel'][:, 0],
              params['Dense_1']['bias'][0]), ('E', 'q', 'w', 'b'))
  check_against_reference(adapters.from_linen_call(module, embedding='Embed_0'), params, p64, tokens, lengths)
  with pytest.raises(InterfaceError, match="no layer 'Embed_9' was called.*Dense_0"):
    analysis.input_gradient(adapters.from_linen_call(module, embedding='Embed_9'), params, tokens, lengths)


class NnxModel(nnx.Module):
  def __init__(self, rngs):
    self.embedding = nnx.Embed(30, D, rngs=rngs)
    self.score = nnx.Linear(D, 1, use_bias=False, rngs=rngs)
    self.out = nnx.Linear(D, 1, rngs=rngs)

  def __call__(self, tokens, lengths):
    h = jnp.tanh(self.embedding(tokens))
    a = projections.softmax(self.score(h)[..., 0], masks.word_mask(lengths, tokens.shape[1]))
    return self.out(jnp.einsum('bl,blh->bh', a, h))[:, 0]


def test_an_nnx_modules_call_through_its_embedding_attribute():
  tokens, lengths = batch()
  graphdef, state = nnx.split(NnxModel(nnx.Rngs(3)))
  m = nnx.merge(graphdef, state)
  p64 = as64((m.embedding.embedding[...], m.score.kernel[...][:, 0], m.out.kernel[...][:, 0], m.out.bias[...][0]),
             ('E', 'q', 'w', 'b'))
  check_against_reference(adapters.from_nnx_call(graphdef, embedding='embedding'), state, p64, tokens, lengths)


# ------------------------------------------------------------------ flax's stock attention

class StockClassifier(nn.Module):
  """Embeddings, then the SOS position's query over the words with flax's own
  MultiHeadDotProductAttention: α read by sow, imposed through attention_fn."""

  def setup(self):
    self.embedding = nn.Embed(30, 8)
    self.attention = nn.MultiHeadDotProductAttention(num_heads=2, attention_fn=stock.attention_fn)
    self.out = nn.Dense(1)

  def embed(self, tokens):
    return self.embedding(tokens)

  def encode(self, e, lengths):
    self.attention(e[:, :1], e, mask=masks.word_mask(lengths, e.shape[1])[:, None, None], sow_weights=True)
    return {'x': e, 'alpha': self.attention.get_variable('intermediates', 'attention_weights')[-1][:, :, 0]}

  def attend(self, states, mask):
    return jnp.where(mask[:, None], states['alpha'], 0.0)

  def decode(self, states, alpha):
    with stock.imposing(alpha[:, :, None, :]):
      return self.out(self.attention(states['x'][:, :1], states['x'])[:, 0])[:, 0]

  def __call__(self, tokens, lengths):
    e = self.embed(tokens)
    mask = masks.word_mask(lengths, e.shape[1])[:, None, None]
    return self.out(self.attention(e[:, :1], e, mask=mask)[:, 0])[:, 0]


def stock_reference(p, words, imposed=None):
  """Float64: α [heads, n] of the SOS query over the words, and the logit with `imposed` α."""
  x = p['embedding']['embedding'][np.concatenate([[2], words, [3]])]
  a = p['attention']
  proj = lambda name, v: np.einsum('ld,dhk->lhk', v, a[name]['kernel']) + a[name]['bias']
  q, k, v = proj('query', x[:1])[0], proj('key', x[1:-1]), proj('value', x[1:-1])
  s = np.einsum('hk,lhk->hl', q, k) / np.sqrt(q.shape[-1])
  alpha = np.exp(s - s.max(-1, keepdims=True))
  alpha /= alpha.sum(-1, keepdims=True)
  use = alpha if imposed is None else imposed
  mixed = np.einsum('hl,lhk->hk', use, v)
  cls = np.einsum('hk,hkd->d', mixed, a['out']['kernel']) + a['out']['bias']
  return alpha, float(cls @ p['out']['kernel'][:, 0] + p['out']['bias'][0])


def test_stock_multi_head_attention_read_by_sow_and_imposed_through_attention_fn():
  tokens, lengths = batch()
  module = StockClassifier()
  params = module.init(jax.random.PRNGKey(5), tokens, lengths)['params']
  model = adapters.from_linen(module, forward='__call__', num_heads=2, capabilities=('imposes_attention', 'heads'))
  p64 = jax.tree.map(lambda x: np.asarray(x, np.float64), params)
  fwd = model.forward(params, tokens, lengths)
  imposed = np.where(np.asarray(fwd.mask)[:, None], np.random.default_rng(0).random((len(tokens), 2, 13)), 0.0)
  imposed /= imposed.sum(-1, keepdims=True)
  decoded = np.asarray(model.decode(params, fwd.hidden, jnp.asarray(imposed, jnp.float32)))
  for b, words in enumerate(rows(tokens, lengths)):
    n = len(words)
    alpha, own = stock_reference(p64, words)
    np.testing.assert_allclose(np.asarray(fwd.alpha)[b, :, 1:n + 1], alpha, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(fwd.logits)[b], own, rtol=1e-5, atol=1e-5)
    _, with_imposed = stock_reference(p64, words, imposed[b, :, 1:n + 1])
    np.testing.assert_allclose(decoded[b], with_imposed, rtol=1e-5, atol=1e-5)
  with jax.numpy_dtype_promotion('standard'):
    results, refused = analysis.every_analysis(heads.head(model, 1), params, tokens, lengths,
                                               jax.random.PRNGKey(0), adversary_steps=2, permutations=3)
  assert {'permutation_test', 'erase_until_flip', 'gradient_importance_all_heads'} <= set(results)


def test_stock_nnx_multi_head_attention_the_same_way():
  class NnxStock(nnx.Module):
    def __init__(self, rngs):
      self.embedding = nnx.Embed(30, 8, rngs=rngs)
      self.attention = nnx.MultiHeadAttention(2, 8, decode=False, attention_fn=stock.attention_fn, rngs=rngs)
      self.out = nnx.Linear(8, 1, rngs=rngs)

    def embed(self, tokens):
      return self.embedding(tokens)

    def encode(self, e, lengths):  # α read by sow, through nnx.capture
      _, sown = nnx.capture(self.attention, nnx.Intermediate)(
          e[:, :1], e, mask=masks.word_mask(lengths, e.shape[1])[:, None, None], sow_weights=True)
      return {'x': e, 'alpha': sown['attention_weights'][-1][:, :, 0]}

    attend = StockClassifier.attend

    def decode(self, states, alpha):
      with stock.imposing(alpha[:, :, None, :]):
        return self.out(self.attention(states['x'][:, :1], states['x'])[:, 0])[:, 0]

    def __call__(self, tokens, lengths):
      e = self.embed(tokens)
      return self.out(self.attention(e[:, :1], e, mask=masks.word_mask(lengths, e.shape[1])[:, None, None])
                      [:, 0])[:, 0]

  tokens, lengths = batch()
  graphdef, state = nnx.split(NnxStock(nnx.Rngs(0)))
  model = adapters.from_nnx(graphdef, forward='__call__', num_heads=2, capabilities=('imposes_attention', 'heads'))
  view = heads.head(model, 0)
  fwd = view.forward(state, tokens, lengths)
  own = np.asarray(view.decode(state, fwd.hidden, fwd.alpha))  # imposing its own α: its own output
  np.testing.assert_allclose(own, np.asarray(fwd.logits), rtol=1e-5, atol=1e-6)
  analysis.leave_one_out(view, state, tokens, lengths)  # the contract holds, incl. forward='__call__'


# ------------------------------------------------------------------ several heads

HEADS = 3


def multi_head_params(seed=6):
  k = jax.random.split(jax.random.PRNGKey(seed), 3)
  return {'E': jax.random.normal(k[0], (30, D)), 'Q': jax.random.normal(k[1], (HEADS, D)),
          'W': jax.random.normal(k[2], (HEADS, D)) * 1.5}


def multi_head():
  """α_k = softmax_words(tanh(e)·Q_k), computed in encode; z = Σ_k W_k · Σ_t α_kt tanh(e_t)."""
  def encode(p, e, lengths):
    scores = jnp.einsum('blh,kh->bkl', jnp.tanh(e), p['Q'])
    return {'scores': scores, 'values': jnp.tanh(e),
            'alpha': projections.softmax(scores, masks.word_mask(lengths, e.shape[1])[:, None])}

  return adapters.from_functions(
      lambda p, t: p['E'][t], encode, lambda p, s, mask: jnp.where(mask[:, None], s['alpha'], 0.0),
      lambda p, s, a: jnp.einsum('bkl,blh,kh->b', a, s['values'], p['W']),
      capabilities=('imposes_attention', 'heads', 'scores'), num_heads=HEADS,
      score=lambda p, s: s['scores'], project=projections.softmax)


def multi_head_reference(p, words, detach):
  """Float64: |∂σ(z)/∂e_t · e_t| with the heads in `detach` held constant, and α [heads, n]."""
  e = p['E'][words]
  h = np.tanh(e)
  s = h @ p['Q'].T                                   # [n, heads]
  a = np.exp(s - s.max(0))
  a /= a.sum(0)
  c = a.T @ h                                        # [heads, D]
  z = float(np.sum(c * p['W']))
  y = 1.0 / (1.0 + np.exp(-z))
  dz_dh = a @ p['W']                                 # the values' part, every head
  for k in range(HEADS):
    if k not in detach:                              # the weights' part: ∂α_kt/∂h_t
      dz_dh = dz_dh + (a[:, k] * ((h - c[k]) @ p['W'][k]))[:, None] * p['Q'][k][None]
  grad = y * (1 - y) * dz_dh * (1 - h * h)
  return np.abs(np.sum(grad * e, -1)), a.T, y


def test_one_head_or_every_head_detached_each_against_its_float64_loop():
  model, params, (tokens, lengths) = multi_head(), multi_head_params(), batch()
  p64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
  view = heads.head(model, 1)
  one = np.asarray(analysis.gradient_importance(view, params, tokens, lengths))
  every = np.asarray(analysis.gradient_importance(view, params, tokens, lengths, detach_attention='all_heads'))
  mean_every = np.asarray(analysis.gradient_importance(heads.mean_over_heads(model), params, tokens, lengths,
                                                       detach_attention='all_heads'))
  for b, words in enumerate(rows(tokens, lengths)):
    n = len(words)
    np.testing.assert_allclose(one[b, 1:n + 1], multi_head_reference(p64, words, {1})[0], rtol=1e-4, atol=1e-7)
    all_heads = multi_head_reference(p64, words, set(range(HEADS)))[0]
    np.testing.assert_allclose(every[b, 1:n + 1], all_heads, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(mean_every[b, 1:n + 1], all_heads, rtol=1e-4, atol=1e-7)
  assert np.max(np.abs(one - every)) > 1e-3  # they are two gradients
  assert 'that head' in needs.NEEDS['gradient_importance'].label
  assert 'every head' in needs.NEEDS['gradient_importance_all_heads'].label
  with pytest.raises(InterfaceError, match='for a view of a multi-head model'):
    analysis.gradient_importance(multi_head_single(), params, tokens, lengths, detach_attention='all_heads')



def test_explain_on_a_head_the_mean_and_the_rollout_labels_its_gradient():
  """A head's gradient holds that head's α constant (J&W); the mean over heads
  cannot be imposed, so explain takes its gradient attached and says so."""
  model, params, (tokens, lengths) = multi_head(), multi_head_params(), batch()
  p64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
  docs = rows(tokens, lengths)
  texts = [' '.join(f'w{int(t)}' for t in words) for words in docs]
  vocab = {f'w{i}': i for i in range(4, 30)}
  one = aj.explain(heads.head(model, 2), texts, params=params, vocab=vocab)
  mean = aj.explain(heads.mean_over_heads(model), texts, params=params, vocab=vocab)
  for words, e_one, e_mean in zip(docs, one, mean):
    detached, a, y = multi_head_reference(p64, words, {2})
    attached = multi_head_reference(p64, words, set())[0]
    assert e_one.gradient_label == GRADIENT_DETACHED and e_mean.gradient_label == GRADIENT_ATTACHED
    np.testing.assert_allclose(e_one.gradient, detached, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(e_mean.gradient, attached, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(e_one.alpha, a[2], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(e_mean.alpha, a.mean(0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose([e_one.prob, e_mean.prob], [y, y], rtol=1e-5)
    assert np.max(np.abs(e_one.gradient - e_mean.gradient)) > 1e-4  # two gradients, told apart by the label
    assert GRADIENT_ATTACHED in e_mean.measures() and 'attention attached' in e_mean.table().splitlines()[-1]
    assert GRADIENT_DETACHED in e_one.measures() and 'attached' not in e_one.table()

def multi_head_single():
  return adapters.from_functions(lambda p, t: p['E'][t], lambda p, e, n: jnp.tanh(e),
                                 lambda p, h, mask: projections.softmax(h @ p['Q'][0], mask),
                                 lambda p, h, a: jnp.einsum('bl,blh->bh', a, h) @ p['W'][0])


def test_a_head_keeps_its_scores_and_meisters_deletion_runs_per_head():
  model, params, (tokens, lengths) = multi_head(), multi_head_params(), batch()
  p64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
  for k in range(HEADS):
    view = heads.head(model, k)
    assert 'scores' in view.capabilities
    got = np.asarray(analysis.attention_deletion(view, params, tokens, lengths))
    for b, words in enumerate(rows(tokens, lengths)):
      _, a, y = multi_head_reference(p64, words, set())
      h = np.tanh(p64['E'][words])
      s = h @ p64['Q'][k]
      changes = []
      for i in range(len(words)):  # head k without word i: its softmax over the others; the other heads their own
        keep = np.exp(s - s.max()) * (np.arange(len(words)) != i)
        alphas = a.copy()
        alphas[k] = keep / keep.sum()
        z = float(np.sum((alphas @ h) * p64['W']))
        changes.append(abs(1.0 / (1.0 + np.exp(-z)) - y))
      np.testing.assert_allclose(got[b, 1:len(words) + 1], np.array(changes) / sum(changes), rtol=1e-4,
                                 atol=1e-6)
  mean = heads.mean_over_heads(model)
  reason = needs.refusal(mean, 'attention_deletion')
  assert 'not one projection of scores' in reason and '\n' not in reason
