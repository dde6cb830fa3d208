"""The importance-measure record: one per measure, registered in
`attn_jax.core.registry.MEASURES` by the module of attn_jax/analysis/ that
computes it (as stages and datasets register themselves).

    INTEGRATED_GRADIENTS = MEASURES.register(Measure(
        name='integrated_gradients', label='integrated gradients', column='IG',
        paper=None, section='Sundararajan et al. 2017, eq. 3', order=60,
        fn=integrated_gradients, gradient=True, settings={'steps': 50, 'baseline': 'zero'}))

What reads the registry: `needs.NEEDS` (what each measure needs from a
model), `every.every_analysis` (every measure a model can take), the
`gradient`, `importance` and `evidence` stages (the measures they store,
under the names their results always had: `stored_as`), and the tables and
figures that label them (`columns`). Adding a measure is its module (the
function, its `Measure`) and its test; docs/architecture.md works one through.
"""

import dataclasses
from typing import Any, Callable, Mapping, Optional

import jax.numpy as jnp

from attn_jax.analysis import needs
from attn_jax.core.registry import MEASURES


@dataclasses.dataclass(frozen=True)
class Measure:
  """One importance measure: per-token scores [B, L] of any model in the interface.

  Attributes:
    name: the analysis's name (its function's, as `needs.NEEDS` and
      `every_analysis` key it).
    label: the measure as its paper names it (the `needs.table` row).
    column: its short name in tables and figures ('g_ŷ(x)', 'J&W gradient').
    paper: the key of one of the four papers (`attn_jax.papers.PAPERS`), or
      None for a measure from outside them (then `section` cites it).
    section: where it is defined ('§3.1 eq. 4'; 'Sundararajan et al. 2017, eq. 3').
    fn: (model, params, tokens [B, L], lengths [B], **settings) -> [B, L]
      scores, 0 off the words; larger is more important.
    order: its place in tables and in `every_analysis`.
    capabilities: `interface.CAPABILITIES` it cannot run without.
    multi_class: whether it handles more than two classes (False: ŷ = σ(z) only).
    fast: capability sets, any of which gives it a fast path.
    check_fast: (model, params, tokens, lengths) -> None: checks the fast path
      the model would take on a real batch (raises `ContractError`); None: none.
    gradient: it differentiates at the embeddings (a model needs `embeds`).
    views: it reads a head view's model (`attn_jax.models.heads`).
    settings: its keyword options and their defaults (`fn(..., **settings)`).
    embedding_gradient: (target, detach_attention, reduction) when it is a
      reduction of one gradient at the embeddings (`gradients.reduce_gradient`):
      the `gradient` stage computes those together, one pass per detach.
    stored_as: stage -> the array name its scores have in that stage's results
      (the names results were keyed and saved under; they never change).
    columns: array name -> column label, where a committed table names that
      array otherwise than `column`.
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


def stored(stage: str) -> dict:
  """The measures a stage stores, in registry order.

  Args:
    stage: a stage's name ('gradient', 'importance', 'evidence', 'loo').

  Returns:
    {array name in the stage's results: its `Measure`}.
  """
  return {m.stored_as[stage]: m for m in MEASURES.values() if stage in m.stored_as}


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
    names = [m.stored_as[stage]] if stage is not None and stage in m.stored_as else (
        [] if stage is not None else [m.name, *m.stored_as.values()])
    for n in names:
      out.setdefault(n, m.columns.get(n, m.column))
  return out
