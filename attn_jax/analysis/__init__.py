"""The analyses of J&W, S&S (§§4–5), W&P's divergences, Meister et al.'s
importance measures (§3.1) and ERASER's erasure metrics (DeYoung et al.
§4.2) as batched, jittable functions.

Each takes a model in the interface `attn_jax.models.interface` states —
embed, encode, the attention under test, decode, with its capabilities
declared: the project's own `Model`, or one's own through
`attn_jax.models.adapters` (docs/own_model.md) — and arrays with a leading
batch axis. What each needs is `needs.NEEDS`; a model without it is refused
in one line, and one whose pieces break the interface on its first batch
too (`contract`). `model` and the keyword options are static under `jax.jit`, e.g.

    loo = jax.jit(leave_one_out, static_argnums=0, static_argnames=('mode', 'docs_per_chunk'))
    result = loo(restored.model, restored.params, tokens, lengths)

Kendall τ runs on the host (scipy) over the arrays these return.

The importance measures ([B, L] scores) are registered in `MEASURES`, one
`Measure` record each (name, label, paper and section, what it needs, its
fast path, `fn`), by the module that computes it; `needs.NEEDS`,
`every_analysis`, the stages and the tables read them from there, and each
is an attribute of this package by its name (`analysis.integrated_gradients`;
one without an import line here is its `Measure.scores`).
"""

import importlib.util

from attn_jax.analysis import contract, needs
from attn_jax.analysis.adversarial_search import Adversaries, adversarial_attention, max_jsd_within
from attn_jax.analysis.attention_focus import Focus, attention_focus
from attn_jax.analysis.divergences import attention_kl, binary_js, jw_jsd, jw_kl, wp_tvd
from attn_jax.analysis.eraser_metrics import ErasureCurves, aopc, erasure_metrics, random_scores
from attn_jax.analysis.every import every_analysis
from attn_jax.analysis.attention_erasure import (FlipPoint, SingleErasure, decision_gradient, erase,
                                       erase_until_flip, prefix_logits, random_rankings, ranking,
                                       removal_comparison, single_weight_erasure)
from attn_jax.analysis.gradients import embedding_gradient, gradient_importance
from attn_jax.analysis.input_times_gradient import gradient_x_input
from attn_jax.analysis.path_attributions import integrated_gradients
from attn_jax.analysis.measure import Measure
from attn_jax.core.registry import MEASURES
from attn_jax.analysis.importance_measures import (attention_deletion, hidden_gradient, input_gradient,
                                          normalise, normalised_entropy, normalised_loo,
                                          state_gradient, state_gradient_entropy)
from attn_jax.analysis.kendall import kendall_tau, summarize
from attn_jax.analysis.loo import LeaveOneOut, leave_one_out
from attn_jax.analysis.attention_permutation import Permutation, permutation_test, permute_attention, word_permutations

__all__ = [
    'Adversaries', 'ErasureCurves', 'FlipPoint', 'Focus', 'LeaveOneOut', 'MEASURES', 'Measure', 'Permutation',
    'SingleErasure', 'adversarial_attention', 'aopc', 'attention_deletion', 'attention_focus', 'attention_kl',
    'binary_js', 'contract', 'decision_gradient', 'embedding_gradient', 'erase', 'erase_until_flip',
    'erasure_metrics', 'every_analysis', 'gradient_importance', 'gradient_x_input', 'integrated_gradients',
    'hidden_gradient', 'input_gradient', 'jw_jsd', 'jw_kl', 'kendall_tau', 'leave_one_out',
    'max_jsd_within', 'needs', 'normalise', 'normalised_entropy', 'normalised_loo', 'permutation_test',
    'prefix_logits',
    'permute_attention', 'random_rankings', 'random_scores', 'ranking', 'removal_comparison',
    'single_weight_erasure', 'state_gradient', 'state_gradient_entropy', 'summarize', 'wp_tvd',
    'word_permutations',
]


def __getattr__(name: str):
  """A registered measure that this file does not import, by its name
  (PEP 562): its `Measure.scores`, so a measure's own module is all it takes."""
  # A submodule not imported yet is left to the import system: reading the
  # registry here would import every module of the package mid-import.
  if name.startswith('_') or importlib.util.find_spec(f'{__name__}.{name}') is not None:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  entry = MEASURES.get(name)
  if entry is None:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  return entry.scores


def __dir__() -> list:
  return sorted({*globals(), *MEASURES.names()})
