"""A model of one's own in the analyses' interface (`attn_jax.models.interface`).

Three ways in, each giving an `AttentionModel`:

    model = from_functions(embed, encode, attend, decode, capabilities=...)  # pure functions
    model = from_linen(module, capabilities=...)     # a Flax linen module's methods
    model = from_nnx(graphdef, capabilities=...)     # a Flax NNX module, split

Each function takes the params first, as the interface states:
`embed(params, tokens)`, `encode(params, embedded, lengths)`,
`attend(params, states, mask)`, `decode(params, states, alpha)`; the
methods of a linen or NNX module take the same arguments without `params`.
The methods a declared capability needs are passed by name too
(`score=`, `project=`, `encode_layers=`, `layer_attention=`, ...;
`project(scores, mask)` takes no params). Only what is declared is used:
a model declares 'imposes_attention' by default, because `decode` takes
α as an input; declare 'pooled_decode', 'scores' and the others only where
they hold: the first analysis to read a model checks what it declares on
its first batch (`attn_jax.analysis.contract`) and refuses what does not
hold. Give `forward=` (the model's own output, e.g. a linen module's
'__call__') and that check also compares the pieces with it.

A model given as one forward function, or a compact linen module with only
`__call__`, goes through `from_forward` / `from_linen_call` /
`from_nnx_call` (`attn_jax.models.forward_only`): leave-one-out and the
attached gradients, no α to impose. A two-column softmax output becomes the
one logit a two-class model gives with `one_logit`.
"""

import dataclasses
import inspect
from typing import Any, Callable, Optional, Sequence, Union

from attn_jax.models.forward_only import ForwardModel, from_forward, from_linen_call, from_nnx_call
from attn_jax.models.interface import CAPABILITIES, AttentionModel, InterfaceError

__all__ = ['DEFAULT_CAPABILITIES', 'ForwardModel', 'FunctionModel', 'from_forward', 'from_functions',
           'from_linen', 'from_linen_call', 'from_nnx', 'from_nnx_call', 'one_logit']

DEFAULT_CAPABILITIES = ('imposes_attention',)

# capability -> the methods a model that declares it must have
METHODS = {'scores': ('score', 'project'), 'deletion_states': ('encode_deletions',),
           'replacement_states': ('encode_replacements',), 'variant_windows': ('variant_windows',),
           'layer_states': ('encode_layers',), 'layer_attention': ('layer_attention',)}
_WITHOUT_PARAMS = frozenset({'project'})  # (scores, mask) -> α


@dataclasses.dataclass(frozen=True)
class FunctionModel(AttentionModel):
  """An `AttentionModel` from pure functions, as `from_functions` and the other adapters build it.

  Hashable (its functions are compared by identity), so analyses can jit
  with it static. A capability's extra method (`model.score`, ...) is looked
  up by name in `methods`; a name it lacks raises `AttributeError` naming
  the adapter argument to pass.

  Attributes:
    embed_fn: (params, tokens [B, L] int32) -> embeddings [B, L, D].
    encode_fn: (params, embedded [B, L, D], lengths [B]) -> states (any
      pytree of [B, ...] arrays).
    attend_fn: (params, states, mask [B, L] bool) -> α [B, L].
    decode_fn: (params, states, α [B, L]) -> logits [B] or [B, C].
    num_classes: 2 (default) for one logit (sigmoid), C for logits [B, C].
    capabilities: frozenset of names from `interface.CAPABILITIES`; default
      `DEFAULT_CAPABILITIES` ('imposes_attention').
    mask_fn: (tokens, lengths) -> [B, L] bool; None (default): the words of
      `[SOS] words [EOS]`.
    methods: the capabilities' extra methods as (name, function) pairs.
    num_heads: with 'heads', how many (`attn_jax.models.heads`); else None.
    forward_fn: (params, tokens, lengths) -> logits, the model's own output,
      which `attn_jax.analysis.contract` compares the pieces with; None
      (default): that comparison is skipped.
  """
  embed_fn: Callable
  encode_fn: Callable
  attend_fn: Callable
  decode_fn: Callable
  num_classes: int = 2
  capabilities: frozenset = frozenset(DEFAULT_CAPABILITIES)
  mask_fn: Optional[Callable] = None
  methods: tuple = ()
  num_heads: Optional[int] = None
  forward_fn: Optional[Callable] = None

  def embed(self, params, tokens):
    return self.embed_fn(params, tokens)

  def encode(self, params, embedded, lengths):
    return self.encode_fn(params, embedded, lengths)

  def attend(self, params, states, mask):
    return self.attend_fn(params, states, mask)

  def decode(self, params, states, alpha):
    return self.decode_fn(params, states, alpha)

  def attention_mask(self, tokens, lengths):
    if self.mask_fn is None:
      return super().attention_mask(tokens, lengths)
    return self.mask_fn(tokens, lengths)

  def __getattr__(self, name: str):
    # Only reached for names the class lacks: a capability's extra method.
    for method, fn in object.__getattribute__(self, 'methods'):
      if method == name:
        return fn
    raise AttributeError(f'{type(self).__name__} has no {name!r}; pass it to the adapter '
                         f'({name}=...) with the capability that needs it')


def _checked(capabilities: Sequence[str], methods: dict, num_classes: int) -> frozenset:
  capabilities = frozenset(capabilities)
  unknown = sorted(capabilities - set(CAPABILITIES))
  if unknown:
    raise InterfaceError(f'unknown capabilities {unknown}; the known ones: {", ".join(CAPABILITIES)}')
  for capability in sorted(capabilities):
    missing = [m for m in METHODS.get(capability, ()) if m not in methods]
    if missing:
      raise InterfaceError(f'capability {capability!r} needs the method(s) {", ".join(missing)}: pass '
                           + ', '.join(f'{m}=...' for m in missing))
  if not isinstance(num_classes, int) or num_classes < 2:
    raise InterfaceError(f'num_classes is 2 (one logit, sigmoid) or more (softmax), not {num_classes!r}')
  return capabilities


def from_functions(embed: Callable, encode: Callable, attend: Callable, decode: Callable, *,
                   num_classes: int = 2, capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
                   attention_mask: Optional[Callable] = None, num_heads: Optional[int] = None,
                   forward: Optional[Callable] = None, **methods: Callable) -> FunctionModel:
  """A model from pure functions of (params, ...).

  The four functions take the params first (`attn_jax.models.interface`).
  Only what is declared is used: 'imposes_attention' is declared by default,
  because `decode` takes α as an input; declare the others only where they
  hold.

  Args:
    embed: (params, tokens [B, L] int32) -> embeddings [B, L, D].
    encode: (params, embedded [B, L, D], lengths [B]) -> states (any pytree
      of [B, ...] arrays).
    attend: (params, states, mask [B, L] bool) -> α [B, L].
    decode: (params, states, α [B, L]) -> logits [B] or [B, C].
    num_classes: 2 for one logit (sigmoid), C for logits [B, C].
    capabilities: names from `interface.CAPABILITIES` that hold for it;
      default ('imposes_attention',).
    attention_mask: (tokens, lengths) -> [B, L] bool; default the words of
      `[SOS] words [EOS]`.
    num_heads: with 'heads', how many (`attn_jax.models.heads`).
    forward: (params, tokens [B, L] int32, lengths [B]) -> logits, the
      model's own output; the first analysis checks that decode(encode(embed
      (x)), attend(...)) equals it (`attn_jax.analysis.contract`). Default
      None: not compared.
    **methods: the extra methods the capabilities need (`METHODS`), e.g.
      `score=` (params, states) -> [B, L] and `project=` (scores, mask) -> α
      for 'scores'.

  Returns:
    A hashable `FunctionModel`.

  Raises:
    InterfaceError: an unknown capability, one without its methods,
      `num_classes` not an int of at least 2, or 'heads' without
      `num_heads`.

  Example:
    model = from_functions(embed, encode, attend, decode, score=score, project=projections.softmax,
                           capabilities=('imposes_attention', 'scores'))
    grads = attn_jax.analysis.gradient_importance(model, params, tokens, lengths)  # [B, L]
  """
  caps = _checked(capabilities, methods, num_classes)
  if 'heads' in caps and not num_heads:
    raise InterfaceError("capability 'heads' needs num_heads=H")
  return FunctionModel(embed, encode, attend, decode, num_classes, caps, attention_mask,
                       tuple(sorted(methods.items())), num_heads, forward)


@dataclasses.dataclass(frozen=True)
class _LinenMethod:
  """module.apply({'params': params}, *args, method=name), hashable; with
  'intermediates' mutable, so a method can read what its layers sow (what
  is sown is then dropped)."""
  module: Any
  name: str

  def __call__(self, params, *args):
    out, _ = self.module.apply({'params': params}, *args, method=self.name, mutable=['intermediates'])
    return out


@dataclasses.dataclass(frozen=True)
class _OneLogit:
  """z[..., 1] − z[..., 0] of a function's two-column logits, hashable."""
  fn: Any

  def __call__(self, *args):
    z = self.fn(*args)
    return z[..., 1] - z[..., 0]


def one_logit(fn: Union[str, Callable]) -> _OneLogit:
  """A two-column softmax output [B, 2] as the one logit [B] a two-class model gives.

  σ(z₁ − z₀) is the softmax's P(class 1), so every analysis reads the same ŷ.

  Args:
    fn: a function returning logits [B, 2] (a decode or forward), or a
      module's method name (from_linen / from_nnx resolve it).

  Returns:
    A function with the same arguments returning z₁ − z₀ [B].

  Example:
    model = from_linen(module, decode=one_logit('decode'))
  """
  return _OneLogit(fn)


def _method_check(cls, name: str, role: str, adapter: str, call_adapter: str) -> None:
  """Refuses, in one line, a method name the module's class does not define as a method."""
  if inspect.isroutine(getattr(cls, name, None)):
    return
  methods = sorted(n for n, v in vars(cls).items() if inspect.isfunction(v) and not n.startswith('_'))
  raise InterfaceError(
      f'{adapter}: {cls.__name__} has no method {name!r} for {role}= (an attribute of that name set in '
      f'setup or __init__ is a submodule, not the model\'s own step); its methods: '
      f'{", ".join(methods) or "none but __call__"}: name the one that does it ({role}=\'...\') or give a '
      f'function; a module with only __call__(tokens, lengths) goes through {call_adapter}(...)')


@dataclasses.dataclass(frozen=True)
class _NnxMethod:
  """nnx.merge(graphdef, state).<name>(*args): the module rebuilt from its
  split state inside the traced function, so it stays pure."""
  graphdef: Any
  name: str

  def __call__(self, state, *args):
    from flax import nnx  # pylint: disable=g-import-not-at-top
    return getattr(nnx.merge(self.graphdef, state), self.name)(*args)


def _bind(make: Callable[[str, str], Callable], name_or_fn: Union[str, Callable], role: str) -> Callable:
  if isinstance(name_or_fn, _OneLogit):
    return _OneLogit(_bind(make, name_or_fn.fn, role))
  if isinstance(name_or_fn, str):
    return make(name_or_fn, role)
  if callable(name_or_fn):
    return name_or_fn
  raise InterfaceError(f'{role}= names a method (a string) or is a function, not {type(name_or_fn).__name__}')


def _from_methods(make: Callable[[str, str], Callable], embed, encode, attend, decode, num_classes,
                  capabilities, attention_mask, num_heads, forward, methods) -> FunctionModel:
  bound = {}
  for name, value in methods.items():
    if name in _WITHOUT_PARAMS and isinstance(value, str):
      raise InterfaceError(f'{name}= is a function of (scores, mask) without params, not a method name')
    bound[name] = _bind(make, value, name)
  return from_functions(_bind(make, embed, 'embed'), _bind(make, encode, 'encode'),
                        _bind(make, attend, 'attend'), _bind(make, decode, 'decode'),
                        num_classes=num_classes, capabilities=capabilities,
                        attention_mask=attention_mask, num_heads=num_heads,
                        forward=None if forward is None else _bind(make, forward, 'forward'), **bound)


def from_linen(module, *, embed: Union[str, Callable] = 'embed', encode: Union[str, Callable] = 'encode',
               attend: Union[str, Callable] = 'attend', decode: Union[str, Callable] = 'decode',
               num_classes: int = 2, capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
               attention_mask: Optional[Callable] = None, num_heads: Optional[int] = None,
               forward: Union[str, Callable, None] = None,
               **methods: Union[str, Callable]) -> FunctionModel:
  """A model from a Flax linen module's methods; params are its `variables['params']`.

  Each named method is called as `module.apply({'params': params}, *args,
  method=name, mutable=['intermediates'])` (a method may read what its
  layers sow; the sown values are dropped); it takes the interface's
  arguments without params and runs deterministically (no dropout). Each
  name must be a method of the module's class: a compact module (only
  `__call__`) goes through `from_linen_call`.

  Args:
    module: the (unbound) linen module.
    embed: its method's name (default 'embed'), or a function of
      (params, tokens [B, L] int32) -> [B, L, D].
    encode: its method's name (default 'encode'), or a function of
      (params, embedded, lengths) -> states.
    attend: its method's name (default 'attend'), or a function of
      (params, states, mask) -> α [B, L].
    decode: its method's name (default 'decode'), or a function of
      (params, states, α) -> logits [B] or [B, C].
    num_classes: as `from_functions`.
    capabilities: as `from_functions`.
    attention_mask: as `from_functions`.
    num_heads: as `from_functions`.
    forward: the module's own output (params, tokens, lengths) -> logits
      as a method name (e.g. '__call__') or a function; the first analysis
      compares the pieces with it. Default None: not compared.
    **methods: as `from_functions`, each a method name or a function of
      (params, ...); `project` only as a function of (scores, mask).

  Returns:
    A hashable `FunctionModel`.

  Raises:
    InterfaceError: as `from_functions`; or a method given as neither a
      name nor a function, a name the module's class has no method of (one
      line naming it and the adapter for a compact module), or `project=`
      given as a method name.

  Example:
    model = from_linen(MyClassifier(vocab=100), capabilities=('imposes_attention', 'pooled_decode'))
    loo = attn_jax.analysis.leave_one_out(model, variables['params'], tokens, lengths)
  """
  def make(name, role):
    _method_check(type(module), name, role, 'from_linen', 'aj.adapters.from_linen_call')
    return _LinenMethod(module, name)
  return _from_methods(make, embed, encode, attend, decode, num_classes, capabilities, attention_mask,
                       num_heads, forward, methods)


def from_nnx(graphdef, *, embed: Union[str, Callable] = 'embed', encode: Union[str, Callable] = 'encode',
             attend: Union[str, Callable] = 'attend', decode: Union[str, Callable] = 'decode',
             num_classes: int = 2, capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
             attention_mask: Optional[Callable] = None, num_heads: Optional[int] = None,
             forward: Union[str, Callable, None] = None,
             **methods: Union[str, Callable]) -> FunctionModel:
  """A model from a Flax NNX module: `graphdef, params = nnx.split(module)`.

  The analyses take `params` (the module's state) as the params pytree.
  Each named method is called on `nnx.merge(graphdef, state)`, the module
  rebuilt from its split state inside the traced function, so it stays pure.

  Args:
    graphdef: the module's graph definition from `nnx.split`.
    embed: as `from_linen` (a method name, default 'embed', or a function).
    encode: as `from_linen` (default 'encode').
    attend: as `from_linen` (default 'attend').
    decode: as `from_linen` (default 'decode').
    num_classes: as `from_functions`.
    capabilities: as `from_functions`.
    attention_mask: as `from_functions`.
    num_heads: as `from_functions`.
    forward: as `from_linen` (e.g. '__call__').
    **methods: as `from_linen`.

  Returns:
    A hashable `FunctionModel`.

  Raises:
    InterfaceError: as `from_linen` (a module with only `__call__` goes
      through `from_nnx_call`).

  Example:
    graphdef, params = nnx.split(BagOfWords(rngs=nnx.Rngs(0)))
    model = from_nnx(graphdef, capabilities=('imposes_attention', 'array_states', 'pooled_decode'))
    fwd = model.forward(params, tokens, lengths)
  """
  def make(name, role):
    cls = getattr((getattr(graphdef, 'nodes', None) or [None])[0], 'type', None)  # the module's class
    if cls is not None:
      _method_check(cls, name, role, 'from_nnx', 'aj.adapters.from_nnx_call')
    return _NnxMethod(graphdef, name)
  return _from_methods(make, embed, encode, attend, decode, num_classes, capabilities, attention_mask,
                       num_heads, forward, methods)
