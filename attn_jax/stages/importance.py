"""Stage `importance`: Meister et al.'s importance measures and their Kendall τ
with attention (Table 6; §3.1, App. A).

Per document: g_ŷ(x), g_ŷ(I) (attention attached; the detached variant with
`analysis.importance.hidden_gradient_detached`), D_ŷ(I), and D_ŷ(x) from the
`loo` stage's leave-one-out (deletion unless `analysis.loo.mode='replace'`;
the summary's `loo_mode`), each normalised over the words; τ-b of α
with each (`kendall.kendall_tau`: with sparse α many words tie at 0, see the
docs/usage.md, "Sparse attention and ties"); and normalised entropies of α and of
each measure (Figure 3, Table 2).
"""

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.analysis import importance_measures as imp, kendall, measure, statistics
from attn_jax.core.registry import STAGES, Section
from attn_jax.plots import meister_figures
from attn_jax.stages.stage import Stage

MEASURES = tuple(measure.stored('importance'))  # Table 6's columns: g_y_x, d_y_x, g_y_i, d_y_i
ENTROPIES = ('alpha', 'g_y_x', 'd_y_x', 'g_y_i')


def _importance_fn(model, detached: bool):
  def fn(params, tokens, lengths):
    fwd = model.forward(params, tokens, lengths)
    out = {'alpha': fwd.alpha, 'probs': jax.nn.sigmoid(fwd.logits),
           'g_y_x': imp.input_gradient(model, params, tokens, lengths),
           'g_y_i': imp.hidden_gradient(model, params, tokens, lengths),
           'd_y_i': imp.attention_deletion(model, params, tokens, lengths)}
    if detached:
      out['g_y_i_detached'] = imp.hidden_gradient(model, params, tokens, lengths,
                                                  detach_attention=True)
    return out
  return fn


def _compute(ctx, batch):
  detached = ctx.settings.importance.hidden_gradient_detached
  fn = ctx.jit('importance', lambda: _importance_fn(ctx.model, detached))
  return fn(ctx.params, batch.tokens, batch.lengths)


def _stats(values: np.ndarray) -> dict:
  finite = values[np.isfinite(values)]
  return {'mean': float(np.mean(values)) if len(values) else None,
          'std': float(np.std(values)) if len(values) else None,
          'nanmean': float(np.mean(finite)) if len(finite) else None,
          'nanstd': float(np.std(finite)) if len(finite) else None,
          'n_nan': int(len(values) - len(finite))}


def _finalize(ctx, arrays, inputs):
  lengths = ctx.split.lengths.astype(np.int32)
  width = arrays['alpha'].shape[1]
  loo = inputs['loo']['loo'][:, :width]
  arrays['d_y_x'] = np.asarray(imp.normalised_loo(jnp.asarray(loo), jnp.asarray(lengths)))
  arrays['lengths'] = lengths
  predicted = (arrays['probs'] > 0.5).astype(np.int32)
  arrays['predicted'] = predicted
  m = ctx.cfg.model
  summary = {'projection': m.projection, 'encoder': m.encoder, 'attention': m.attention,
             'sparsegen_lambda': m.sparsegen_lambda if m.projection == 'sparsegen' else None,
             'n': len(lengths), 'loo_mode': ctx.settings.loo.mode, 'tau': {}, 'entropy': {},
             'hidden_gradient_detached': bool(ctx.settings.importance.hidden_gradient_detached)}
  measures = MEASURES + (('g_y_i_detached',) if 'g_y_i_detached' in arrays else ())
  for name in measures:
    tau, p = kendall.kendall_tau(arrays['alpha'], arrays[name], lengths)
    arrays[f'tau_{name}'], arrays[f'p_{name}'] = tau, p
    entry = kendall.summarize(tau, predicted, p)['overall']
    ci = statistics.bootstrap_interval(tau, seed=ctx.settings.seed)
    entry['bootstrap_ci95'] = [ci['low'], ci['high']]
    summary['tau'][name] = entry
  if 'g_y_i_detached' in summary['tau']:  # also apart: it is not one of Table 6's columns
    summary['tau_detached'] = summary['tau']['g_y_i_detached']
  for name in ENTROPIES:
    h = np.asarray(imp.normalised_entropy(jnp.asarray(arrays[name]), jnp.asarray(lengths)), np.float64)
    arrays[f'entropy_{name}'] = h
    summary['entropy'][name] = _stats(h)
  words = np.arange(width)[None, :] < (lengths[:, None] - 1)
  words &= np.arange(width)[None, :] >= 1
  zero = np.sum((arrays['alpha'] == 0) & words, axis=1) / np.maximum(lengths - 2, 1)
  arrays['alpha_zero_fraction'] = zero
  summary['alpha_zero_fraction'] = float(np.mean(zero))
  return arrays, summary


IMPORTANCE = STAGES.register(Stage(
    name='importance', paper='meister', order=80, compute=_compute,
    positional=frozenset({'alpha', 'g_y_x', 'g_y_i', 'g_y_i_detached', 'd_y_i'}),
    requires=('loo',), finalize=_finalize,
    figures=lambda arrays, inputs, summary, d: meister_figures.tau_histograms_by_measure(
        arrays, MEASURES, d),
    cost=lambda batch: float(np.sum(batch.index >= 0)) * batch.tokens.shape[1],
    # Also the intermediate gradient with α detached (Meister et al.'s variant).
    section=Section(lambda dataset, encoder, variant: dict(hidden_gradient_detached=True))))
