"""One α from a multi-head self-attention model: a head, their mean, or the
attention rollout across layers (Abnar & Zuidema 2020).

A model that declares 'heads' attends with several heads at once:
`attend(params, states, mask)` returns α [B, heads, L] (for a Transformer
with a CLS token, say, the final layer's CLS-to-word weights per head) and
`decode(params, states, α)` takes the same [B, heads, L] and imposes it.
Its `attend` reads the weights its `encode` computed (they are part of the
states), so it may be called with an all-True mask; `num_heads` says how
many. The analyses take one α [B, L]; these views give it:

    head(model, k)         α = head k's weights. Imposing α replaces head k's
                           weights and keeps every other head's own: the
                           view declares 'imposes_attention' where the model
                           does, and analyses that impose α (permutation,
                           adversaries, erasure) run per head. So does a
                           gradient with α detached: only head k's weights
                           are constant, the other heads' stay in the graph
                           (`gradient_importance(..., detach_attention=
                           'all_heads')` holds every head's constant). Where
                           the model declares 'scores' (`score` ->
                           [B, heads, L], `project` per head) or
                           'array_states', so does the view: head k's scores,
                           the same states.
    mean_over_heads(model) α = the mean of the heads' weights. Read-only: an
                           α imposed on "the mean" has no one meaning (which
                           heads take what?), so the view declares no
                           'imposes_attention' and the analyses that impose
                           α refuse it in one line.
    rollout(model)         α = attention rollout (Abnar & Zuidema 2020, §3):
                           per layer Â = ½·mean_heads(A) + ½·I (the residual
                           connection), rows renormalised; R = Â_K ··· Â_1;
                           α_t = R[q, t] over the mask, renormalised to sum 1
                           (q the query position, 0: the CLS / SOS token).
                           Needs 'layer_attention'
                           (`layer_attention(params, states)` ->
                           [K, B, heads, L, L], every layer's weights; only
                           row q of the last layer is read). Read-only, as
                           the mean.

`each_head(model)` gives every head's view, for statistics reported per head;
`base_of(view)` the model a view reads. A view's `why_not(capability)` says
why it lacks one its model declares (`interface.require` prints it).
"""

import dataclasses
from typing import Any

import jax.numpy as jnp

from attn_jax.models.interface import AttentionModel, Forward, InterfaceError, require

_MULTI = frozenset({'heads', 'layer_attention', 'pooled_decode'})
_READ_ONLY = _MULTI | {'imposes_attention', 'deletion_states', 'replacement_states', 'variant_windows',
                       'scores', 'array_states'}
# capability -> why a view lacks it though its model declares it.
_WHY = {
    'pooled_decode': 'a head view\'s decode keeps the other heads\' own weights beside Σ α h',
    'heads': 'a view gives one α', 'layer_attention': 'a view gives one α',
    'imposes_attention': 'no one α per head follows from the {kind} of the heads; impose one head '
                         '(attn_jax.models.heads.head) instead',
    'scores': 'the {kind} of the heads\' weights is not one projection of scores; a head view keeps its '
              'head\'s scores',
    'array_states': 'its analyses decode the states with α imposed, which the {kind} cannot be; a head view '
                    'keeps them',
}


def rollout_matrix(layers: jnp.ndarray) -> jnp.ndarray:
  """The attention rollout of every layer's weights (Abnar & Zuidema 2020).

  Args:
    layers: [K, B, heads, L, L] attention weights, layer 1 first (row i:
      what position i attends to).

  Returns:
    [B, L, L] rollout R = Â_K ··· Â_1, Â = ½·mean_heads(A) + ½·I with rows
    renormalised.
  """
  width = layers.shape[-1]
  mixed = 0.5 * jnp.mean(layers, axis=2) + 0.5 * jnp.eye(width, dtype=layers.dtype)[None, None]
  mixed = mixed / jnp.sum(mixed, axis=-1, keepdims=True)
  out = mixed[0]
  for k in range(1, mixed.shape[0]):
    out = jnp.einsum('bij,bjk->bik', mixed[k], out)
  return out


@dataclasses.dataclass(frozen=True)
class HeadView(AttentionModel):
  """A multi-head model seen through one α [B, L] (see the module docstring).

  Built by `head`, `mean_over_heads` and `rollout`. Its `forward` gives the
  model's own output (every head its own α) beside this view's α. Only a
  'head' view can be imposed: its `decode` replaces that head's weights and
  keeps every other head's own; the others' `decode` raises
  `InterfaceError`. Constructing a view raises `InterfaceError` where the
  base lacks the interface or 'heads' or `num_heads`, the kind is not one
  of the three, the index is not a head, or a rollout's base lacks
  'layer_attention'.

  Attributes:
    base: the model that declares 'heads' (and `num_heads`).
    kind: 'head', 'mean' or 'rollout'.
    index: the head (kind 'head'); default 0.
    query: the position whose rollout row is read (kind 'rollout'); default
      0, the CLS / SOS token.
    num_classes: (property) the base's.
    capabilities: (property) the base's, less 'heads', 'layer_attention'
      and 'pooled_decode'; a 'mean' or 'rollout' view also less
      'imposes_attention', 'scores', 'array_states', 'deletion_states',
      'replacement_states' and 'variant_windows' (read-only).
  """
  base: Any
  kind: str
  index: int = 0
  query: int = 0

  def __post_init__(self):
    require(self.base, f'the {self.kind} view of a multi-head model', 'heads', single_attention=False)
    if self.kind not in ('head', 'mean', 'rollout'):
      raise InterfaceError(f"a head view is 'head', 'mean' or 'rollout', not {self.kind!r}")
    heads = getattr(self.base, 'num_heads', None)
    if not heads:
      raise InterfaceError(f'{type(self.base).__name__} declares \'heads\' but not num_heads')
    if self.kind == 'head' and not 0 <= self.index < heads:
      raise InterfaceError(f'head {self.index} of a model with {heads} heads (0 .. {heads - 1})')
    if self.kind == 'rollout':
      require(self.base, 'attention rollout', 'layer_attention', single_attention=False)

  @property
  def num_classes(self) -> int:
    return self.base.num_classes

  @property
  def capabilities(self) -> frozenset:
    base = frozenset(self.base.capabilities)
    return base - (_MULTI if self.kind == 'head' else _READ_ONLY)

  def why_not(self, capability: str):
    """Why this view lacks `capability` though its model declares it; None where the model does not."""
    if capability not in self.base.capabilities or capability not in _WHY:
      return None
    return f'the {self.kind} view does not have it: ' + _WHY[capability].format(kind=self.kind)

  def embed(self, params, tokens):
    return self.base.embed(params, tokens)

  def score(self, params, states):  # 'scores', where the model has it: head `index`'s
    return self.base.score(params, states)[:, self.index]

  def project(self, scores, mask):
    return self.base.project(scores, mask)

  def encode(self, params, embedded, lengths):
    return self.base.encode(params, embedded, lengths)

  def attention_mask(self, tokens, lengths):
    return self.base.attention_mask(tokens, lengths)

  def encode_layers(self, params, embedded, lengths):  # 'layer_states', where the model has it
    return self.base.encode_layers(params, embedded, lengths)

  def attend(self, params, states, mask):
    if self.kind == 'head':
      return self.base.attend(params, states, mask)[:, self.index]
    if self.kind == 'mean':
      return jnp.mean(self.base.attend(params, states, mask), axis=1)
    row = rollout_matrix(self.base.layer_attention(params, states))[:, self.query]  # [B, L]
    row = jnp.where(mask, row, 0.0)
    return row / jnp.maximum(jnp.sum(row, axis=-1, keepdims=True), jnp.finfo(row.dtype).tiny)

  def forward_embedded(self, params, embedded, lengths, mask) -> Forward:
    """The model's own output (every head its own α) beside this view's α.

    Args:
      params: the model's params pytree.
      embedded: [B, L, D].
      lengths: [B] int32, each row's length with SOS and EOS.
      mask: [B, L] bool, the items α weighs.

    Returns:
      `Forward` with the base's logits, this view's α [B, L], its scores
      [B, L] ('scores') or None, the base's states, `embedded` and `mask`.
    """
    states = self.base.encode(params, embedded, lengths)
    logits = self.base.decode(params, states, self.base.attend(params, states, mask))
    return Forward(logits, self.attend(params, states, mask), self.scores_of(params, states), states,
                   embedded, mask)

  def decode(self, params, states, alpha):
    """The base's output with head `index`'s weights replaced by `alpha`.

    Args:
      params: the model's params pytree.
      states: from `encode`.
      alpha: α [B, L] imposed on head `index`; every other head keeps its own.

    Returns:
      Logits [B] or [B, C].

    Raises:
      InterfaceError: the view is the mean or the rollout, which cannot be
        imposed.
    """
    if self.kind != 'head':
      raise InterfaceError(f'the {self.kind} of the heads cannot be imposed: no one α per head follows '
                           'from it; impose one head (attn_jax.models.heads.head) instead')
    own = self.base.attend(params, states, jnp.ones(alpha.shape, bool))  # [B, heads, L]
    return self.base.decode(params, states, own.at[:, self.index].set(alpha))


def head(model, index: int) -> HeadView:
  """Head `index`'s α; imposing α replaces that head's weights only.

  The view declares 'imposes_attention' where the model does, so the
  analyses that impose α (permutation, adversaries, erasure) run per head.

  Args:
    model: a model that declares 'heads' and `num_heads`.
    index: the head, 0 .. num_heads − 1.

  Returns:
    A `HeadView` of kind 'head'.

  Raises:
    InterfaceError: the model lacks the interface, 'heads' or `num_heads`,
      or `index` is not one of its heads.

  Example:
    view = head(transformer, 0)
    fwd = view.forward(params, tokens, lengths)  # fwd.alpha [B, L]: head 0's weights
    loo = attn_jax.analysis.leave_one_out(view, params, tokens, lengths)
  """
  return HeadView(model, 'head', index)


def mean_over_heads(model) -> HeadView:
  """The heads' mean α; read-only (the analyses that impose α refuse it).

  Args:
    model: a model that declares 'heads' and `num_heads`.

  Returns:
    A `HeadView` of kind 'mean', without 'imposes_attention'.

  Raises:
    InterfaceError: the model lacks the interface, 'heads' or `num_heads`.
  """
  return HeadView(model, 'mean')


def rollout(model, query: int = 0) -> HeadView:
  """Attention rollout's α from position `query`; read-only.

  α_t = R[query, t] of `rollout_matrix` over the mask, renormalised to sum 1.

  Args:
    model: a model that declares 'heads', `num_heads` and 'layer_attention'
      (`layer_attention(params, states)` -> [K, B, heads, L, L]).
    query: the query position; 0 (default): the CLS / SOS token.

  Returns:
    A `HeadView` of kind 'rollout', without 'imposes_attention'.

  Raises:
    InterfaceError: the model lacks the interface, 'heads', `num_heads` or
      'layer_attention'.
  """
  return HeadView(model, 'rollout', query=query)


def base_of(model):
  """The model a view reads (`HeadView.base`); any other model itself.

  Args:
    model: a `HeadView` or any model.

  Returns:
    The multi-head model under a view, else `model`.
  """
  return model.base if isinstance(model, HeadView) else model


def each_head(model) -> tuple[HeadView, ...]:
  """Every head's view, for a statistic reported per head.

  Args:
    model: a model that declares 'heads' and `num_heads`.

  Returns:
    `num_heads` `HeadView`s, `head(model, k)` for k = 0 .. num_heads − 1.
  """
  return tuple(head(model, k) for k in range(model.num_heads))
