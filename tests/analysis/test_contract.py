"""The contract check on first use (attn_jax.analysis.contract): the four
glue mistakes that gave wrong numbers silently (issue 77) are each refused
in one line, the adapters refuse a method a module does not have, the
project's own models pass, and the check runs once per model and shape."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from attn_jax import analysis
from attn_jax.analysis import attention_erasure as er, contract
from attn_jax.models import adapters, build_model, heads, masks, projections
from attn_jax.models.interface import ContractError, InterfaceError
from analysis_helpers import documents, pad, setup
from conftest import tiny_model_config

H, HEADS = 4, 2


def params_of(seed=0, vocab=30):
  k = jax.random.split(jax.random.PRNGKey(seed), 4)
  return {'embedding': jax.random.normal(k[0], (vocab, H)), 'query': jax.random.normal(k[1], (HEADS, H)),
          'w': jax.random.normal(k[2], (HEADS, H)) * 2.0, 'out': jax.random.normal(k[3], (H, 2))}


def batch(seed=0):
  return pad(documents((9, 7, 12, 5, 10, 11), seed=seed), width=14)


def multi_head(recompute: bool):
  """Two heads over the words, decode Σ_k w_k · Σ_t α_kt tanh(e_t). `recompute`: attend
  takes the softmax from the mask it is given (the GRU page's pattern) instead of
  reading the weights encode computed over the words."""
  def encode(p, e, lengths):
    scores = jnp.einsum('blh,kh->bkl', jnp.tanh(e), p['query'])
    words = masks.word_mask(lengths, e.shape[1])
    return {'scores': scores, 'values': jnp.tanh(e), 'alpha': projections.softmax(scores, words[:, None])}

  def attend(p, s, mask):
    if recompute:
      return projections.softmax(s['scores'], mask[:, None])
    return jnp.where(mask[:, None], s['alpha'], 0.0)

  return adapters.from_functions(
      lambda p, t: p['embedding'][t], encode, attend,
      lambda p, s, a: jnp.einsum('bkl,blh,kh->b', a, s['values'], p['w']),
      capabilities=('imposes_attention', 'heads', 'scores'), num_heads=HEADS,
      score=lambda p, s: s['scores'], project=projections.softmax)


def test_mistake_1_attend_recomputing_its_softmax_on_a_multi_head_model_is_refused():
  params, (tokens, lengths) = params_of(), batch()
  wrong, right = heads.head(multi_head(True), 0), heads.head(multi_head(False), 0)
  fwd = right.forward(params, tokens, lengths)
  order = er.ranking(fwd.alpha, fwd.mask)
  flips = jax.jit(er.erase_until_flip, static_argnums=0)  # unchecked under one's own jit
  silent = flips(wrong, params, fwd.hidden, fwd.alpha, fwd.mask, order).items
  assert not np.array_equal(np.asarray(silent), np.asarray(flips(right, params, fwd.hidden, fwd.alpha,
                                                                  fwd.mask, order).items))
  with pytest.raises(ContractError, match="imposing head 0's own α changes the model's output") as raised:
    er.erase_until_flip(wrong, params, fwd.hidden, fwd.alpha, fwd.mask, order)
  assert '\n' not in str(raised.value)
  with pytest.raises(ContractError, match='all-True mask'):
    analysis.leave_one_out(wrong, params, tokens, lengths)
  er.erase_until_flip(right, params, fwd.hidden, fwd.alpha, fwd.mask, order)  # the right glue runs


def cls_residual(capabilities):
  def encode(p, e, lengths):
    return jnp.tanh(e + jnp.cumsum(e, axis=1) * 0.3)

  return adapters.from_functions(
      lambda p, t: p['embedding'][t], encode, lambda p, h, mask: projections.softmax(h @ p['query'][0], mask),
      lambda p, h, a: jnp.tanh(h[:, 0] + jnp.einsum('bl,blh->bh', a, h)) @ p['w'][0], capabilities=capabilities)


def test_mistake_2_pooled_decode_declared_on_a_residual_decoder_is_refused_everywhere_it_runs():
  params, (tokens, lengths) = params_of(), batch()
  declared = cls_residual(('imposes_attention', 'array_states', 'pooled_decode'))
  with pytest.raises(ContractError, match="'pooled_decode' does not hold") as raised:
    analysis.every_analysis(declared, params, tokens, lengths, jax.random.PRNGKey(0), adversary_steps=2,
                            permutations=2)
  assert '\n' not in str(raised.value)
  fwd = declared.forward(params, tokens, lengths)
  with pytest.raises(ContractError, match="'pooled_decode' does not hold"):
    analysis.erase_until_flip(declared, params, fwd.hidden, fwd.alpha, fwd.mask, er.ranking(fwd.alpha, fwd.mask))
  honest = cls_residual(('imposes_attention', 'array_states'))
  with jax.numpy_dtype_promotion('standard'):  # the adversaries run optax
    results, _ = analysis.every_analysis(honest, params, tokens, lengths, jax.random.PRNGKey(0),
                                         adversary_steps=2, permutations=2)
  assert 'erase_until_flip' in results


def cls_over_the_sequence(attention_mask=None, forward=False, own_mask='sequence'):
  """A CLS (SOS) query over [SOS] words [EOS]: α computed in encode over the sequence."""
  def alpha_over(p, e, lengths, which):
    mask = (masks.sequence_mask if which == 'sequence' else masks.word_mask)(lengths, e.shape[1])
    return projections.softmax(jnp.tanh(e) @ p['query'][0], mask)

  def encode(p, e, lengths):
    return {'alpha': alpha_over(p, e, lengths, 'sequence'), 'values': jnp.tanh(e)}

  def decode(p, s, a):
    return (s['values'][:, 0] + jnp.einsum('bl,blh->bh', a, s['values'])) @ p['w'][0]

  def own(p, t, n):  # the model as written: its CLS attends `own_mask`
    e = p['embedding'][t]
    return decode(p, {'values': jnp.tanh(e)}, alpha_over(p, e, n, own_mask))

  return adapters.from_functions(lambda p, t: p['embedding'][t], encode,
                                 lambda p, s, mask: jnp.where(mask, s['alpha'], 0.0), decode,
                                 attention_mask=attention_mask, forward=own if forward else None)


def test_mistake_3_the_default_word_mask_on_a_cls_over_the_whole_row_is_refused():
  params, (tokens, lengths) = params_of(), batch()
  with pytest.raises(ContractError, match=r'α sums to 0\.\d+ over the items attention_mask declares.*'
                                          'attention_mask=') as raised:
    analysis.gradient_importance(cls_over_the_sequence(), params, tokens, lengths)
  assert '\n' not in str(raised.value)
  declared = cls_over_the_sequence(lambda t, n: masks.sequence_mask(n, t.shape[1]), forward=True)
  analysis.gradient_importance(declared, params, tokens, lengths)  # declared as it attends: it runs
  # Pieces over the words while the model's own CLS reads SOS and EOS too: they are not the model.
  words_only = adapters.from_functions(
      declared.embed_fn, lambda p, e, n: {'alpha': projections.softmax(jnp.tanh(e) @ p['query'][0],
                                                                       masks.word_mask(n, e.shape[1])),
                                          'values': jnp.tanh(e)},
      declared.attend_fn, declared.decode_fn, forward=declared.forward_fn)
  with pytest.raises(ContractError, match=r"differs from FunctionModel's own forward by up to \d"):
    analysis.leave_one_out(words_only, params, tokens, lengths)


def two_columns(one=False):
  decode = lambda p, h, a: jnp.einsum('bl,blh->bh', a, h) @ p['out']  # [B, 2], a softmax's logits
  return adapters.from_functions(
      lambda p, t: p['embedding'][t], lambda p, e, n: jnp.tanh(e),
      lambda p, h, mask: projections.softmax(h @ p['query'][0], mask),
      adapters.one_logit(decode) if one else decode)


def test_mistake_4_two_softmax_columns_with_num_classes_2_are_refused_and_one_logit_is_exact():
  params, (tokens, lengths) = params_of(), batch()
  silent = jax.jit(analysis.leave_one_out, static_argnums=0)(two_columns(), params, tokens, lengths)
  with pytest.raises(ContractError, match=r'two columns \[B, 2\] while num_classes=2') as raised:
    analysis.leave_one_out(two_columns(), params, tokens, lengths)
  assert '\n' not in str(raised.value) and 'one_logit' in str(raised.value)
  got = np.asarray(analysis.leave_one_out(two_columns(one=True), params, tokens, lengths).importance)
  # Float64 loop: delete each word, P(class 1) of the softmax of the two columns.
  p = {k: np.asarray(v, np.float64) for k, v in params.items()}

  def prob(words):
    h = np.tanh(p['embedding'][words])
    s = h @ p['query'][0]
    a = np.exp(s - s.max())
    z = (a / a.sum()) @ h @ p['out']
    return np.exp(z[1]) / np.exp(z).sum()

  for b, n in enumerate(np.asarray(lengths)):
    words = np.asarray(tokens[b, 1:n - 1])
    full = prob(words)
    for i in range(len(words)):
      np.testing.assert_allclose(got[b, i + 1], abs(prob(np.delete(words, i)) - full), atol=2e-6)
  assert np.max(np.abs(np.asarray(silent.importance) - got)) > 0.01  # what went unnoticed


def test_adapters_refuse_a_method_the_module_does_not_have_in_one_line():
  class Compact(nn.Module):
    @nn.compact
    def __call__(self, tokens, lengths):
      return nn.Dense(1)(nn.Embed(30, H)(tokens).mean(1))[:, 0]

  with pytest.raises(InterfaceError, match=r"Compact has no method 'embed'.*from_linen_call") as raised:
    adapters.from_linen(Compact())
  assert '\n' not in str(raised.value)

  class Submodule(nn.Module):  # `self.embed` is a layer, not the model's embedding step
    def setup(self):
      self.embed, self.position = nn.Embed(30, H), nn.Embed(20, H)

    def encode(self, e, lengths):
      return e

    def attend(self, h, mask):
      return projections.softmax(h.sum(-1), mask)

    def decode(self, h, a):
      return jnp.einsum('bl,blh->b', a, h)

  with pytest.raises(InterfaceError, match=r"no method 'embed' for embed=.*submodule"):
    adapters.from_linen(Submodule())

  class Nnx(nnx.Module):
    def __init__(self):
      self.emb = nnx.Embed(30, H, rngs=nnx.Rngs(0))

    def __call__(self, tokens, lengths):
      return self.emb(tokens).sum((1, 2))

  with pytest.raises(InterfaceError, match=r"Nnx has no method 'embed'.*from_nnx_call"):
    adapters.from_nnx(nnx.split(Nnx())[0])


def test_the_check_runs_once_per_model_and_batch_shape(monkeypatch):
  seen = []
  verdict = contract.verdict
  monkeypatch.setattr(contract, 'verdict', lambda *a, **k: seen.append(1) or verdict(*a, **k))
  model, params = two_columns(one=True), params_of()
  tokens, lengths = batch()
  for _ in range(2):
    analysis.leave_one_out(model, params, tokens, lengths)
    analysis.gradient_importance(model, params, tokens, lengths)
  assert len(seen) == 1
  analysis.leave_one_out(model, params, *pad(documents((5, 6)), width=8))
  assert len(seen) == 2


@pytest.mark.parametrize('make', ['bilstm', 'cnn', 'transformer', 'qa', 'sparsegen'])
def test_the_projects_own_models_pass(make):
  if make in ('bilstm', 'cnn', 'transformer'):
    model, params = setup(make, projection='sparsemax' if make == 'bilstm' else 'softmax')
    tokens, lengths = batch()
  elif make == 'sparsegen':
    cfg = tiny_model_config('bilstm', 'tanh', 'sparsegen')
    cfg.sparsegen_lambda = -64.0
    model = build_model(cfg, 30)
    params, (tokens, lengths) = model.init(jax.random.PRNGKey(0)), batch()
  else:
    from attn_jax.models import qa  # pylint: disable=g-import-not-at-top
    cfg = tiny_model_config('bilstm', 'tanh')
    cfg.query, cfg.classes = True, 3
    model = build_model(cfg, 30)
    params = model.init(jax.random.PRNGKey(0))
    docs = documents((7, 5, 9))
    tokens, lengths = (jnp.asarray(x) for x in qa.query_rows(docs, documents((4, 3, 5), seed=1)))
  contract.check(model, params, tokens, lengths)
