"""What each analysis needs from a model (`attn_jax.models.interface`), in one table.

Every analysis function checks its entry here before it traces anything
(`check`), so a model without what it needs is refused in one line (a
gradient at the embeddings also needs a model that embeds: not one given as
a forward of the ids alone; a `views` entry reads a head view's model); `table`
prints which analyses run on which models (docs/own_model.md prints it for
its examples). Analyses that only read arrays the model already gave —
Kendall τ (`kendall_tau`), the divergences, `attention_focus`, the
normalisations — need nothing and are not listed. An importance measure's
entry is read off its record (`attn_jax.analysis.measure.Measure`,
registered in `MEASURES`); the other analyses' are `ANALYSES`.
"""

from typing import Iterator, Mapping, NamedTuple, Optional

from attn_jax.core.registry import MEASURES

from attn_jax.models import heads
from attn_jax.models.interface import InterfaceError, require


class Need(NamedTuple):
  label: str                 # the analysis as its paper names it
  capabilities: tuple = ()   # `interface.CAPABILITIES` it cannot run without
  binary: bool = False       # it reads ŷ = σ(z) of a two-class model (J&W's, with more
                             # classes as their QA code has them, are not)
  fast: tuple = ()           # capability sets, any of which gives it a fast path
  gradient: bool = False     # it differentiates at the embeddings (a model needs `embeds`)
  views: bool = False        # it reads a head view's model (its capabilities checked there)


# The analyses that are not importance measures ([B, L] scores): the
# measures' entries come from their `Measure` records (`MEASURES`).
ANALYSES = {
    # Deletes words and re-encodes: the forward alone (a forward-only model runs it), any classes.
    'erasure_metrics': Need("ERASER §4.2 comprehensiveness and sufficiency"),
    'permutation_test': Need("J&W permutation", ('imposes_attention',)),
    'adversarial_attention': Need("J&W adversarial attention", ('imposes_attention',)),
    'single_weight_erasure': Need("S&S §4 single-weight erasure", ('imposes_attention',)),
    'decision_gradient': Need("S&S §5.1 decision gradient ∂d/∂α", ('imposes_attention',)),
    'erase_until_flip': Need("S&S §5 erase until the decision flips", ('imposes_attention',),
                             fast=(('pooled_decode',),)),
    'state_gradient': Need("Meister eq. 5 g_{h_p}(x)", ('layer_states',), gradient=True),
}


class _Needs(Mapping):
  """name -> `Need`: every registered importance measure's (`MEASURES`, in
  its order), then the other analyses' (`ANALYSES`). Read when used, so a
  measure registered later (`MEASURES.registered`) is listed too."""

  def _all(self) -> dict:
    return {**{m.name: m.need for m in MEASURES.values()}, **ANALYSES}

  def __getitem__(self, name: str) -> Need:
    found = self._all()
    if name not in found:
      raise KeyError(f'no analysis {name!r} in needs.NEEDS')
    return found[name]

  def __iter__(self) -> Iterator[str]:
    return iter(self._all())

  def __len__(self) -> int:
    return len(self._all())


NEEDS = _Needs()


def check(model, name: str) -> None:
  """Refuses, in one line (`InterfaceError`), a model analysis `name` cannot run on."""
  need = NEEDS[name]
  if need.views and not isinstance(model, heads.HeadView):
    raise InterfaceError(f'{need.label} is for a view of a multi-head model (attn_jax.models.heads); '
                         f'{type(model).__name__} has one α: gradient_importance is this gradient')
  require(heads.base_of(model) if need.views else model, need.label, *need.capabilities,
          binary=need.binary, single_attention=not need.views)
  if need.gradient and not getattr(model, 'embeds', True):
    raise InterfaceError(f'{need.label} differentiates ŷ at the embeddings; {type(model).__name__} was given '
                         'as a forward of the token ids alone: give embed= with a forward of the embeddings '
                         '(aj.adapters.from_forward), or name its embedding layer (from_linen_call / '
                         'from_nnx_call, embedding=...)')


def refusal(model, name: str) -> Optional[str]:
  """Why analysis `name` refuses `model` (None: it runs)."""
  try:
    check(model, name)
  except InterfaceError as e:
    return str(e)
  return None


def _cell(model, name: str) -> str:
  need = NEEDS[name]
  if refusal(model, name) is None:
    fast = any(all(c in model.capabilities for c in group) for group in need.fast)
    return '✓ fast path' if fast else '✓'
  if need.binary and getattr(model, 'num_classes', 2) != 2:
    return '✗ two classes only'
  if need.views and not isinstance(model, heads.HeadView):
    return '✗ for head views'
  if need.gradient and not getattr(model, 'embeds', True):
    return '✗ needs embed='
  target = heads.base_of(model) if need.views else model
  missing = [c for c in need.capabilities if c not in target.capabilities]
  return '✗ needs ' + ', '.join(missing) if missing else '✗ one α per item needed'


def table(models: dict) -> str:
  """A Markdown table: one row per analysis, one column per model ({name:
  model}); ✓ where it runs, ✗ and what is missing where it is refused."""
  lines = ['| analysis | ' + ' | '.join(models) + ' |', '|---|' + '---|' * len(models)]
  for name, need in NEEDS.items():
    lines.append(f'| {need.label} (`{name}`) | ' + ' | '.join(_cell(m, name) for m in models.values()) + ' |')
  return '\n'.join(lines)
