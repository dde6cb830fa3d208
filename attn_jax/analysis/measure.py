"""The importance-measure record: one per measure, registered in
`attn_jax.core.registry.MEASURES` by the module of attn_jax/analysis/ that
computes it (as stages and datasets register themselves).

    INTEGRATED_GRADIENTS = MEASURES.register(Measure(
        name='integrated_gradients', label='integrated gradients', column='integrated gradients',
        paper=None, section='Sundararajan et al. 2017, eq. 3', order=60,
        fn=integrated_gradients, gradient=True, settings={'steps': 50, 'baseline': 'zero'}))

What reads the registry: `attn_jax.analysis` (a registered measure's name is
an attribute of the package), `needs.NEEDS` and `needs.table` (what each
measure needs from a model), `every.every_analysis` (every measure a model
can take), the `gradient`, `importance` and `evidence` stages (the measures
they store, under the names their results always had: `stored_as`; their
keys name any measure added since, `key_items`), the kendall stage's τ
pairs, and the tables and figures that label them (`columns`, `Names`).
Everything here is read when used, not at import, so a measure registered
later (`MEASURES.registered`, a notebook) is seen too. Adding a measure is
its module (the function, its `Measure`) and its test; docs/architecture.md
works two through.
"""

import collections.abc
import dataclasses
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional

import jax.numpy as jnp

from attn_jax.analysis import needs
from attn_jax.core.registry import MEASURES


@dataclasses.dataclass(frozen=True)
class Measure:
  """One importance measure: per-token scores [B, L] of any model in the interface.

  Attributes:
    name: the analysis's name (its function's, as `needs.NEEDS` and
      `every_analysis` key it, and its attribute of `attn_jax.analysis`).
    label: the measure as its paper names it (the `needs.table` row).
    column: its name in tables and figures ('g_ŷ(x)', 'J&W gradient').
    paper: the key of one of the four papers (`attn_jax.papers.PAPERS`), or
      None for a measure from outside them (then `section` cites it).
    section: where it is defined ('§3.1 eq. 4'; 'Sundararajan et al. 2017, eq. 3').
    fn: (model, params, tokens [B, L], lengths [B], **settings) -> [B, L]
      scores, 0 off the words; larger is more important.
    order: its place in `needs.NEEDS`, `every_analysis`, the stages and tables.
    capabilities: `interface.CAPABILITIES` it cannot run without.
    multi_class: whether it handles more than two classes (False: ŷ = σ(z) only).
    fast: capability sets, any of which gives it a fast path.
    check_fast: (model, params, tokens, lengths) -> None: checks the fast path
      the model would take on a real batch (raises `ContractError`); None: none.
    gradient: it differentiates at the embeddings (a model needs `embeds`).
    views: it reads a head view's model (`attn_jax.models.heads`).
    settings: its keyword options and their defaults (`fn(..., **settings)`).
    embedding_gradient: (target, detach_attention, reduction) when the
      `gradient` stage stores it as that reduction of one gradient at the
      embeddings (`gradients.reduce_gradient`, unnormalised; one backward pass
      per detach for all of them); None: the stages call `fn`.
    stored_as: stage -> the array name its scores have in that stage's
      results (the names results were keyed and saved under; they never
      change). A stage stores the measures that name it here.
    columns: array name -> column label, where a committed table names that
      array otherwise than `column`.
    short: its name inside a τ label, τ(α, gradient); None: `column`.
  """
  name: str
  label: str
  column: str
  paper: Optional[str]
  section: str
  fn: Callable[..., jnp.ndarray]
  order: int = 100
  capabilities: tuple = ()
  multi_class: bool = True
  fast: tuple = ()
  check_fast: Optional[Callable[..., None]] = None
  gradient: bool = False
  views: bool = False
  settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  embedding_gradient: Optional[tuple] = None
  stored_as: Mapping[str, str] = dataclasses.field(default_factory=dict)
  columns: Mapping[str, str] = dataclasses.field(default_factory=dict)
  short: Optional[str] = None

  def __post_init__(self):
    # Labels are cells of Markdown tables (`needs.table`, the reports): a '|' would split one.
    for field in ('label', 'column', 'short'):
      if '|' in (getattr(self, field) or ''):
        raise ValueError(f"measure {self.name!r}: its {field} {getattr(self, field)!r} has a '|' "
                         '(it is a Markdown table cell)')

  @property
  def need(self) -> needs.Need:
    """What it needs from a model, as `needs.NEEDS` lists it."""
    return needs.Need(self.label, tuple(self.capabilities), not self.multi_class, tuple(self.fast),
                      self.gradient, self.views)

  def scores(self, model, params, tokens: jnp.ndarray, lengths: jnp.ndarray, **settings) -> jnp.ndarray:
    """The measure's scores, its `settings` overridden by the keywords given.

    Args:
      model: any model in the interface (`attn_jax.models.interface`).
      params: its parameters.
      tokens: [B, L] int32 token ids.
      lengths: [B] int, document lengths with SOS and EOS.
      **settings: options of `fn` (the defaults are `settings`).

    Returns:
      [B, L] scores, 0 off the words.
    """
    return self.fn(model, params, tokens, lengths, **{**self.settings, **settings})

  def column_of(self, array: str) -> str:
    """The column label of one of its stored arrays (`columns`, else `column`)."""
    return self.columns.get(array, self.column)


def stored(stage: str) -> dict:
  """The measures a stage stores, in registry order (read now: a measure
  registered since import is there).

  Args:
    stage: a stage's name ('gradient', 'loo', 'importance', 'evidence').

  Returns:
    {array name in the stage's results: its `Measure`}.
  """
  return {m.stored_as[stage]: m for m in MEASURES.values() if stage in m.stored_as}


def of_array(name: str) -> Optional[Measure]:
  """The measure stored under array `name` by any stage (None: none is).

  Args:
    name: an array name of a stage's results ('gradient_l2', 'g_y_x', 'loo').

  Returns:
    Its `Measure`, or None for arrays that are not a registered measure's ('alpha').
  """
  return next((m for m in MEASURES.values() if name in m.stored_as.values()), None)


def columns(stage: Optional[str] = None) -> dict:
  """Column labels of the measures, by the names results store them under.

  Args:
    stage: only the arrays of this stage; None: every stage's, and each
      measure's own name.

  Returns:
    {array name: its column label} in registry order.
  """
  out = {}
  for m in MEASURES.values():
    if stage is None:
      names = [m.name, *m.stored_as.values()]
    else:
      names = [m.stored_as[stage]] if stage in m.stored_as else []
    for n in names:
      out.setdefault(n, m.column_of(n))
  return out


def key_items(stage: str, keyed: Iterable[str], now: Optional[Iterable[str]] = None) -> dict:
  """What a stage's key adds for the measures it stores.

  A stage's results were first keyed when it stored `keyed`; while it
  stores those, its key is what it was (results saved under it stay found
  and reused). Once a measure is registered for it (or one is dropped), the
  key names them all, so results keyed before are computed anew rather than
  read as if they had the new measure.

  Args:
    stage: the stage's name (`Measure.stored_as`).
    keyed: the array names it stored when its results were first keyed.
    now: the names it stores today, where they are not those naming it in
      `Measure.stored_as` (a stage that scores every registered measure);
      None: those.

  Returns:
    {} or {'measures': [array names, in registry order]}.
  """
  now = list(stored(stage)) if now is None else list(now)
  return {} if now == list(keyed) else {'measures': now}


def computed(stage: str, model, params, tokens: jnp.ndarray, lengths: jnp.ndarray,
             elsewhere: Iterable[str] = ()) -> dict:
  """The scores of the measures a stage stores and computes by calling their
  `fn` (at their default `settings`), where the model has what each needs.

  Args:
    stage: the stage's name (`Measure.stored_as`).
    model: any model in the interface.
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    elsewhere: array names the stage computes otherwise (a shared pass, a
      required stage's results): skipped here.

  Returns:
    {array name: [B, L] scores}; a measure the model cannot take
    (`needs.refusal`) is left out, so its array is absent from the results.
  """
  skip = set(elsewhere)
  return {name: m.scores(model, params, tokens, lengths) for name, m in stored(stage).items()
          if name not in skip and needs.refusal(model, m.name) is None}


class Names(collections.abc.Set):
  """A set of array names read when used: `fixed`, then the arrays of the
  measures `stage` stores. A stage's `positional` names that follow the
  registry without being rebuilt."""

  def __init__(self, stage: str, fixed: Iterable[str] = ()):
    self._stage, self._fixed = stage, tuple(fixed)

  def _names(self) -> tuple:
    return tuple(dict.fromkeys((*self._fixed, *stored(self._stage))))

  def __contains__(self, name) -> bool:
    return name in self._names()

  def __iter__(self) -> Iterator[str]:
    return iter(self._names())

  def __len__(self) -> int:
    return len(self._names())

  def __repr__(self) -> str:
    return f'Names({self._stage!r}: {", ".join(self._names())})'


class Labels(collections.abc.Mapping):
  """{array name: column label} read when used: `before`, the measures
  `stage` stores (`columns(stage)`), then `after`. The label dicts of the
  tables, which follow the registry without being rebuilt."""

  def __init__(self, stage: str, before: Optional[Mapping[str, str]] = None,
               after: Optional[Mapping[str, str]] = None):
    self._stage, self._before, self._after = stage, dict(before or {}), dict(after or {})

  def _all(self) -> dict:
    return {**self._before, **columns(self._stage), **self._after}

  def __getitem__(self, name: str) -> str:
    return self._all()[name]

  def __iter__(self) -> Iterator[str]:
    return iter(self._all())

  def __len__(self) -> int:
    return len(self._all())

  def __repr__(self) -> str:
    return f'Labels({self._stage!r}: {self._all()!r})'
