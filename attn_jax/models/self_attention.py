"""The self-attention layers of one of the project's Transformers, as a
multi-head model `attn_jax.models.heads` can take views of.

The project's Transformer (`attn_jax.models.encoders.transformer`, Meister
et al.'s: self-attention layers, then one pooling attention α over the last
layer's states) attends twice: α is the attention under test, and each
self-attention layer k has weights A_k [B, heads, L, L] (row q: what
position q attends to, over SOS, the words and EOS). Its `Model` declares
neither 'heads' nor 'layer_attention'; `SelfAttention` gives it them,
read-only:

    layer = SelfAttention(model, k, 'sos')     # layer k's weights, one α per head
    heads.head(layer, h)                        # head h's α [B, L]
    heads.mean_over_heads(layer)                # their mean
    SelfAttention(model, 'rollout', 'sos')      # the rollout of every layer (one "head")

A self-attention layer gives one row per query; one α per document needs a
choice of which query reads the words (`reading`):

    'sos'       row 0, the SOS position: the query `heads.rollout` reads by
                default (a CLS token's place). In this model nothing is
                pooled from SOS: α pools the words' states.
    'received'  the mean of the rows of the word queries (positions 1 .. n):
                the attention each word receives, on average over the words.

Either row is restricted to the words (the items α weighs) and
renormalised to sum 1 over them, as `heads.rollout` does. The rollout is
`heads.rollout_matrix` (Abnar & Zuidema 2020) read the same way; with
'sos' it is `heads.rollout(layer)` exactly.

Read-only: `decode` is the model's own output whatever α it is given (each
layer's weights are computed inside the encoder, and no α of a view can be
put back there), and the adapter declares no 'imposes_attention', so no
analysis imposes one. What runs on a view: every analysis that reads the
model's output and the view's α (gradients at the embeddings, leave-one-out,
Meister's g_ŷ(x)); what needs the states or an imposed α refuses it in one
line.
"""

import dataclasses
from typing import Any, Union

import flax.linen as nn
import jax.numpy as jnp

from attn_jax.models import heads, masks
from attn_jax.models.interface import AttentionModel, InterfaceError

__all__ = ['READINGS', 'SelfAttention', 'encoder_attention', 'read_rows', 'row_matrix', 'word_rows']

READINGS = ('sos', 'received')


def _encoder(model):
  """The model's Transformer encoder, or InterfaceError naming what it has instead."""
  encoder = getattr(getattr(model, 'module', None), 'encoder', None)
  if encoder is None or not hasattr(encoder, 'heads') or not hasattr(encoder, 'layers'):
    raise InterfaceError(f'SelfAttention reads a project Transformer (attn_jax.models.Model with the '
                         f'transformer encoder); {type(encoder or model).__name__} has no self-attention layers')
  return encoder


def encoder_attention(model, params, embedded: jnp.ndarray, lengths: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
  """A project Transformer's states and every self-attention layer's weights.

  flax's attention layers are called with `sow_weights=True` (by
  `nn.intercept_methods`; the encoder is not changed), deterministically.

  Args:
    model: an `attn_jax.models.Model` with the transformer encoder.
    params: its params pytree.
    embedded: [B, L, D] from `model.embed`.
    lengths: [B] int32, each row's length with SOS and EOS.

  Returns:
    (states [B, L, H], `model.encode`'s; weights [K, B, heads, L, L],
    layer 1 first, row q what position q attends to).

  Raises:
    InterfaceError: the model is not a project Transformer.
  """
  encoder = _encoder(model)

  def intercept(next_fun, args, kwargs, context):
    if isinstance(context.module, nn.MultiHeadDotProductAttention) and context.method_name == '__call__':
      kwargs = {**kwargs, 'sow_weights': True}
    return next_fun(*args, **kwargs)

  with nn.intercept_methods(intercept):
    states, sown = model.module.apply({'params': params}, embedded, lengths, True, method='encode',
                                      mutable=['intermediates'])
  sown = sown['intermediates']['encoder']
  return states, jnp.stack([sown[f'layer{k}_attention']['attention_weights'][-1] for k in range(encoder.layers)])


def read_rows(matrix: jnp.ndarray, mask: jnp.ndarray, reading: str) -> jnp.ndarray:
  """One α per document from attention matrices: the query `reading` picks, over the words.

  Args:
    matrix: [B, ..., L, L] attention weights (row q: what position q attends to).
    mask: [B, L] bool, the words (the items α weighs).
    reading: 'sos' (row 0) or 'received' (the mean of the word rows).

  Returns:
    [B, ..., L]: the row restricted to `mask` and renormalised to sum 1
    over it (0 where it has no mass there).

  Raises:
    InterfaceError: `reading` is not one of `READINGS`.
  """
  extra = (1,) * (matrix.ndim - 3)
  keys = mask.reshape(mask.shape[:1] + extra + mask.shape[1:])
  if reading == 'sos':
    row = matrix[..., 0, :]
  elif reading == 'received':
    queries = keys.astype(matrix.dtype)[..., :, None]  # [B, ..., L(q), 1]
    row = jnp.sum(matrix * queries, axis=-2) / jnp.maximum(jnp.sum(queries, axis=-2), 1.0)
  else:
    raise InterfaceError(f'a reading of self-attention is one of {", ".join(READINGS)}, not {reading!r}')
  row = jnp.where(keys, row, 0.0)
  total = jnp.sum(row, axis=-1, keepdims=True)
  return jnp.where(total > 0, row / jnp.where(total > 0, total, 1.0), 0.0)


def word_rows(matrix: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """Every row of attention matrices restricted to the words and renormalised.

  Args:
    matrix: [B, ..., L, L] attention weights (row q: what position q attends to).
    mask: [B, L] bool, the words.

  Returns:
    [B, ..., L, L]: each row 0 off `mask` and summing to 1 over it (0 where
    it has no mass there).
  """
  keys = mask.reshape(mask.shape[:1] + (1,) * (matrix.ndim - 2) + mask.shape[1:])
  rows = jnp.where(keys, matrix, 0.0)
  total = jnp.sum(rows, axis=-1, keepdims=True)
  return jnp.where(total > 0, rows / jnp.where(total > 0, total, 1.0), 0.0)


def row_matrix(layers: jnp.ndarray, layer: Union[int, str]) -> jnp.ndarray:
  """The matrices a `SelfAttention` view reads: one layer's per head, or the rollout.

  Args:
    layers: [K, B, heads, L, L] every layer's weights (`encoder_attention`).
    layer: k (0-based) or 'rollout'.

  Returns:
    [B, heads, L, L] layer k's weights, or [B, 1, L, L] the rollout
    (`heads.rollout_matrix`).
  """
  if layer == 'rollout':
    return heads.rollout_matrix(layers)[:, None]
  return layers[layer]


@dataclasses.dataclass(frozen=True)
class SelfAttention(AttentionModel):
  """A project Transformer's self-attention, as a read-only multi-head model.

  See the module docstring. Declares 'heads' and 'layer_attention' (so
  `heads.head`, `heads.mean_over_heads` and `heads.rollout` take it), not
  'imposes_attention'.

  Attributes:
    base: the project Transformer (`attn_jax.models.Model`).
    layer: k, the 0-based self-attention layer whose weights `attend`
      gives per head; or 'rollout' (one "head": the rollout of every layer).
    reading: 'sos' or 'received' (`READINGS`): which query's row is α.
    num_heads: (property) the encoder's heads; 1 for 'rollout'.
    num_classes: (property) the base's.
    capabilities: (property) {'heads', 'layer_attention'}.
  """
  base: Any
  layer: Union[int, str] = 0
  reading: str = 'sos'

  def __post_init__(self):
    encoder = _encoder(self.base)
    if self.layer != 'rollout' and not (isinstance(self.layer, int) and 0 <= self.layer < encoder.layers):
      raise InterfaceError(f'layer {self.layer!r} of a Transformer with {encoder.layers} self-attention layers '
                           f'(0 .. {encoder.layers - 1}, or \'rollout\')')
    if self.reading not in READINGS:
      raise InterfaceError(f'a reading of self-attention is one of {", ".join(READINGS)}, not {self.reading!r}')

  @property
  def num_heads(self) -> int:
    return 1 if self.layer == 'rollout' else _encoder(self.base).heads

  @property
  def num_classes(self) -> int:
    return self.base.num_classes

  @property
  def capabilities(self) -> frozenset:
    return frozenset({'heads', 'layer_attention'})

  def embed(self, params, tokens):
    return self.base.embed(params, tokens)

  def attention_mask(self, tokens, lengths):
    return self.base.attention_mask(tokens, lengths)

  def encode(self, params, embedded, lengths):
    """{'hidden': the base's states, 'layers': [K, B, heads, L, L], 'alpha': the base's pooling α}."""
    hidden, layers = encoder_attention(self.base, params, embedded, lengths)
    alpha = self.base.attend(params, hidden, masks.word_mask(lengths, embedded.shape[1]))
    return {'hidden': hidden, 'layers': layers, 'alpha': alpha}

  def layer_attention(self, params, states):
    del params
    return states['layers']

  def attend(self, params, states, mask):
    """[B, heads, L]: each head's row (`reading`) of layer `layer` (or the rollout), over `mask`."""
    del params
    return read_rows(row_matrix(states['layers'], self.layer), mask, self.reading)

  def decode(self, params, states, alpha):
    """The base's own output; `alpha` is not read (see the module docstring)."""
    del alpha
    return self.base.decode(params, states['hidden'], states['alpha'])
