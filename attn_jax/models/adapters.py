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
they hold (an analysis stage checks a fast path against the exact one on
its first batch, and refuses a declaration that does not hold).
"""

import dataclasses
from typing import Any, Callable, Optional, Sequence, Union

from attn_jax.models.interface import CAPABILITIES, AttentionModel, InterfaceError

DEFAULT_CAPABILITIES = ('imposes_attention',)

# capability -> the methods a model that declares it must have
METHODS = {'scores': ('score', 'project'), 'deletion_states': ('encode_deletions',),
           'replacement_states': ('encode_replacements',), 'variant_windows': ('variant_windows',),
           'layer_states': ('encode_layers',), 'layer_attention': ('layer_attention',)}
_WITHOUT_PARAMS = frozenset({'project'})  # (scores, mask) -> α


@dataclasses.dataclass(frozen=True)
class FunctionModel(AttentionModel):
  """An `AttentionModel` from pure functions; `methods` holds the
  capabilities' extra methods as (name, function) pairs. Hashable (its
  functions are compared by identity), so analyses can jit with it static."""
  embed_fn: Callable
  encode_fn: Callable
  attend_fn: Callable
  decode_fn: Callable
  num_classes: int = 2
  capabilities: frozenset = frozenset(DEFAULT_CAPABILITIES)
  mask_fn: Optional[Callable] = None
  methods: tuple = ()
  num_heads: Optional[int] = None

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
                   **methods: Callable) -> FunctionModel:
  """A model from pure functions of (params, ...).

  Args:
    embed, encode, attend, decode: the four functions, params first
      (`attn_jax.models.interface`).
    num_classes: 2 for one logit (sigmoid), C for logits [B, C].
    capabilities: names from `interface.CAPABILITIES` that hold for it.
    attention_mask: (tokens, lengths) -> [B, L] bool; default the words of
      `[SOS] words [EOS]`.
    num_heads: with 'heads', how many (`attn_jax.models.heads`).
    **methods: the extra methods the capabilities need (`METHODS`).

  Returns:
    A hashable `FunctionModel`.

  Raises:
    InterfaceError: an unknown capability, or one without its methods.
  """
  caps = _checked(capabilities, methods, num_classes)
  if 'heads' in caps and not num_heads:
    raise InterfaceError("capability 'heads' needs num_heads=H")
  return FunctionModel(embed, encode, attend, decode, num_classes, caps, attention_mask,
                       tuple(sorted(methods.items())), num_heads)


@dataclasses.dataclass(frozen=True)
class _LinenMethod:
  """module.apply({'params': params}, *args, method=name), hashable."""
  module: Any
  name: str

  def __call__(self, params, *args):
    return self.module.apply({'params': params}, *args, method=self.name)


@dataclasses.dataclass(frozen=True)
class _NnxMethod:
  """nnx.merge(graphdef, state).<name>(*args): the module rebuilt from its
  split state inside the traced function, so it stays pure."""
  graphdef: Any
  name: str

  def __call__(self, state, *args):
    from flax import nnx  # pylint: disable=g-import-not-at-top
    return getattr(nnx.merge(self.graphdef, state), self.name)(*args)


def _bind(make: Callable[[str], Callable], name_or_fn: Union[str, Callable], role: str) -> Callable:
  if isinstance(name_or_fn, str):
    return make(name_or_fn)
  if callable(name_or_fn):
    return name_or_fn
  raise InterfaceError(f'{role}= names a method (a string) or is a function, not {type(name_or_fn).__name__}')


def _from_methods(make: Callable[[str], Callable], embed, encode, attend, decode, num_classes,
                  capabilities, attention_mask, num_heads, methods) -> FunctionModel:
  bound = {}
  for name, value in methods.items():
    if name in _WITHOUT_PARAMS and isinstance(value, str):
      raise InterfaceError(f'{name}= is a function of (scores, mask) without params, not a method name')
    bound[name] = _bind(make, value, name)
  return from_functions(_bind(make, embed, 'embed'), _bind(make, encode, 'encode'),
                        _bind(make, attend, 'attend'), _bind(make, decode, 'decode'),
                        num_classes=num_classes, capabilities=capabilities,
                        attention_mask=attention_mask, num_heads=num_heads, **bound)


def from_linen(module, *, embed: Union[str, Callable] = 'embed', encode: Union[str, Callable] = 'encode',
               attend: Union[str, Callable] = 'attend', decode: Union[str, Callable] = 'decode',
               num_classes: int = 2, capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
               attention_mask: Optional[Callable] = None, num_heads: Optional[int] = None,
               **methods: Union[str, Callable]) -> FunctionModel:
  """A model from a Flax linen module's methods; params are its
  `variables['params']`.

  Args:
    module: the (unbound) linen module.
    embed, encode, attend, decode: its methods' names (or functions of
      (params, ...)); each method takes the interface's arguments without
      params and runs deterministically (no dropout).
    num_classes, capabilities, attention_mask, num_heads, **methods: as
      `from_functions` (method names or functions).

  Example:
    model = from_linen(MyClassifier(vocab=100), capabilities=('imposes_attention', 'pooled_decode'))
    loo = attn_jax.analysis.leave_one_out(model, variables['params'], tokens, lengths)
  """
  return _from_methods(lambda name: _LinenMethod(module, name), embed, encode, attend, decode,
                       num_classes, capabilities, attention_mask, num_heads, methods)


def from_nnx(graphdef, *, embed: Union[str, Callable] = 'embed', encode: Union[str, Callable] = 'encode',
             attend: Union[str, Callable] = 'attend', decode: Union[str, Callable] = 'decode',
             num_classes: int = 2, capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
             attention_mask: Optional[Callable] = None, num_heads: Optional[int] = None,
             **methods: Union[str, Callable]) -> FunctionModel:
  """A model from a Flax NNX module: `graphdef, params = nnx.split(module)`;
  the analyses take `params` (the module's state) as the params pytree.

  Args:
    graphdef: the module's graph definition from `nnx.split`.
    embed, encode, attend, decode, num_classes, capabilities,
      attention_mask, num_heads, **methods: as `from_linen`.
  """
  return _from_methods(lambda name: _NnxMethod(graphdef, name), embed, encode, attend, decode,
                       num_classes, capabilities, attention_mask, num_heads, methods)
