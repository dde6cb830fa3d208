"""The analyses' model interface (attn_jax.models.interface): capabilities
declared and checked, fast paths only where they hold, models of one's own
through the adapters, one α from several heads — each against a float64
loop reference on small random inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import attn_jax as aj
from attn_jax import analysis
from attn_jax.analysis import attention_erasure as er, loo as loo_lib, needs
from attn_jax.models import adapters, heads, projections
from attn_jax.models.interface import InterfaceError
from analysis_helpers import documents, pad, setup

H = 6


def cls_residual_params(seed=0):
  k = jax.random.split(jax.random.PRNGKey(seed), 3)
  return {'embedding': jax.random.normal(k[0], (30, H)), 'w': jax.random.normal(k[1], (H,)) * 3.0,
          'query': jax.random.normal(k[2], (H,))}


def cls_residual_model(capabilities=('imposes_attention', 'array_states')):
  """States [B, L, H]; the decoder reads h_SOS + Σ α h (a CLS residual):
  the pooled prefix sums are not its output."""
  def encode(p, e, lengths):
    return jnp.tanh(e + jnp.cumsum(e, axis=1) * 0.3)

  def attend(p, h, mask):
    return projections.softmax(h @ p['query'], mask)

  def decode(p, h, alpha):
    return jnp.tanh(h[:, 0] + jnp.einsum('bl,blh->bh', alpha, h)) @ p['w']

  return adapters.from_functions(lambda p, t: p['embedding'][t], encode, attend, decode,
                                 capabilities=capabilities)


def reference_flips(params, hidden, alpha, mask, order):
  """Erase-until-flip, one document and one prefix at a time, in float64:
  the real states decoded with the erased, renormalised α."""
  h, a, m, o = (np.asarray(x, np.float64) for x in (hidden, alpha, mask, order))
  w = np.asarray(params['w'], np.float64)
  decode = lambda b, al: np.tanh(h[b, 0] + al @ h[b]) @ w
  items = []
  for b in range(len(h)):
    n, own = int(m[b].sum()), decode(b, a[b]) > 0
    found = -1
    for k in range(1, n + 1):
      kept = a[b] * m[b]
      for position in o[b, :k].astype(int):
        kept[position] = 0.0
      total = kept.sum()
      if (decode(b, kept / total if total > 0 else kept) > 0) != own:
        found = k
        break
    items.append(found)
  return np.array(items)


def cls_batch(seed=0):
  tokens, lengths = pad(documents((9, 7, 12, 5, 10, 11, 8, 6), seed=seed))
  return tokens, lengths


def test_erase_until_flip_decodes_the_real_states_where_the_decoder_is_not_pooled():
  model, params = cls_residual_model(), cls_residual_params()
  tokens, lengths = cls_batch()
  fwd = model.forward(params, tokens, lengths)
  order = er.ranking(fwd.alpha, fwd.mask)
  got = er.erase_until_flip(model, params, fwd.hidden, fwd.alpha, fwd.mask, order)
  expected = reference_flips(params, fwd.hidden, fwd.alpha, fwd.mask, order)
  np.testing.assert_array_equal(np.asarray(got.items), expected)
  assert np.sum(expected > 0) >= 2  # the test exercises flips


def test_the_pooled_shortcut_is_wrong_there_and_refused_when_declared():
  declared = cls_residual_model(('imposes_attention', 'array_states', 'pooled_decode'))
  params = cls_residual_params()
  tokens, lengths = cls_batch()
  fwd = declared.forward(params, tokens, lengths)
  order = er.ranking(fwd.alpha, fwd.mask)
  # Under one's own jit nothing is checked (no values to read): the shortcut's flips are wrong there.
  flips = jax.jit(er.erase_until_flip, static_argnums=0, static_argnames='path')
  shortcut = flips(declared, params, fwd.hidden, fwd.alpha, fwd.mask, order, path='pooled')
  exact = flips(declared, params, fwd.hidden, fwd.alpha, fwd.mask, order, path='exact')
  assert not np.array_equal(np.asarray(shortcut.items), np.asarray(exact.items))
  with pytest.raises(InterfaceError, match="declares 'pooled_decode' but its decoder reads more") as raised:
    er.check_fast_path(declared, params, fwd.hidden, fwd.alpha, fwd.mask)
  assert '\n' not in str(raised.value)
  with pytest.raises(InterfaceError, match="'pooled_decode' does not hold"):  # called as it is, refused
    er.erase_until_flip(declared, params, fwd.hidden, fwd.alpha, fwd.mask, order)
  with pytest.raises(InterfaceError, match="needs a model with 'pooled_decode'"):
    er.erase_until_flip(cls_residual_model(), params, fwd.hidden, fwd.alpha, fwd.mask, order, path='pooled')


@pytest.mark.parametrize('encoder', ['bilstm', pytest.param('cnn', marks=pytest.mark.heavy)])  # CI margin
def test_the_projects_models_pass_the_checks_and_take_the_fast_paths(encoder):
  model, params = setup(encoder)
  tokens, lengths = pad(documents())
  fwd = model.forward(params, tokens, lengths)
  er.check_fast_path(model, params, fwd.hidden, fwd.alpha, fwd.mask)
  loo_lib.check_fast_path(model, params, tokens, lengths)
  order = er.ranking(fwd.alpha, fwd.mask)
  pooled = er.erase_until_flip(model, params, fwd.hidden, fwd.alpha, fwd.mask, order)
  exact = er.erase_until_flip(model, params, fwd.hidden, fwd.alpha, fwd.mask, order, path='exact')
  np.testing.assert_array_equal(np.asarray(pooled.items), np.asarray(exact.items))
  assert loo_lib.fast_path(model) == ('states' if encoder == 'bilstm' else 'windows')
  assert loo_lib.fast_path(model, windows=False) == 'states'  # windows off: the encoder's own states


def test_a_wrong_deletion_path_is_refused_on_the_first_document():
  model, params = setup('bilstm')
  wrong = adapters.from_functions(
      model.embed, model.encode, model.attend, model.decode,
      capabilities=('imposes_attention', 'deletion_states'),
      encode_deletions=lambda p, e, n: model.encode_deletions(p, e, n) * 1.5)
  tokens, lengths = pad(documents())
  with pytest.raises(InterfaceError, match='deletion_states'):
    loo_lib.check_fast_path(wrong, params, tokens, lengths)
  # Without the declaration the exact path runs, and equals the project model's fast one.
  plain = adapters.from_functions(model.embed, model.encode, model.attend, model.decode)
  np.testing.assert_allclose(np.asarray(analysis.leave_one_out(plain, params, tokens, lengths).importance),
                             np.asarray(analysis.leave_one_out(model, params, tokens, lengths).importance),
                             atol=1e-5)


def test_refusals_name_what_is_missing_in_one_line():
  model, params = cls_residual_model(), cls_residual_params()
  cases = {'attention_deletion': "'scores'", 'state_gradient': "'layer_states'"}
  for name, missing in cases.items():
    reason = needs.refusal(model, name)
    assert missing in reason and '\n' not in reason, reason
  four_classes = adapters.from_functions(model.embed, model.encode, model.attend, model.decode, num_classes=4)
  assert 'two-class' in needs.refusal(four_classes, 'input_gradient')  # Meister's: binary
  assert needs.refusal(four_classes, 'leave_one_out') is None  # J&W's: any number of classes
  with pytest.raises(InterfaceError, match='needs the method'):
    adapters.from_functions(model.embed, model.encode, model.attend, model.decode, capabilities=('scores',))
  with pytest.raises(InterfaceError, match='unknown capabilities'):
    adapters.from_functions(model.embed, model.encode, model.attend, model.decode, capabilities=('fast',))
  with pytest.raises(InterfaceError, match='has no embed, encode, attend'):
    needs.check(object(), 'leave_one_out')


# ------------------------------------------------------------------ several heads

NUM_HEADS, WIDTH = 3, 7


def multi_head_model():
  """α [B, heads, L] read from the states; decode: Σ_k w_k · Σ_t α_kt v_kt."""
  def encode(p, e, lengths):
    return {'alpha': jax.nn.softmax(e[..., :NUM_HEADS].swapaxes(1, 2) * 2.0, axis=-1),
            'values': jnp.tanh(e), 'layers': jax.nn.softmax(jnp.einsum('bid,bjd->bij', e, e)[:, None, None]
                                                           .repeat(NUM_HEADS, 2).repeat(2, 1)
                                                           .swapaxes(0, 1), axis=-1)}

  def decode(p, s, alpha):
    return jnp.einsum('bkl,blh,kh->b', alpha, s['values'], p['w'])

  return adapters.from_functions(
      lambda p, t: p['embedding'][t], encode, lambda p, s, mask: s['alpha'], decode,
      capabilities=('imposes_attention', 'heads', 'layer_attention'), num_heads=NUM_HEADS,
      layer_attention=lambda p, s: s['layers'])


def multi_head_params():
  k1, k2 = jax.random.split(jax.random.PRNGKey(3))
  return {'embedding': jax.random.normal(k1, (30, 5)), 'w': jax.random.normal(k2, (NUM_HEADS, 5))}


def test_one_head_imposes_its_alpha_and_keeps_the_others():
  model, params = multi_head_model(), multi_head_params()
  tokens, lengths = pad(documents((WIDTH, WIDTH)))
  states = model.encode(params, model.embed(params, tokens), lengths)
  imposed = jax.random.dirichlet(jax.random.PRNGKey(0), jnp.ones(WIDTH), (2,))
  for k, view in enumerate(heads.each_head(model)):
    alphas = np.asarray(states['alpha'], np.float64).copy()
    alphas[:, k] = np.asarray(imposed)
    expected = np.einsum('bkl,blh,kh->b', alphas, np.asarray(states['values'], np.float64),
                         np.asarray(params['w'], np.float64))
    np.testing.assert_allclose(np.asarray(view.decode(params, states, imposed)), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(view.attend(params, states, None)), np.asarray(states['alpha'][:, k]))


def test_the_mean_and_the_rollout_are_read_only_and_the_rollout_is_abnar_and_zuidemas():
  model, params = multi_head_model(), multi_head_params()
  tokens, lengths = pad(documents((WIDTH, WIDTH - 2)), width=WIDTH)
  states = model.encode(params, model.embed(params, tokens), lengths)
  mask = model.attention_mask(tokens, lengths)
  layers = np.asarray(states['layers'], np.float64)  # [K, B, heads, L, L]
  for b in range(2):
    rolled = np.eye(WIDTH)
    for k in range(layers.shape[0]):  # Â = ½ mean_h A + ½ I, rows renormalised; R = Â_K ··· Â_1
      mixed = 0.5 * layers[k, b].mean(0) + 0.5 * np.eye(WIDTH)
      rolled = (mixed / mixed.sum(-1, keepdims=True)) @ rolled
    row = np.where(np.asarray(mask[b]), rolled[0], 0.0)
    got = np.asarray(heads.rollout(model).attend(params, states, mask))[b]
    np.testing.assert_allclose(got, row / row.sum(), rtol=1e-5, atol=1e-7)
  for view in (heads.mean_over_heads(model), heads.rollout(model)):
    assert 'imposes_attention' not in view.capabilities
    with pytest.raises(InterfaceError, match="'imposes_attention'"):
      needs.check(view, 'permutation_test')
    # Its forward is the model's own output, whatever α it shows.
    own = model.decode(params, states, states['alpha'])
    np.testing.assert_allclose(np.asarray(view.forward(params, tokens, lengths).logits), np.asarray(own))
  with pytest.raises(InterfaceError, match='one α'):
    needs.check(model, 'leave_one_out')


# ------------------------------------------------------------------ adapters and layout

def test_linen_and_nnx_adapters_give_the_modules_own_outputs():
  import flax.linen as nn
  from flax import nnx

  class Linen(nn.Module):
    @nn.compact
    def embed(self, tokens):
      return nn.Embed(30, 4, name='emb')(tokens)

    def encode(self, e, lengths):
      return jnp.tanh(e)

    def attend(self, h, mask):
      return projections.softmax(h.sum(-1), mask)

    def decode(self, h, alpha):
      return jnp.einsum('bl,blh->b', alpha, h)

  tokens, lengths = pad(documents())
  module = Linen()
  params = module.init(jax.random.PRNGKey(0), tokens, method='embed')['params']
  model = adapters.from_linen(module)
  e = module.apply({'params': params}, tokens, method='embed')
  alpha = projections.softmax(jnp.tanh(e).sum(-1), model.attention_mask(tokens, lengths))
  np.testing.assert_allclose(np.asarray(model.forward(params, tokens, lengths).logits),
                             np.asarray(jnp.einsum('bl,blh->b', alpha, jnp.tanh(e))), rtol=1e-6)
  assert hash(model) == hash(adapters.from_linen(module))

  class Nnx(nnx.Module):
    def __init__(self):
      self.emb = nnx.Embed(30, 4, rngs=nnx.Rngs(0))

    def embed(self, tokens):
      return self.emb(tokens)

    encode, attend, decode = Linen.encode, Linen.attend, Linen.decode

  graphdef, state = nnx.split(Nnx())
  nnx_model = adapters.from_nnx(graphdef)
  got = jax.jit(lambda s: nnx_model.forward(s, tokens, lengths).logits)(state)
  e = Nnx().emb(tokens)
  alpha = projections.softmax(jnp.tanh(e).sum(-1), nnx_model.attention_mask(tokens, lengths))
  np.testing.assert_allclose(np.asarray(got), np.asarray(jnp.einsum('bl,blh->b', alpha, jnp.tanh(e))),
                             rtol=1e-6)


def test_pad_texts_lays_out_sos_words_eos():
  tokens, lengths = aj.pad_texts([[5, 6, 7], [9]], multiple=4)
  np.testing.assert_array_equal(tokens, [[2, 5, 6, 7, 3, 0, 0, 0], [2, 9, 3, 0, 0, 0, 0, 0]])
  np.testing.assert_array_equal(lengths, [5, 3])
  with pytest.raises(ValueError, match='no words'):
    aj.pad_texts([[5], []])
  with pytest.raises(ValueError, match='SOS'):
    aj.pad_texts([[2, 5]])


def test_explain_takes_a_model_of_ones_own():
  model, params = setup('bilstm')
  words = {f'w{i}': i for i in range(4, 30)}
  got = aj.explain(model, ['w4 w5 w6', 'w7 nothing'], params=params, vocab=words)
  assert got[1].known.tolist() == [True, False]
  tokens, lengths = aj.pad_texts([[4, 5, 6]])
  np.testing.assert_allclose(got[0].alpha, np.asarray(model.forward(params, tokens, lengths).alpha)[0, 1:4],
                             rtol=1e-6)
  with pytest.raises(ValueError, match='max_words'):
    aj.explain(model, ['w4 ' * 50], params=params, vocab=words, max_words=20)
  with pytest.raises(TypeError, match='params'):
    aj.explain(model, ['w4'], vocab=words)
