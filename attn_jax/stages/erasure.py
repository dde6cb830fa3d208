"""Stage `erasure`: Serrano & Smith's attention erasure tests (§§4–5)."""

import jax
import numpy as np

from attn_jax.analysis import attention_erasure as er
from attn_jax.plots import analysis_figures
from attn_jax.core.registry import STAGES, Section
from attn_jax.models.model import output_probs
from attn_jax.stages.stage import Stage

SINGLE_KEY_STREAM, RANDOM_KEY_STREAM = 1, 2
# S&S App. A.3, Figures 12–13: the single-weight test rerun on the top item
# of another ranking, against a random other item drawn afresh.
OTHER_TOPS = {'gradient': 3, 'gradient_x_attention': 4}  # ranking -> its key stream
# The deterministic rankings (S&S §5.1); `random` (several orders) comes on top.
RANKINGS = ('attention', 'attention_ascending', 'gradient', 'gradient_x_attention')
# (A, B) pairs for S&S's per-instance efficiency comparison: does B need fewer items?
COMPARISONS = (('attention', 'gradient'), ('attention', 'gradient_x_attention'),
               ('attention', 'random'), ('random', 'attention'))


def _forward_fn(model):
  def fn(params, tokens, lengths):
    fwd = model.forward(params, tokens, lengths)
    return fwd.hidden, fwd.alpha, fwd.mask, fwd.logits
  return fn


def _tests_fn(model, random_orders, random_item):
  """Every test from the final attention layer's inputs (hidden [B, L, H], α
  and mask [B, L], logits): only the decoder re-runs."""
  def fn(params, forward, single_keys, random_keys, other_keys):
    h, alpha, mask, logits = forward
    single = er.single_weight_erasure(model, params, h, alpha, mask, single_keys, random_item)
    grad = er.decision_gradient(model, params, h, alpha)
    scores = {'attention': alpha, 'attention_ascending': -alpha, 'gradient': grad,
              'gradient_x_attention': grad * alpha}
    out = {f'single_{k}': v for k, v in single._asdict().items()}
    for name, keys in zip(OTHER_TOPS, other_keys):
      other = er.single_weight_erasure(model, params, h, alpha, mask, keys, random_item,
                                       top=er.top_item(scores[name], mask))
      out.update({f'single_{name}_{k}': v for k, v in other._asdict().items()})
    out.update(probs=output_probs(logits), decision_gradient=grad)
    for name in RANKINGS:
      flip = er.erase_until_flip(model, params, h, alpha, mask, er.ranking(scores[name], mask))
      out.update({f'{name}_{k}': v for k, v in flip._asdict().items()})
    orders = er.random_rankings(random_keys, mask, random_orders)  # [B, R, L]
    flips = jax.vmap(lambda o: er.erase_until_flip(model, params, h, alpha, mask, o),
                     in_axes=1, out_axes=1)(orders)
    out.update({f'random_{k}': v for k, v in flips._asdict().items()})
    return out
  return fn


def _compute(ctx, batch):
  s = ctx.settings.erasure
  tests = lambda: _tests_fn(ctx.model, s.random_orders, s.random_item)
  keys = (ctx.keys(SINGLE_KEY_STREAM, batch.index), ctx.keys(RANDOM_KEY_STREAM, batch.index),
          tuple(ctx.keys(stream, batch.index) for stream in OTHER_TOPS.values()))
  if ctx.model.hierarchical:
    # A HAN's items are its sentences: the tests' program (the large one)
    # depends on [B, S] alone, its forward pass on [B, S, W]. Two programs
    # compile the tests once per (B, S), a third to a seventh as often as
    # per (B, S, W) on S&S's data, where compiling was 96 % of the stage.
    forward = ctx.jit('erasure_forward', lambda: _forward_fn(ctx.model))(
        ctx.params, batch.tokens, batch.lengths)
    return ctx.jit('erasure_tests', tests)(ctx.params, forward, *keys)

  def whole():
    forward_fn, tests_fn = _forward_fn(ctx.model), tests()
    return lambda params, tokens, lengths, *k: tests_fn(params, forward_fn(params, tokens, lengths), *k)
  return ctx.jit('erasure', whole)(ctx.params, batch.tokens, batch.lengths, *keys)


def _check(ctx, batch):
  """The pooled prefix path against decoding the real states, on this batch."""
  if er.resolve_path(ctx.model) != 'pooled':
    return
  # On the host: over several devices the forward's rows are split, the params are not.
  hidden, alpha, mask, _ = jax.device_get(ctx.jit('erasure_forward', lambda: _forward_fn(ctx.model))(
      ctx.params, batch.tokens, batch.lengths))
  er.check_fast_path(ctx.model, ctx.params, hidden, alpha, mask)


def _single_summary(arrays, usable, prefix: str = 'single_') -> dict:
  top, other = arrays[f'{prefix}flip_top'][usable], arrays[f'{prefix}flip_other'][usable]
  pct = lambda x: float(100 * np.mean(x)) if len(x) else None
  delta_js = arrays[f'{prefix}js_top'][usable] - arrays[f'{prefix}js_other'][usable]
  delta_alpha = arrays[f'{prefix}delta_alpha'][usable]
  # S&S Figure 4: per Δα bin, how many instances and how many with ΔJS < 0.
  edges = np.linspace(0.0, 1.0, 11)
  bins = np.clip(np.digitize(delta_alpha, edges[1:-1]), 0, len(edges) - 2)
  by_bin = [{'delta_alpha': [float(edges[b]), float(edges[b + 1])], 'n': int(np.sum(bins == b)),
             'delta_js_negative': int(np.sum((bins == b) & (delta_js < 0)))} for b in range(len(edges) - 1)]
  return {'n': int(usable.sum()), 'delta_js_negative_by_delta_alpha': by_bin,
          'percent_both_flip': pct(top & other), 'percent_top_only': pct(top & ~other),
          'percent_other_only': pct(~top & other), 'percent_neither': pct(~top & ~other),
          'fraction_delta_js_negative': float(np.mean(delta_js < 0)) if len(delta_js) else None}


def _removal_summary(fraction, mass) -> dict:
  flipped = fraction >= 0
  f, m = fraction[flipped], mass[flipped]
  if not len(f):
    return {'n_flipped': 0, 'n_never_flipped': int(np.sum(~flipped))}
  return {'n_flipped': int(flipped.sum()), 'n_never_flipped': int(np.sum(~flipped)),
          'mean_fraction_removed': float(np.mean(f)), 'median_fraction_removed': float(np.median(f)),
          # Box-plot statistics of S&S's Figures 5-6 (whiskers at the 5th and 95th percentiles).
          'fraction_removed_percentiles': {str(q): float(np.percentile(f, q))
                                           for q in (5, 25, 50, 75, 95)},
          'fraction_removed_above_0.5': float(np.mean(f > 0.5)),
          'mean_attention_mass_removed': float(np.mean(m)),
          # S&S App. A.3, Figure 11: the original attention mass zeroed by the first flip.
          'median_attention_mass_removed': float(np.median(m)),
          'attention_mass_percentiles': {str(q): float(np.percentile(m, q)) for q in (5, 25, 50, 75, 95)}}


def _finalize(ctx, arrays, inputs):
  n = arrays['single_num_items']
  usable = n > 1  # S&S exclude single-item documents from every test
  probs = arrays['probs']
  arrays['predicted'] = (np.argmax(probs, axis=-1) if probs.ndim == 2 else probs > 0.5).astype(np.int32)
  summary = {'random_item': ctx.settings.erasure.random_item,
             'single_weight': _single_summary(arrays, usable), 'removal': {}, 'comparisons': {},
             'single_weight_other_tops': {name: _single_summary(arrays, usable, f'single_{name}_')
                                          for name in OTHER_TOPS}}
  for name in RANKINGS:
    summary['removal'][name] = _removal_summary(arrays[f'{name}_fraction'][usable],
                                                arrays[f'{name}_mass'][usable])
  summary['removal']['random'] = _removal_summary(  # S&S pool the random orders
      arrays['random_fraction'][usable].ravel(), arrays['random_mass'][usable].ravel())
  items = {name: arrays[f'{name}_items'] for name in RANKINGS}
  items['random'] = arrays['random_items'][:, 0]
  for a, b in COMPARISONS:
    summary['comparisons'][f'{b}_vs_{a}'] = er.removal_comparison(items[a], items[b], n)
  return arrays, summary


def _figures(arrays, inputs, summary, directory):
  usable = arrays['single_num_items'] > 1
  fractions = {name: arrays[f'{name}_fraction'][usable] for name in RANKINGS}
  fractions['random'] = arrays['random_fraction'][usable].ravel()
  return (analysis_figures.delta_js_scatter(arrays, usable, directory)
          + analysis_figures.fraction_removed_boxes(fractions, directory))


ERASURE = STAGES.register(Stage(
    name='erasure', paper='ss', order=70, version=2,  # 2: Figures 11–13's numbers
    compute=_compute, finalize=_finalize, figures=_figures, check=_check,
    positional=frozenset({'decision_gradient'}), any_model=True,
    cost=lambda batch: float(np.sum(batch.index >= 0)) * batch.tokens.shape[1],
    section=Section(
        defaults=lambda dataset, encoder, variant: dict(random_orders=2 if variant == 'smoke' else 5,
                                                        random_item='paper'),
        choices={'random_item': ('paper', 'code')},
        check=lambda s, cfg: None if s.random_orders >= 1 else 'analysis.erasure.random_orders must be >= 1')))
