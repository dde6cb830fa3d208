"""A model given as its forward function: leave-one-out and the attached gradients, no split.

    model = from_forward(lambda p, t, n: logits(p, t, n))                  # a forward of the token ids
    model = from_forward(forward_of_embeddings, embed=lambda p, t: p['emb'][t])
    model = from_linen_call(module, embedding='embedding')   # a linen module's __call__(tokens, lengths)
    model = from_nnx_call(graphdef, embedding='embedding')   # an NNX module's, split

What each analysis needs (docs/own_model.md): leave-one-out reads only the
output of each one-word variant, so a forward of the ids is enough. The
gradients at the embeddings (J&W's with α attached, gradient × input,
Meister's g_ŷ(x)) need the embeddings as an input: `embed=` beside a
forward of the embeddings, or a module's embedding layer named
(`embedding=`), whose output the forward then replaces (the module's other
layers still read the ids, e.g. for a mask). Everything that imposes α
(J&W's gradient with α detached, permutation, adversaries, S&S's erasure,
Meister's D_ŷ(I)) needs decode with α as an input: the four-function split
(`attn_jax.models.adapters`).

In the interface: `encode` runs the forward and its states are the logits
(and α where `attention=` gives one); `attend` is that α, or uniform over the
mask (no α is read: a baseline, not the model's); `decode` returns the
logits whatever α it is given; no capability is declared.
"""

import dataclasses
import inspect
from typing import Any, Callable, Optional

import jax.numpy as jnp

from attn_jax.models.interface import AttentionModel, Forward, InterfaceError

__all__ = ['ForwardModel', 'from_forward', 'from_linen_call', 'from_nnx_call']


class _Embedded(Exception):
  """Carries the embedding layer's output out of a forward cut short there."""

  def __init__(self, value):
    super().__init__('embedding captured')
    self.value = value


@dataclasses.dataclass(frozen=True)
class _Functions:
  """forward(params, tokens or embedded, lengths), with embed(params, tokens) where given."""
  forward: Callable
  embed_fn: Optional[Callable]

  def logits(self, params, tokens, embedded, lengths):
    if embedded is None and self.embed_fn is not None:
      embedded = self.embed_fn(params, tokens)
    return self.forward(params, tokens if embedded is None else embedded, lengths)

  def embed(self, params, tokens):
    return self.embed_fn(params, tokens)


@dataclasses.dataclass(frozen=True)
class _LinenCall:
  """module.apply({'params': p}, tokens, lengths, method=method), its layer
  `embedding` ('/'-path of submodule names) read or replaced."""
  module: Any
  method: str
  embedding: Optional[str]
  reads_tokens = True  # its other layers read the ids: a forward of embeddings alone cannot run

  def _run(self, params, tokens, lengths, replace):
    import flax.linen as nn  # pylint: disable=g-import-not-at-top
    path, seen, hit = tuple(self.embedding.split('/')), [], []

    def intercept(next_fun, args, kwargs, context):
      names = tuple(context.module.path)
      if context.method_name != '__call__' or names[-len(path):] != path:
        seen.append('/'.join(names))
        return next_fun(*args, **kwargs)
      hit.append(True)
      if replace is None:
        raise _Embedded(next_fun(*args, **kwargs))
      return replace
    with nn.intercept_methods(intercept):
      out = self.module.apply({'params': params}, tokens, lengths, method=self.method)
    if not hit:
      raise InterfaceError(f'from_linen_call: no layer {self.embedding!r} was called by '
                           f'{type(self.module).__name__}.{self.method}; its layers: '
                           f'{", ".join(sorted(set(s for s in seen if s))) or "none"}')
    return out

  def logits(self, params, tokens, embedded, lengths):
    if embedded is None:
      return self.module.apply({'params': params}, tokens, lengths, method=self.method)
    return self._run(params, tokens, lengths, embedded)

  def embed(self, params, tokens):
    try:
      self._run(params, tokens, jnp.full(tokens.shape[:1], tokens.shape[1], jnp.int32), None)
    except _Embedded as got:
      return got.value


@dataclasses.dataclass(frozen=True)
class _Fixed:
  """Stands in for an NNX layer: returns the given value whatever it is called with."""
  value: Any

  def __call__(self, *args, **kwargs):
    return self.value


@dataclasses.dataclass(frozen=True)
class _Capture:
  layer: Any

  def __call__(self, *args, **kwargs):
    raise _Embedded(self.layer(*args, **kwargs))


@dataclasses.dataclass(frozen=True)
class _NnxCall:
  """getattr(nnx.merge(graphdef, state), method)(tokens, lengths), its
  attribute `embedding` ('.'-path) read or replaced."""
  graphdef: Any
  method: str
  embedding: Optional[str]
  reads_tokens = True

  def _module(self, state, layer):
    from flax import nnx  # pylint: disable=g-import-not-at-top
    module = nnx.merge(self.graphdef, state)
    if layer is not None:
      *parents, name = self.embedding.split('.')
      parent = module
      for p in parents:
        parent = getattr(parent, p)
      if not hasattr(parent, name):
        raise InterfaceError(f'from_nnx_call: {type(module).__name__} has no attribute {self.embedding!r} '
                             '(the embedding layer, as a dotted attribute path)')
      setattr(parent, name, layer(getattr(parent, name)))
    return getattr(module, self.method)

  def logits(self, state, tokens, embedded, lengths):
    fixed = None if embedded is None else (lambda _: _Fixed(embedded))
    return self._module(state, fixed)(tokens, lengths)

  def embed(self, state, tokens):
    try:
      self._module(state, _Capture)(tokens, jnp.full(tokens.shape[:1], tokens.shape[1], jnp.int32))
    except _Embedded as got:
      return got.value
    raise InterfaceError(f'from_nnx_call: its layer {self.embedding!r} was not called by {self.method}')


@dataclasses.dataclass(frozen=True)
class ForwardModel(AttentionModel):
  """A model given as its forward function (see the module docstring).

  Hashable (its functions are compared by identity). Declares no
  capability. `embeds` is whether it has an embedding step, which the
  gradient analyses need.

  Attributes:
    source: the forward: `.logits(params, tokens [B, L], embedded [B, L, D]
      or None, lengths [B]) -> logits [B] or [B, C]` and `.embed(params,
      tokens) -> [B, L, D]`.
    embeds: (field) whether `embed` gives float embeddings to differentiate at.
    attention_fn: (params, tokens, lengths) -> α [B, L] read beside the
      output, or None (α uniform over the mask).
    num_classes: 2 (one logit, sigmoid) or C (logits [B, C]).
    mask_fn: (tokens, lengths) -> [B, L] bool; None: the words.
  """
  source: Any
  embeds: bool = False
  attention_fn: Optional[Callable] = None
  num_classes: int = 2
  mask_fn: Optional[Callable] = None

  def why_not(self, capability: str) -> str:
    """Why a model given as its forward lacks `capability` (for a refusal)."""
    return (f'a model given as its forward function ({type(self).__name__}) has no α to impose nor states to '
            f'read: {capability!r} needs the four-function split (aj.adapters.from_functions, from_linen, '
            'from_nnx; docs/own_model.md)')

  def attention_mask(self, tokens, lengths):
    return super().attention_mask(tokens, lengths) if self.mask_fn is None else self.mask_fn(tokens, lengths)

  def embed(self, params, tokens):
    return self.source.embed(params, tokens) if self.embeds else tokens

  def encode(self, params, embedded, lengths):
    if jnp.issubdtype(embedded.dtype, jnp.integer):  # the ids themselves
      return {'logits': self.source.logits(params, embedded, None, lengths), 'alpha': None}
    if getattr(self.source, 'reads_tokens', False):
      raise InterfaceError(f'{type(self.source.module if hasattr(self.source, "module") else self).__name__} '
                           'reads the ids beyond its embeddings: its output at given embeddings is '
                           'logits_at(params, tokens, embedded, lengths)')
    return {'logits': self.source.logits(params, None, embedded, lengths), 'alpha': None}

  def attend(self, params, states, mask):
    if states.get('alpha') is not None:
      return jnp.where(mask, states['alpha'], 0.0)
    weights = mask.astype(jnp.float32)
    return weights / jnp.maximum(jnp.sum(weights, axis=-1, keepdims=True), 1.0)

  def decode(self, params, states, alpha):
    return states['logits']

  def logits_at(self, params, tokens, embedded, lengths):
    """The output with the embeddings replaced by `embedded` (the other layers read `tokens`).

    Args:
      params: the model's params.
      tokens: [B, L] int32; embedded: [B, L, D]; lengths: [B].

    Returns:
      Logits [B] or [B, C].
    """
    return self.source.logits(params, tokens, embedded, lengths)

  def forward(self, params, tokens, lengths) -> Forward:
    """One pass from the ids: `Forward` with the logits, α (read or uniform), scores None."""
    mask = self.attention_mask(tokens, lengths)
    states = {'logits': self.source.logits(params, tokens, None, lengths),
              'alpha': None if self.attention_fn is None else self.attention_fn(params, tokens, lengths)}
    return Forward(states['logits'], self.attend(params, states, mask), None, states, tokens, mask)


def _model(source, embeds, attention, num_classes, attention_mask) -> ForwardModel:
  if not isinstance(num_classes, int) or num_classes < 2:
    raise InterfaceError(f'num_classes is 2 (one logit, sigmoid) or more (softmax), not {num_classes!r}')
  return ForwardModel(source, embeds, attention, num_classes, attention_mask)


def from_forward(forward: Callable, *, embed: Optional[Callable] = None, attention: Optional[Callable] = None,
                 num_classes: int = 2, attention_mask: Optional[Callable] = None) -> ForwardModel:
  """A model given as one function: leave-one-out; with `embed=`, the attached gradients too.

  Args:
    forward: (params, tokens [B, L] int32, lengths [B]) -> logits [B] (two
      classes) or [B, C]; with `embed` given, (params, embedded [B, L, D],
      lengths [B]) -> logits.
    embed: (params, tokens) -> [B, L, D], the embeddings `forward` then reads;
      None: no gradient analysis (they differentiate at the embeddings).
    attention: (params, tokens, lengths) -> α [B, L], an attention read
      beside the output (for τ against it); None: α uniform over the mask.
    num_classes: 2 (one logit) or C (a two-column softmax: `adapters.one_logit`).
    attention_mask: (tokens, lengths) -> [B, L] bool; default the words.

  Returns:
    A hashable `ForwardModel`.

  Raises:
    InterfaceError: `num_classes` is not an int of at least 2.

  Example:
    model = from_forward(lambda p, t, n: module.apply({'params': p}, t, n))
    loo = attn_jax.analysis.leave_one_out(model, params, tokens, lengths).importance
  """
  return _model(_Functions(forward, embed), embed is not None, attention, num_classes, attention_mask)


def from_linen_call(module, *, embedding: Optional[str] = None, method: str = '__call__',
                    attention: Optional[Callable] = None, num_classes: int = 2,
                    attention_mask: Optional[Callable] = None) -> ForwardModel:
  """A linen module's `__call__(tokens, lengths) -> logits` (a compact module, say) as a model.

  Args:
    module: the (unbound) linen module; params are its `variables['params']`.
    embedding: the name of its embedding layer (a submodule: 'Embed_0' in a
      compact module, the attribute name in setup; '/' joins nested names),
      called once on the ids: its output is what the gradients are taken
      at. None: leave-one-out only.
    method: the method giving logits from (tokens, lengths); default '__call__'.
    attention: as `from_forward`.
    num_classes: as `from_forward`.
    attention_mask: as `from_forward`.

  Returns:
    A hashable `ForwardModel`.

  Raises:
    InterfaceError: the module's class has no such method, or (at first
      use) no layer of that name is called.

  Example:
    model = from_linen_call(CompactClassifier(), embedding='Embed_0')
    grads = attn_jax.analysis.gradient_importance(model, params, tokens, lengths, detach_attention=False)
  """
  if not inspect.isroutine(getattr(type(module), method, None)):
    raise InterfaceError(f'from_linen_call: {type(module).__name__} has no method {method!r} giving logits '
                         'from (tokens, lengths)')
  return _model(_LinenCall(module, method, embedding), embedding is not None, attention, num_classes,
                attention_mask)


def from_nnx_call(graphdef, *, embedding: Optional[str] = None, method: str = '__call__',
                  attention: Optional[Callable] = None, num_classes: int = 2,
                  attention_mask: Optional[Callable] = None) -> ForwardModel:
  """An NNX module's `__call__(tokens, lengths) -> logits` as a model: `graphdef, params = nnx.split(module)`.

  Args:
    graphdef: the module's graph definition from `nnx.split`.
    embedding: the attribute holding its embedding layer ('.' joins nested
      attributes), called once on the ids; None: leave-one-out only.
    method: as `from_linen_call`.
    attention: as `from_forward`.
    num_classes: as `from_forward`.
    attention_mask: as `from_forward`.

  Returns:
    A hashable `ForwardModel`.

  Raises:
    InterfaceError: at first use, no attribute of that name, or it is not called.
  """
  return _model(_NnxCall(graphdef, method, embedding), embedding is not None, attention, num_classes,
                attention_mask)

