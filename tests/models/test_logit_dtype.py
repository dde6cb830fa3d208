"""An own model whose decode returns integer logits is refused in one line
naming the dtype and the fix, wherever an analysis first reads them (issue
76: a traceback from `jax.nn.sigmoid` deep inside an analysis before)."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import attn_jax as aj
from attn_jax import analysis
from attn_jax.models import interface
from attn_jax.models.interface import InterfaceError

TEXTS = [[4, 5, 6], [7, 8, 9, 10, 11]]
PARAMS = {'E': jax.random.normal(jax.random.PRNGKey(0), (16, 4)), 'w': jnp.ones(4)}


def _model(dtype):
  return aj.adapters.from_functions(
      lambda p, t: p['E'][t], lambda p, e, l: e,
      lambda p, h, m: aj.models.projections.softmax(h @ p['w'], m),
      lambda p, h, a: jnp.einsum('bl,blh->b', a, h).astype(dtype))


def _batch():
  tokens, lengths = aj.pad_texts(TEXTS)
  return jnp.asarray(tokens), jnp.asarray(lengths)


@pytest.mark.parametrize('dtype', [jnp.int32, jnp.bool_])
@pytest.mark.parametrize('run', [
    lambda m, t, l: m.forward(PARAMS, t, l),
    lambda m, t, l: analysis.gradient_importance(m, PARAMS, t, l),
    lambda m, t, l: analysis.leave_one_out(m, PARAMS, t, l),
    lambda m, t, l: jax.jit(analysis.gradient_importance, static_argnums=0)(m, PARAMS, t, l),  # inside a trace
], ids=['forward', 'gradient', 'loo', 'jitted'])
def test_integer_logits_are_refused_in_one_line(dtype, run):
  with pytest.raises(InterfaceError) as raised:
    run(_model(dtype), *_batch())
  message = str(raised.value)
  assert '\n' not in message
  assert f'decode of FunctionModel returns {jnp.dtype(dtype)} logits' in message
  assert 'decode must return floating logits' in message and 'astype(jnp.float32)' in message


@pytest.mark.parametrize('dtype', [jnp.float32, jnp.bfloat16])
def test_floating_logits_pass(dtype):
  tokens, lengths = _batch()
  assert _model(dtype).forward(PARAMS, tokens, lengths).logits.dtype == dtype


def test_a_linen_modules_decode_is_checked_too():
  class Rounded(nn.Module):
    def setup(self):
      self.embedding = nn.Embed(16, 4)
      self.out = nn.Dense(1)

    def embed(self, tokens):
      return self.embedding(tokens)

    def encode(self, e, lengths):
      return e

    def attend(self, h, mask):
      return aj.models.projections.softmax(h[..., 0], mask)

    def decode(self, h, alpha):
      return jnp.round(self.out(jnp.einsum('bl,blh->bh', alpha, h))[:, 0]).astype(jnp.int32)  # class ids

    def __call__(self, tokens, lengths):
      h = self.encode(self.embed(tokens), lengths)
      return self.decode(h, self.attend(h, tokens > 3))

  tokens, lengths = _batch()
  module = Rounded()
  params = module.init(jax.random.PRNGKey(0), tokens, lengths)['params']
  with pytest.raises(InterfaceError, match='returns int32 logits'):
    analysis.input_gradient(aj.adapters.from_linen(module), params, tokens, lengths)


def test_the_check_wraps_each_subclass_once_and_keeps_its_name():
  class Own(interface.AttentionModel):
    def decode(self, params, states, alpha):
      """Own decode."""
      return np.zeros(2, np.int64)

  class Deeper(Own):
    pass

  assert Own.decode.__doc__ == 'Own decode.' and Deeper.decode is Own.decode
  with pytest.raises(InterfaceError, match='decode of Deeper returns int64 logits'):
    Deeper().decode(None, None, None)
