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

# The measures the stage stores are the registered ones that name it
# (`Measure.stored_as['importance']`); its results were first keyed with
# Table 6's four columns. D_ŷ(x) is a measure the `loo` stage stores too:
# its leave-one-out, normalised over the words here; the others are computed
# by their own function.
IMPORTANCE_KEYED = ('g_y_x', 'd_y_x', 'g_y_i', 'd_y_i')
ENTROPIES = ('alpha', 'g_y_x', 'd_y_x', 'g_y_i')  # Meister's Table 2 / Figure 3 entropies
DETACHED = 'g_y_i_detached'  # g_ŷ(I) with α detached (Meister et al.'s variant), beside Table 6
DETACHED_LABEL = 'g_ŷ(I), α detached'


def measures() -> tuple:
  """The array names of the measures the stage stores, registry order (Table 6's columns first)."""
  return tuple(measure.stored('importance'))


def _from_loo() -> dict:
  """{array name: the `loo` stage's array}: the measures taken from its results, normalised."""
  return {name: m.stored_as['loo'] for name, m in measure.stored('importance').items() if 'loo' in m.stored_as}


def labels() -> dict:
  """{array name: label} of the stage's τ: its measures' columns and the detached g_ŷ(I)."""
  return {**measure.columns('importance'), DETACHED: DETACHED_LABEL}




def _importance_fn(model, detached: bool, from_loo: tuple):
  def fn(params, tokens, lengths):
    fwd = model.forward(params, tokens, lengths)
    out = {'alpha': fwd.alpha, 'probs': jax.nn.sigmoid(fwd.logits)}
    # g_ŷ(x), g_ŷ(I), D_ŷ(I) and any measure registered for the stage since.
    out.update(measure.computed('importance', model, params, tokens, lengths, elsewhere=from_loo))
    if detached:
      out[DETACHED] = imp.hidden_gradient(model, params, tokens, lengths, detach_attention=True)
    return out
  return fn


def _compute(ctx, batch):
  detached = ctx.settings.importance.hidden_gradient_detached
  from_loo = tuple(_from_loo())
  fn = ctx.jit('importance:' + ','.join(measures()), lambda: _importance_fn(ctx.model, detached, from_loo))
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
  for name, loo_name in _from_loo().items():  # D_ŷ(x): the loo stage's leave-one-out, normalised
    loo = inputs['loo'][loo_name][:, :width]
    arrays[name] = np.asarray(imp.normalised_loo(jnp.asarray(loo), jnp.asarray(lengths)))
  arrays['lengths'] = lengths
  predicted = (arrays['probs'] > 0.5).astype(np.int32)
  arrays['predicted'] = predicted
  m = ctx.cfg.model
  summary = {'projection': m.projection, 'encoder': m.encoder, 'attention': m.attention,
             'sparsegen_lambda': m.sparsegen_lambda if m.projection == 'sparsegen' else None,
             'n': len(lengths), 'loo_mode': ctx.settings.loo.mode, 'tau': {}, 'entropy': {},
             'hidden_gradient_detached': bool(ctx.settings.importance.hidden_gradient_detached)}
  # A measure the model cannot take is absent (`measure.computed`); the detached g_ŷ(I) last.
  taus = tuple(n for n in measures() if n in arrays) + ((DETACHED,) if DETACHED in arrays else ())
  for name in taus:
    tau, p = kendall.kendall_tau(arrays['alpha'], arrays[name], lengths)
    arrays[f'tau_{name}'], arrays[f'p_{name}'] = tau, p
    entry = kendall.summarize(tau, predicted, p)['overall']
    ci = statistics.bootstrap_interval(tau, seed=ctx.settings.seed)
    entry['bootstrap_ci95'] = [ci['low'], ci['high']]
    summary['tau'][name] = entry
  if DETACHED in summary['tau']:  # also apart: it is not one of Table 6's columns
    summary['tau_detached'] = summary['tau'][DETACHED]
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
    positional=measure.Names('importance', fixed=('alpha', DETACHED)),
    requires=('loo',), finalize=_finalize,
    figures=lambda arrays, inputs, summary, d: meister_figures.tau_histograms_by_measure(
        arrays, [n for n in measures() if f'tau_{n}' in arrays], d, labels()),
    cost=lambda batch: float(np.sum(batch.index >= 0)) * batch.tokens.shape[1],
    # Also the intermediate gradient with α detached (Meister et al.'s variant).
    section=Section(lambda dataset, encoder, variant: dict(hidden_gradient_detached=True)),
    keyed_measures=IMPORTANCE_KEYED))
