"""Meister et al.'s figures (PNG and SVG): τ of attention with each importance
measure (Table 6 as histograms), the entropy of input-to-state importance
(Table 1), and τ and entropy against sparsegen's λ (Figure 3), and the
frozen/unfrozen adversaries (Table 5)."""

import os

import numpy as np

from attn_jax.plots.figures import new_figure, save


def tau_histograms_by_measure(arrays: dict, measures, directory: str, labels=None) -> list[str]:
  """One histogram of per-document τ(α, measure) per measure.

  Args:
    arrays: the importance stage's arrays, with `tau_<measure>` [N] for each measure.
    measures: the array names to plot, in order.
    directory: where the figure goes (PNG and SVG).
    labels: {array name: its label} (the stage passes the measures'
      records' columns, `measure.columns`); a name without one is printed as is.

  Returns:
    The paths written.
  """
  labels = labels or {}
  fig, axes = new_figure(1, len(measures), figsize=(3.6 * len(measures), 3.0), squeeze=False,
                         sharey=True)
  for ax, m in zip(axes[0], measures):
    tau = arrays[f'tau_{m}']
    tau = tau[np.isfinite(tau)]
    if len(tau):
      ax.hist(tau, bins=40, range=(-1, 1), weights=np.full(len(tau), 1 / len(tau)))
      ax.axvline(float(np.mean(tau)), color='k', lw=1, ls='--')
    ax.set_title(f'τ(α, {labels.get(m, m)})')
    ax.set_xlabel('Kendall τ')
  axes[0][0].set_ylabel('fraction of documents')
  return save(fig, os.path.join(directory, 'tau_by_measure'))


def state_entropy_histogram(entropies: dict, directory: str) -> list[str]:
  """Histogram of H̃(g_{h_p}(x)) over all (document, position) pairs, per layer."""
  fig, axes = new_figure(1, 1, figsize=(4.5, 3.2), squeeze=False)
  ax = axes[0][0]
  for name, values in entropies.items():
    values = values[np.isfinite(values)]
    if len(values):
      ax.hist(values, bins=40, range=(0, 1), alpha=0.6, label=name,
              weights=np.full(len(values), 1 / len(values)))
  ax.set_xlabel('normalised entropy of g_{h_p}(x)')
  ax.set_ylabel('fraction of (document, position) pairs')
  ax.legend()
  return save(fig, os.path.join(directory, 'state_importance_entropy'))


def _symlog(ax):
  ax.set_xscale('symlog', linthresh=1.0, linscale=2.0)  # λ in (−1, 1) linear and wide: most of the grid
  ax.set_xlabel('sparsegen λ (symlog)')


def sweep_curves(summary: dict, directory: str, labels=None) -> list[str]:
  """Figure 3: mean τ(α, measure) and mean entropies against λ.

  Args:
    summary: the sparsegen sweep's summary (`rows`, each with `lambda` and `tau`; `measures`).
    directory: where the figure goes (PNG and SVG).
    labels: {measure's array name: its label} (`measure.columns`); a name
      without one is printed as is.

  Returns:
    The paths written.
  """
  labels = labels or {}
  rows = [r for r in summary['rows'] if 'failed' not in r]
  lam = np.array([r['lambda'] for r in rows])
  fig, axes = new_figure(1, 2, figsize=(9, 3.4), squeeze=False)
  ax = axes[0][0]
  for m in summary.get('measures', ('g_y_x', 'd_y_x', 'g_y_i', 'd_y_i')):
    ax.plot(lam, [r['tau'][m] for r in rows], marker='o', label=labels.get(m, m))
  _symlog(ax)
  ax.set_ylabel('mean Kendall τ with α')
  ax.legend(fontsize=8)
  ax = axes[0][1]
  ax.plot(lam, [r['entropy_g_y_x'] for r in rows], marker='o', label='H̃(g_ŷ(x))')
  ax.plot(lam, [r['entropy_alpha'] for r in rows], marker='s', label='H̃(α)')
  _symlog(ax)
  ax.set_ylabel('mean normalised entropy')
  ax.legend(fontsize=8)
  return save(fig, os.path.join(directory, 'sparsegen_sweep'))


def regimes_scatter(summary: dict, directory: str) -> list[str]:
  """Table 5: each adversary's test JSD from the base attention against its
  accuracy, frozen and unfrozen; the reported one of each regime circled."""
  fig, axes = new_figure(1, 1, figsize=(4.8, 3.6), squeeze=False)
  ax = axes[0][0]
  for (name, regime), marker in zip(summary['regimes'].items(), 'os^'):
    rows = [r for r in regime['rows'] if 'failed' not in r]
    ax.scatter([r['mean_jsd'] for r in rows], [r['accuracy'] for r in rows], marker=marker, label=name)
    if regime.get('chosen'):
      ax.scatter([regime['chosen']['mean_jsd']], [regime['chosen']['accuracy']], s=160,
                 facecolors='none', edgecolors='k')
  ax.axhline(summary['base']['accuracy'], color='gray', ls='--', lw=1, label='base model')
  ax.set_xlabel('mean JSD(α_base, α_adv)')
  ax.set_ylabel('test accuracy')
  ax.legend(fontsize=8)
  return save(fig, os.path.join(directory, 'adversary_regimes'))
