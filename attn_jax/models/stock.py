"""Flax's stock attention layers in the interface: α read by `sow`, imposed through `attention_fn`.

    layer = nn.MultiHeadDotProductAttention(num_heads=2, attention_fn=stock.attention_fn)  # linen
    layer = nnx.MultiHeadAttention(2, 32, decode=False, attention_fn=stock.attention_fn,
                                   rngs=rngs)                                               # NNX

`attention_fn` is flax's own dot-product attention (the softmax over the
layer's mask, the weights sown where the layer is called with
`sow_weights=True`), except inside `with imposing(weights):`, where the
layer mixes its values with `weights` instead: a `decode` imposes α so. The
weights are [B, heads, queries, keys] (or broadcast to it): for a CLS query
over the words, α [B, heads, L] is `alpha[:, :, None, :]` with the layer
called on that one query.

`from_linen` applies each method with 'intermediates' mutable, so a method
reads what a layer sowed: `layer.get_variable('intermediates',
'attention_weights')[-1]` (linen); in NNX, `_, sown = nnx.capture(layer,
nnx.Intermediate)(..., sow_weights=True)` and `sown['attention_weights'][-1]`.
docs/own_model.md has the worked examples.
"""

import contextlib
import contextvars
import inspect
from typing import Any, Iterator

import jax.numpy as jnp

__all__ = ['attention_fn', 'imposing']

_IMPOSED: contextvars.ContextVar = contextvars.ContextVar('imposed attention weights', default=None)


@contextlib.contextmanager
def imposing(weights: jnp.ndarray) -> Iterator[None]:
  """Inside the block, every layer built with `attention_fn` mixes its values with `weights`.

  Args:
    weights: [B, heads, queries, keys] attention weights (broadcastable to
      the layer's), e.g. α [B, heads, L] as `alpha[:, :, None, :]` for one query.

  Yields:
    None; the weights are imposed until the block ends.
  """
  token = _IMPOSED.set(weights)
  try:
    yield
  finally:
    _IMPOSED.reset(token)


def _weights_fn(module: Any):
  """Flax's own weights function: NNX's for an NNX layer, linen's otherwise."""
  if module is not None and type(module).__module__.startswith('flax.nnx'):
    from flax.nnx.nn import attention  # pylint: disable=g-import-not-at-top
    return attention.dot_product_attention_weights
  import flax.linen as nn  # pylint: disable=g-import-not-at-top
  return nn.dot_product_attention_weights


def attention_fn(query: jnp.ndarray, key: jnp.ndarray, value: jnp.ndarray, bias=None, mask=None,
                 broadcast_dropout: bool = True, dropout_rng=None, dropout_rate: float = 0.0,
                 deterministic: bool = False, dtype=None, precision=None, module: Any = None,
                 **kwargs) -> jnp.ndarray:
  """Flax's dot-product attention, with the weights of an enclosing `imposing` where there is one.

  Args:
    query: [B, queries, heads, d]; key: [B, keys, heads, d]; value: [B, keys, heads, d_v].
    bias: added to the logits before the softmax, as flax's.
    mask: [B, heads, queries, keys] bool (broadcastable), as flax's.
    broadcast_dropout, dropout_rng, dropout_rate, deterministic, dtype,
      precision: as flax's (the layer passes them).
    module: the layer, where it sows its weights (`sow_weights=True`).
    **kwargs: flax's other options (e.g. NNX's `is_causal`), passed on where
      its weights function takes them.

  Returns:
    [B, queries, heads, d_v]: Σ_k w_qk v_k with w the softmax weights (sown
    where `module` is given), or the imposed ones.
  """
  weights_fn = _weights_fn(module)
  accepted = inspect.signature(weights_fn).parameters
  options = {k: v for k, v in kwargs.items() if k in accepted}
  weights = weights_fn(query, key, bias, mask, broadcast_dropout=broadcast_dropout, dropout_rng=dropout_rng,
                       dropout_rate=dropout_rate, deterministic=deterministic, dtype=dtype,
                       precision=precision, module=module, **options)
  imposed = _IMPOSED.get()
  if imposed is not None:
    weights = jnp.broadcast_to(imposed, weights.shape).astype(weights.dtype)
  return jnp.einsum('...hqk,...khd->...qhd', weights, value)
