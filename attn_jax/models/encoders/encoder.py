"""What an encoder family declares when it registers (`ENCODERS.register`).

    BILSTM = ENCODERS.register(Encoder(
        name='bilstm', paper='jw', order=10, module=BiLSTMEncoder, build=_build,
        keys=lambda dataset, variant: {'lstm_unroll': 1}, deletion_states=..., ...))

Shapes: the fast paths take one document, `embedded` [L, D] and its
`length` (a scalar, SOS and EOS counted), and return the encoder states of
its L − 2 one-word variants, [L − 2, L, H] (`Model.encode_deletions`).
"""

import dataclasses
from typing import Any, Callable, Mapping, Optional

import flax.linen as nn

from attn_jax.core.registry import ENCODERS


@dataclasses.dataclass(frozen=True)
class Encoder:
  """An encoder family.

  name, paper, order: its `model.encoder` value, the paper it comes from
    (`attn_jax.papers`), its place in listings.
  module: its flax module class (how a built model's encoder is recognised).
  build: (config.model, items) -> the module; `items` is 'words' (J&W's
    layout: SOS and EOS around the words) or 'all' (a plain sequence: the
    sentences and documents inside S&S's HAN).
  in_han: whether S&S's HAN may be built from it (`items='all'`).
  keys: (dataset, variant) -> its own `config.model` keys and their defaults (every
    config has them, so any config can switch encoders on the command line).
  choices: its keys with a closed set of values (`model.<key>` -> values).
  added: its keys added after results were first keyed -> the value that
    computes what ran before; such a key is left out of a result's key at
    that value, and always for the other families' models (it computes
    nothing for them), so results made before it existed stay valid.
  recipe: (config, dataset, variant) -> None: sets the shared keys this
    family's recipe changes when it is chosen (learning rate, dropout, ...).
  analyses: the paper whose stages its configs run by default.
  output_size: config.model -> the width H of its states.
  check: config.model -> a message if its keys are out of range (called for
    every registered family, chosen or not), else None.
  deletion_states, replacement_states: (module, encoder params, embedded
    [L, D], length) -> [L − 2, L, H], or None where the family has no fast path.
  variant_windows: (module, encoder params, embedded, mode) -> (states
    [L − 2, P, H], positions [L − 2, P], radius R) where a variant changes
    only the states within R of its word, or None.
  fast: module -> whether this built module may use the fast paths.
  """
  name: str
  paper: str
  order: int
  module: type
  build: Callable[[Any, str], nn.Module]
  in_han: bool = False
  keys: Callable[[str, str], Mapping[str, Any]] = lambda dataset, variant: {}
  choices: Mapping[str, tuple] = dataclasses.field(default_factory=dict)
  added: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  recipe: Callable[[Any, str, str], None] = lambda cfg, dataset, variant: None
  analyses: str = 'jw'
  output_size: Callable[[Any], int] = lambda m: m.hidden_dim
  check: Callable[[Any], Optional[str]] = lambda m: None
  deletion_states: Optional[Callable] = None
  replacement_states: Optional[Callable] = None
  variant_windows: Optional[Callable] = None
  fast: Callable[[nn.Module], bool] = lambda module: True


def of_module(module: nn.Module) -> Optional[Encoder]:
  """The registered family whose module `module` is (None: e.g. a HAN's
  `HierarchicalEncoder`, which wraps two of them)."""
  return next((e for e in ENCODERS.values() if type(module) is e.module), None)  # pylint: disable=unidiomatic-typecheck


def fast_path(module: nn.Module, hook: str) -> Optional[Callable]:
  """The family's `hook` ('deletion_states', 'replacement_states',
  'variant_windows') for this built module, or None."""
  entry = of_module(module)
  if entry is None or getattr(entry, hook) is None or not entry.fast(module):
    return None
  return getattr(entry, hook)
