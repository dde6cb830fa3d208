"""Stage `state_importance`: how much each input word matters to each
intermediate state, g_{h_p}(x) (Meister et al. eq. 5), summarised by its
normalised entropy (Table 1; §3.1, App. A).

Per document and word position p the entropy H̃ of the row g_{h_p}(x) — an
n × n matrix per document, computed `analysis.state_importance.chunk` rows
at a time and never stored. `layers='last'` takes the encoder output (what
attention pools), `'all'` every layer of `Model.encode_layers` (the
Transformer's two). Table 1 pools every (document, p) pair (Meister et al. do not
say how; the per-document mean is reported beside it).
"""

import numpy as np

from attn_jax.analysis import importance_measures as imp
from attn_jax.core.registry import STAGES, Section
from attn_jax.plots import meister_figures
from attn_jax.stages.stage import Stage

# The runner pads only the last axis of an array, so each layer is its own
# [N, L] array; names for far more layers than any configuration uses.
MAX_LAYERS = 64


def _layers(ctx) -> list[int]:
  # As many as `Model.encode_layers` returns: each Transformer layer, else the encoder output.
  count = ctx.cfg.model.transformer_layers if ctx.cfg.model.encoder == 'transformer' else 1
  if count > MAX_LAYERS:
    raise ValueError(f'state_importance stores at most {MAX_LAYERS} layers; raise MAX_LAYERS')
  return list(range(count)) if ctx.settings.state_importance.layers == 'all' else [count - 1]


def _compute(ctx, batch):
  s = ctx.settings.state_importance
  layers = _layers(ctx)

  def make():
    def fn(params, tokens, lengths):
      return {f'entropy_layer{k}': imp.state_gradient_entropy(ctx.model, params, tokens, lengths,
                                                              layer=k, chunk=s.chunk)
              for k in layers}
    return fn
  return ctx.jit(f'state_importance{layers}', make)(ctx.params, batch.tokens, batch.lengths)


def _finalize(ctx, arrays, inputs):
  del inputs
  layers = _layers(ctx)
  summary = {'layers': layers, 'last_layer': f'layer{layers[-1]}', 'table1': {},
             'encoder': ctx.cfg.model.encoder, 'projection': ctx.cfg.model.projection}
  lengths = ctx.split.lengths
  for k in layers:
    entropy = np.asarray(arrays[f'entropy_layer{k}'], np.float64)
    positions = np.arange(entropy.shape[1])[None, :]
    # The runner pads past a batch's width with 0: off the words is NaN.
    entropy[(positions < 1) | (positions >= lengths[:, None] - 1)] = np.nan
    arrays[f'entropy_layer{k}'] = entropy
    pooled = entropy[np.isfinite(entropy)]
    # Documents with fewer than 2 words have no finite row: left out of both.
    per_doc = np.array([np.mean(r[np.isfinite(r)]) for r in entropy if np.isfinite(r).any()])
    summary['table1'][f'layer{k}'] = {
        'mean': float(np.mean(pooled)) if len(pooled) else None,
        'std': float(np.std(pooled)) if len(pooled) else None,
        'doc_mean': float(np.mean(per_doc)) if len(per_doc) else None,
        'doc_std': float(np.std(per_doc)) if len(per_doc) else None,
        'n_pairs': int(len(pooled)), 'n_docs': int(len(per_doc))}
  arrays['lengths'] = ctx.split.lengths.astype(np.int32)
  return arrays, summary


STATE_IMPORTANCE = STAGES.register(Stage(
    name='state_importance', paper='meister', order=90, compute=_compute,
    positional=frozenset(f'entropy_layer{k}' for k in range(MAX_LAYERS)), finalize=_finalize,
    figures=lambda arrays, inputs, summary, d: meister_figures.state_entropy_histogram(
        {f'layer {k}': arrays[f'entropy_layer{k}'] for k in summary['layers']}, d),
    # One backward pass per position p, each through the whole batch: documents × L².
    cost=lambda batch: float(np.sum(batch.index >= 0)) * batch.tokens.shape[1] ** 2,
    # g_{h_p}(x) rows computed `chunk` at a time, for the encoder output
    # ('last') or every layer ('all').
    section=Section(lambda dataset, encoder, variant: dict(chunk=16, layers='last'),
                    lambda s, cfg: None if s.chunk >= 1 else 'analysis.state_importance.chunk must be >= 1',
                    choices={'layers': ('last', 'all')})))
