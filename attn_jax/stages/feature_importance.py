"""Stages `gradient`, `loo` and `kendall`: J&W's feature-importance agreement (J&W Table 2)."""

from typing import Optional

import jax
import numpy as np

from attn_jax.analysis import gradients as gi, kendall, loo as loo_lib, measure, statistics
from attn_jax.plots import analysis_figures
from attn_jax.core.registry import STAGES, Section
from attn_jax.stages.stage import Stage, class_groups, predicted_classes

# The measures the `gradient` stage stores are the registered ones that name
# it (`Measure.stored_as['gradient']`); its results were first keyed with
# these four: J&W's `gradient`, its logit and α-attached variants, and
# `gradient_l2`, Meister et al.'s g_ŷ(x) of eq. 4 unnormalised (attention in
# the graph). A measure registered for it since is in its key (`Stage.keyed_measures`).
GRADIENT_KEYED = ('gradient', 'gradient_logit', 'gradient_attached', 'gradient_l2')
# The τ sides that are not a registered measure's array.
ATTENTION = 'alpha'
_SHORT = {ATTENTION: 'α'}


def gradient_variants() -> dict:
  """{array name: (target, detach_attention, reduction)}: the measures the
  `gradient` stage computes from one gradient at the embeddings per detach
  (`Measure.embedding_gradient`), read from the registry now."""
  return {name: m.embedding_gradient for name, m in measure.stored('gradient').items()
          if m.embedding_gradient is not None}


def gradient_measures() -> tuple:
  """The array names of every measure the `gradient` stage stores, registry order."""
  return tuple(measure.stored('gradient'))


GRADIENT_VARIANTS = gradient_variants()  # at import: the four of GRADIENT_KEYED


def _jw_pairs() -> dict:
  """J&W's three τ (Table 2 / CorrStats, `PlottingBC.plot_correlation_between_grad_and_loo`;
  `ag` is α~LOO, `al` α~gradient), named from the arrays of J&W's gradient
  and leave-one-out records: {'attention_gradient': ('alpha', 'gradient'), ...}."""
  gradient, loo = gi.GRADIENT.stored_as['gradient'], loo_lib.LEAVE_ONE_OUT.stored_as['loo']
  return {f'attention_{gradient}': (ATTENTION, gradient), f'attention_{loo}': (ATTENTION, loo),
          f'{gradient}_{loo}': (gradient, loo)}


# pair name (the results' `tau_<pair>`) -> the two arrays it ranks.
PAIRS = _jw_pairs()


def tau_label(pair: str, short: Optional[dict] = None) -> str:
  """'τ(α, gradient)' for a pair of `PAIRS` (or 'attention_<array>'), its
  sides named by their measures' records (`Measure.short`, else `column`).

  Args:
    pair: a pair name ('attention_gradient', 'gradient_loo', 'attention_gradient_l2').
    short: {side's name in the label: the name to print instead} ({'gradient': 'grad'}).

  Returns:
    The τ's label.
  """
  a, b = PAIRS[pair] if pair in PAIRS else (ATTENTION, pair.removeprefix('attention_'))

  def name(side):
    found = measure.of_array(side)
    text = _SHORT.get(side) or ((found.short or found.column_of(side)) if found is not None else side)
    return (short or {}).get(text, text)

  return f'τ({name(a)}, {name(b)})'


def _gradient_fn(model, variants: dict):
  def fn(params, tokens, lengths):
    fwd = model.forward(params, tokens, lengths)
    probs = model.probabilities(fwd.logits)
    out = {'alpha': fwd.alpha, 'probs': probs}
    multi_class = model.num_classes > 2
    for detach in (True, False):
      # Binary: one pass, the logit's; ∂σ/∂z = ŷ(1 − ŷ) ≥ 0 scales it to the
      # probability's. More classes: the predicted class's probability and
      # logit, one pass each.
      grads = {target: gi.embedding_gradient(model, params, tokens, lengths, target=target,
                                             detach_attention=detach)
               for target in (('prob', 'logit') if multi_class else ('logit',))}
      for name, (target, variant_detach, reduction) in variants.items():
        if variant_detach == detach:
          if multi_class:
            out[name] = gi.reduce_gradient(*grads[target], lengths, reduction)
          else:
            scores = gi.reduce_gradient(*grads['logit'], lengths, reduction)
            out[name] = scores * (probs * (1.0 - probs))[:, None] if target == 'prob' else scores
    # Any other measure registered for the stage: its own function.
    out.update(measure.computed('gradient', model, params, tokens, lengths, elsewhere=variants))
    return out
  return fn


def _compute_gradient(ctx, batch):
  variants = gradient_variants()
  # The measures are in the program's name: one registered since is compiled in, not reused without.
  fn = ctx.jit('gradient:' + ','.join(gradient_measures()), lambda: _gradient_fn(ctx.model, variants))
  return fn(ctx.params, batch.tokens, batch.lengths)


def _finalize_gradient(ctx, arrays, inputs):
  arrays['lengths'] = ctx.split.lengths.astype(np.int32)
  summary = {'variants': {k: dict(zip(('target', 'detach_attention', 'reduction'), v))
                          for k, v in gradient_variants().items()}}
  others = [n for n in gradient_measures() if n not in summary['variants']]
  if others:  # the registered measures computed by their own function (none of the four first keyed)
    summary['measures'] = {n: {'measure': measure.stored('gradient')[n].name, 'stored': n in arrays}
                           for n in others}
  return arrays, summary


# The default budget for a chunk's temporary memory. At 4 GiB, with chunks
# sized by an estimate that undercounted, the QA study's process grew to
# 15.8 GB resident on bAbI 3's BiLSTM (2026-11-28) and was killed for memory
# beside other jobs on a 24 GB machine.
LOO_CHUNK_BYTES = 2**30
# Below this many times its variant rows' states, a chunk is not measured,
# so short documents are not compiled twice. The ratio of XLA's temporary
# bytes to those states on a model's own path was 3-4 for the families'
# variant-state paths and up to 9 for the Transformer's re-encoding at the
# J&W recipe's sizes (tests/stages/test_loo_chunks.py checks the bound).
UNMEASURED_ALLOWANCE = 32
# Variant rows a chunk re-encodes when its rows' memory is measured.
_PROBE_ROWS = 8


def _loo_fn(ctx, docs: int, rows: Optional[int]):
  """The jitted chunk program (`docs` documents, or one document's variant
  rows `rows` at a time, re-encoded) and its `ctx.jit` name."""
  s = ctx.settings.loo
  name = f'loo-{docs}-{rows}'
  return name, lambda: lambda params, tokens, lengths: loo_lib.leave_one_out(
      ctx.model, params, tokens, lengths, mode=s.mode, docs_per_chunk=docs, reencode=rows is not None,
      rows_per_chunk=rows)


def loo_chunks(ctx, batch) -> tuple[int, Optional[int]]:
  """(documents per chunk, variant rows per chunk or None) for a batch, so
  that a chunk's temporary memory fits in `analysis.loo.max_chunk_bytes`.

  Up to `docs_per_chunk` documents where even `UNMEASURED_ALLOWANCE` times
  their variant rows' states fits. Otherwise the chunk program is compiled
  and XLA's memory analysis read (`AnalysisContext.temp_bytes`): as many
  documents as fit, by the model's own path; where one document alone does
  not fit, its variant rows re-encoded a chunk at a time. Without a memory
  analysis (a batch split over devices), the allowance decides.
  """
  s = ctx.settings.loo
  width, budget = batch.tokens.shape[1], s.get('max_chunk_bytes')
  if not budget or loo_lib.fast_path(ctx.model, s.mode) == 'windows':
    return s.docs_per_chunk, None  # the windowed path holds O(L·H) a document
  hidden = jax.eval_shape(lambda p, t, n: ctx.model.encode(p, ctx.model.embed(p, t), n), ctx.params,
                          jax.ShapeDtypeStruct((1, width), np.int32), jax.ShapeDtypeStruct((1,), np.int32))
  # One variant row's encoded state: every leaf (a QA model's carries its query too).
  row_bytes = sum(int(np.prod(x.shape[1:])) * x.dtype.itemsize for x in jax.tree.leaves(hidden))
  document_bytes = row_bytes * max(width - 2, 1)
  if UNMEASURED_ALLOWANCE * document_bytes * s.docs_per_chunk <= budget:
    return s.docs_per_chunk, None
  measure = lambda docs, rows: ctx.temp_bytes(*_loo_fn(ctx, docs, rows), batch.tokens, batch.lengths)
  one = measure(1, None)
  if one is None:  # no memory analysis: the allowance
    docs = int(min(s.docs_per_chunk, budget // (UNMEASURED_ALLOWANCE * document_bytes)))
    return (docs, None) if docs >= 1 else (1, int(max(1, budget // (UNMEASURED_ALLOWANCE * row_bytes))))
  if one <= budget:
    docs = int(min(s.docs_per_chunk, budget // max(one, 1)))
    while docs > 1 and measure(docs, None) > budget:  # the chosen program is compiled anyway
      docs -= 1
    return docs, None
  per_row = measure(1, _PROBE_ROWS) / _PROBE_ROWS  # its fixed part counted per row: conservative
  return 1, int(max(1, budget // max(per_row, 1)))


def _compute_loo(ctx, batch):
  docs, rows = loo_chunks(ctx, batch)
  fn = ctx.jit(*_loo_fn(ctx, docs, rows))
  result = fn(ctx.params, batch.tokens, batch.lengths)
  without = result.probs_without
  if without.ndim == 3:  # [B, L, C] -> [B, C, L]: a result's positions are its last axis
    without = without.transpose(0, 2, 1)
  return {'loo': result.importance, 'probs_without': without, 'probs': result.probs}


def _check_loo(ctx, batch):
  loo_lib.check_fast_path(ctx.model, ctx.params, batch.tokens, batch.lengths, mode=ctx.settings.loo.mode)


def _finalize_loo(ctx, arrays, inputs):
  arrays['lengths'] = ctx.split.lengths.astype(np.int32)
  words = ctx.split.lengths - 2
  mean_change = arrays['loo'].sum(axis=1) / words
  return arrays, {'mode': ctx.settings.loo.mode,
                  'mean_output_change_per_word': float(np.mean(mean_change))}


def _finalize_kendall(ctx, arrays, inputs):
  grad, loo = inputs['gradient'], inputs['loo']
  lengths = grad['lengths']
  measures = [k for k in gradient_measures() if k in grad]  # a measure the model refused is absent
  scores = {ATTENTION: grad[ATTENTION], 'loo': loo['loo'], **{k: grad[k] for k in measures}}
  predicted = predicted_classes(grad['probs'])
  groups = class_groups(predicted, grad['probs'])
  pairs = dict(PAIRS)  # J&W's three, then α with every other measure of the gradient stage
  pairs.update({f'attention_{k}': (ATTENTION, k) for k in measures if f'attention_{k}' not in pairs})
  if np.ndim(grad['probs']) == 2:  # every class predicted at least once, by index
    counts = {str(c): int(n) for c, n in enumerate(np.bincount(predicted)) if n}
  else:
    counts = {'neg': int(np.sum(predicted == 0)), 'pos': int(np.sum(predicted == 1))}
  summary = {'pairs': {}, 'predicted_counts': counts}
  arrays = {'predicted': predicted, 'lengths': lengths}
  for name, (a, b) in pairs.items():
    tau, p = kendall.kendall_tau(scores[a], scores[b], lengths)
    arrays[f'tau_{name}'], arrays[f'p_{name}'] = tau, p
    summary['pairs'][name] = kendall.summarize(tau, predicted, p, groups)
    if name in PAIRS:  # how much of each mean is these test documents (statistics.py)
      for group, rows in groups.items():
        ci = statistics.bootstrap_interval(tau[rows], seed=ctx.settings.seed)
        summary['pairs'][name][group]['bootstrap_ci95'] = [ci['low'], ci['high']]
  for name, (minuend, subtrahend) in {'gl_minus_ag': ('gradient_loo', 'attention_loo'),
                                      'gl_minus_al': ('gradient_loo', 'attention_gradient')}.items():
    summary['pairs'][name] = kendall.summarize(arrays[f'tau_{minuend}'] - arrays[f'tau_{subtrahend}'],
                                               predicted, groups=groups)
  return arrays, summary


def _kendall_figures(arrays, inputs, summary, directory):
  groups = class_groups(arrays['predicted'], inputs['gradient']['probs'])
  return analysis_figures.tau_histograms(arrays, list(PAIRS), directory, groups,
                                        {p: tau_label(p) for p in PAIRS})


GRADIENT = STAGES.register(Stage(
    name='gradient', paper='jw', order=10, compute=_compute_gradient,
    positional=measure.Names('gradient', fixed=(ATTENTION,)), finalize=_finalize_gradient,
    figures=lambda *args: [], multi_class=True, keyed_measures=GRADIENT_KEYED))
LOO = STAGES.register(Stage(
    name='loo', paper='jw', order=20, compute=_compute_loo, check=_check_loo,
    positional=frozenset({'loo', 'probs_without'}), finalize=_finalize_loo,
    figures=lambda *args: [], version=3, multi_class=True,  # 2: the BiLSTM's deletion path; 3: CNN/Average windows
    cost=lambda batch: float(np.sum(batch.index >= 0)) * batch.tokens.shape[1] ** 2,
    section=Section(
        # docs_per_chunk 4: fastest measured on CPU (benchmarks/analysis_batch_size.py);
        # max_chunk_bytes bounds a chunk's states (long documents: bAbI 3's stories)
        defaults=lambda dataset, encoder, variant: dict(mode='delete', docs_per_chunk=4,
                                                        max_chunk_bytes=LOO_CHUNK_BYTES),
        runtime=('docs_per_chunk', 'max_chunk_bytes'),
        choices={'mode': ('delete', 'replace')},
        check=lambda s, cfg: (None if s.docs_per_chunk >= 1 and (s.max_chunk_bytes is None or s.max_chunk_bytes > 0)
                              else 'analysis.loo.docs_per_chunk must be >= 1 and max_chunk_bytes > 0 (or None)'))))
KENDALL = STAGES.register(Stage(
    name='kendall', paper='jw', order=30,  # its inputs' keys are part of its own
    requires=('gradient', 'loo'), version=2,  # 2: bootstrap intervals of the mean τ
    finalize=_finalize_kendall, figures=_kendall_figures, multi_class=True))
