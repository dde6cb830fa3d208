"""Stage `eraser`: ERASER's erasure metrics (DeYoung et al., ACL 2020, §4.2)
of every importance measure the model takes, without retraining.

Rows (measures), in this order: the model's own attention α; every measure
registered in `MEASURES` that the model takes (`needs.refusal` is None;
registry order, read when the stage runs, so a measure registered later is
scored too and keys new results); and `random_rankings` random rankings
(`eraser_metrics.random_scores`, one key per document from `ctx.keys`, so a
document's ranking does not depend on its batch). For each row, fraction k
and document: comprehensiveness and sufficiency (`erasure_metrics`: the
top-k % words deleted, or kept alone, and the row re-encoded), and their
AOPC over the fractions (`eraser_metrics.aopc`).

The scores and the curves are one jitted program per padded width. Its
documents run `docs_per_chunk` at a time (a document's 2·M·K variant rows
form one batch for the model), fewer where XLA's memory analysis of the
compiled program says a chunk's temporary memory would pass
`max_chunk_bytes` (`eraser_chunks`, as the `loo` stage sizes its chunks).

The summary: per row, the mean AOPC with a bootstrap 95 % interval over
documents; each measure's paired difference from random; paired tests
between every two measures, with Holm's correction across the pairs
(`attn_jax.analysis.eraser_comparisons`).
"""

from typing import Optional

import jax.numpy as jnp
import numpy as np

from attn_jax.analysis import eraser_comparisons as comparisons, eraser_metrics as em, needs
from attn_jax.core.registry import MEASURES, STAGES, Section
from attn_jax.plots import faithfulness_figures
from attn_jax.stages.stage import Stage

KEY_STREAM = 5  # the random rankings' stream of `ctx.keys` (1-4 are other stages')
ATTENTION = 'alpha'
METRICS = ('comprehensiveness', 'sufficiency')
# The registered measures when its results were first keyed: a measure
# registered since is in the key (`Stage.measures`), so results saved without
# it are not read as if they had it.
ERASER_KEYED = ('gradient_importance', 'gradient_importance_logit', 'gradient_importance_attached',
                'gradient_importance_all_heads', 'input_gradient', 'leave_one_out', 'hidden_gradient',
                'attention_deletion', 'gradient_norm', 'gradient_x_input', 'integrated_gradients')
# The equivalence margin of the verdicts, in AOPC units (a change of p(ŷ)
# averaged over the bins): 0.02, the margin the project uses for other
# probabilities (accuracy, F1, evidence AP; `verdicts.MARGINS`), set before
# any measure's AOPC was compared. A setting: a study may argue for another.
MARGIN = 0.02
# A chunk's temporary memory, as the loo stage's default (`LOO_CHUNK_BYTES`).
CHUNK_BYTES = 2**30
# Variant rows a chunk re-encodes when one document's rows are measured.
_PROBE_ROWS = 8


def measures(model) -> tuple:
  """The registered measures `model` takes, in registry order (read now)."""
  return tuple(m.name for m in MEASURES.values() if needs.refusal(model, m.name) is None)


def random_rows(count: int) -> tuple:
  """The names of `count` random rankings' rows: 'random', or 'random_0', 'random_1', ..."""
  return (comparisons.RANDOM,) if count == 1 else tuple(f'{comparisons.RANDOM}_{i}' for i in range(count))


def rows(model, random_rankings: int) -> tuple:
  """Every row's name, in the order of the results' measure axis M."""
  return (ATTENTION, *measures(model), *random_rows(random_rankings))


def labels(names) -> dict:
  """{row name: its label in tables and figures} (α, the measures' columns, random)."""
  def label(name):
    if name == ATTENTION:
      return 'α'
    if comparisons.is_random(name):
      return name.replace('_', ' ')
    return MEASURES[name].column if name in MEASURES else name
  return {n: label(n) for n in names}


def _program(ctx, names: tuple, docs: int, rows_per_chunk: Optional[int]):
  """(ctx.jit name, make) of the program: every row's scores, then the curves."""
  s = ctx.settings.eraser

  def make():
    model = ctx.model

    def fn(params, tokens, lengths, keys):
      alpha = model.forward(params, tokens, lengths).alpha
      found = [alpha] + [MEASURES[n].scores(model, params, tokens, lengths).astype(alpha.dtype) for n in names]
      noise = em.random_scores(keys, lengths, tokens.shape[1], s.random_rankings).astype(alpha.dtype)
      curves = em.erasure_metrics(model, params, tokens, lengths, jnp.concatenate([jnp.stack(found), noise]),
                                  fractions=tuple(s.fractions), rounding=s.rounding, min_words=s.min_words,
                                  docs_per_chunk=docs, rows_per_chunk=rows_per_chunk)
      # [M, K, B] -> [B, M, K]: a result's first axis is the document.
      return {'comprehensiveness': jnp.moveaxis(curves.comprehensiveness, -1, 0),
              'sufficiency': jnp.moveaxis(curves.sufficiency, -1, 0), 'prob': curves.prob,
              'predicted': curves.predicted.astype(jnp.int32), 'counts': curves.counts.T}
    return fn
  return f'eraser:{",".join(names)}:{docs}:{rows_per_chunk}', make


def eraser_chunks(ctx, batch, keys, names: tuple) -> tuple[int, Optional[int]]:
  """(documents per chunk, variant rows per chunk or None) for a batch, so that
  the program's temporary memory fits in `analysis.eraser.max_chunk_bytes`.

  The program of `docs_per_chunk` documents is compiled and XLA's memory
  analysis read (`AnalysisContext.temp_bytes`; the run then uses that
  compilation): where it fits, or where there is no analysis (a batch split
  over devices) or no budget, it is the one. Otherwise as many documents
  as fit (extrapolated from one document's and `docs_per_chunk`'s, then
  measured); where one document alone does not, its variant rows a chunk at a
  time (the rows' share measured on `_PROBE_ROWS`, the program's fixed part
  counted per row: conservative).
  """
  s = ctx.settings.eraser
  most, budget = s.docs_per_chunk, s.get('max_chunk_bytes')
  if not budget:
    return most, None
  measure = lambda docs, rows: ctx.temp_bytes(*_program(ctx, names, docs, rows), batch.tokens, batch.lengths, keys)
  full = measure(most, None)
  if full is None or full <= budget:
    return most, None
  one = measure(1, None)
  if one <= budget:  # then most > 1: the documents' share of `full`, the rest fixed
    per_doc = max((full - one) / (most - 1), 1.0)
    docs = int(min(most - 1, 1 + (budget - one) // per_doc))
    while docs > 1 and measure(docs, None) > budget:  # the chosen program is compiled anyway
      docs -= 1
    return docs, None
  per_row = measure(1, _PROBE_ROWS) / _PROBE_ROWS
  return 1, int(max(1, budget // max(per_row, 1)))


def _compute(ctx, batch):
  names = measures(ctx.model)
  keys = ctx.keys(KEY_STREAM, batch.index)
  docs, rows_per_chunk = eraser_chunks(ctx, batch, keys, names)
  return ctx.jit(*_program(ctx, names, docs, rows_per_chunk))(ctx.params, batch.tokens, batch.lengths, keys)


def _check(ctx, batch):
  """Each measure's fast path (leave-one-out's deletion states or windows)
  against its exact path on the first batch; the erasure itself re-encodes
  every variant (no fast path)."""
  for name in measures(ctx.model):
    if MEASURES[name].check_fast is not None:
      MEASURES[name].check_fast(ctx.model, ctx.params, batch.tokens, batch.lengths)


def document_aopc(values: np.ndarray, normaliser: str) -> np.ndarray:
  """[N, M, K] comprehensiveness or sufficiency -> [N, M] each document's AOPC (`eraser_metrics.aopc`)."""
  return np.asarray(em.aopc(jnp.asarray(np.moveaxis(values, 0, -1)), normaliser)).T


def _finalize(ctx, arrays, inputs):
  del inputs
  s = ctx.settings.eraser
  names = rows(ctx.model, s.random_rankings)
  lengths = ctx.split.lengths.astype(np.int32)
  arrays['lengths'] = lengths
  summary = {'measures': list(names), 'labels': labels(names), 'n': len(lengths),
             'refused': {m.name: needs.refusal(ctx.model, m.name) for m in MEASURES.values()
                         if m.name not in names},
             'fractions': [float(f) for f in s.fractions], 'rounding': s.rounding, 'min_words': s.min_words,
             'normaliser': s.normaliser, 'random_rankings': s.random_rankings, 'margin': s.margin,
             'mean_prob': float(np.mean(arrays['prob'])), 'curves': {}, 'aopc': {},
             'pairs_correction': 'holm: across the pairs of measures, per metric (verdict_holm, p_zero_holm); '
                                 'verdict and p_zero uncorrected'}
  counts, words = arrays['counts'], np.maximum(lengths - 2, 0)[:, None]
  # Documents whose top k % is no word (comprehensiveness 0 there) or every word (sufficiency 0).
  summary['no_words'] = {f'{f:g}': int(n) for f, n in zip(s.fractions, np.sum(counts == 0, axis=0))}
  summary['every_word'] = {f'{f:g}': int(n) for f, n in zip(s.fractions, np.sum(counts == words, axis=0))}
  for metric in METRICS:
    arrays[f'aopc_{metric}'] = document_aopc(arrays[metric], s.normaliser).astype(np.float32)
    means = np.mean(np.asarray(arrays[metric], np.float64), axis=0)  # [M, K]
    summary['curves'][metric] = {n: means[i].tolist() for i, n in enumerate(names)}
    summary['aopc'][metric] = comparisons.compare_measures(
        comparisons.columns(arrays[f'aopc_{metric}'], list(names)), s.margin, 'bootstrap', ctx.settings.seed)
  return arrays, summary


def _figures(arrays, inputs, summary, directory):
  del inputs
  names, label = summary['measures'], summary['labels']
  means = {m: np.mean(arrays[m], axis=0) for m in METRICS}  # [M, K]
  curves = {label[n]: (means['comprehensiveness'][i], means['sufficiency'][i]) for i, n in enumerate(names)}
  random = {label[n] for n in names if comparisons.is_random(n)}
  return faithfulness_figures.erasure_curves(summary['fractions'], curves, random, directory)


def _check_section(s, cfg) -> Optional[str]:
  del cfg
  fractions = tuple(s.fractions)
  if not fractions or any(not 0 < f <= 1 for f in fractions) or list(fractions) != sorted(set(fractions)):
    return f'analysis.eraser.fractions must be increasing fractions in (0, 1], not {fractions!r}'
  if s.min_words < 0 or s.random_rankings < 1 or not s.margin > 0:
    return 'analysis.eraser needs min_words >= 0, random_rankings >= 1 and margin > 0'
  if s.docs_per_chunk < 1 or (s.max_chunk_bytes is not None and s.max_chunk_bytes <= 0):
    return 'analysis.eraser.docs_per_chunk must be >= 1 and max_chunk_bytes > 0 (or None)'
  return None


ERASER = STAGES.register(Stage(
    name='eraser', paper='faithfulness', order=110, compute=_compute, check=_check,
    finalize=_finalize, figures=_figures, multi_class=True,  # not a HAN: it removes words, not sentences
    cost=lambda batch: float(np.sum(batch.index >= 0)) * batch.tokens.shape[1],
    keyed_measures=ERASER_KEYED, measures=lambda: tuple(MEASURES.names()),
    section=Section(
        defaults=lambda dataset, encoder, variant: dict(
            fractions=em.FRACTIONS, rounding='floor', min_words=0, normaliser='bins', random_rankings=1,
            margin=MARGIN, docs_per_chunk=4, max_chunk_bytes=CHUNK_BYTES),
        runtime=('docs_per_chunk', 'max_chunk_bytes'),
        choices={'rounding': ('floor', 'ceil', 'round'), 'normaliser': ('bins', 'bins_plus_one')},
        check=_check_section)))
