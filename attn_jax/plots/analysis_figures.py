"""The papers' analysis plots, from a stage's result arrays (PNG and SVG).

J&W: τ histograms by predicted class (Table 2 / Fig. 4), permutation
violins by max-attention bin (Fig. 5), adversarial max-JSD histograms by
class (Fig. 7). S&S: ΔJS vs Δα scatter (Fig. 3) and fraction of items
removed before the first decision flip per ranking (Fig. 5).
"""

import os
from typing import Optional

import numpy as np

from attn_jax.plots.figures import new_figure, save

COLORS = ('tab:red', 'tab:blue', 'tab:green')
CLASSES = (('neg', 0, COLORS[0]), ('pos', 1, COLORS[1]))  # a binary model's predicted classes


def _groups(groups: dict) -> list[tuple[str, np.ndarray, str]]:
  """(label, rows, color) of the groups a figure shows: by predicted class
  where there are few ('neg', 'pos'; 'class c'), else all documents."""
  named = [(f'predicted {name}', rows) for name, rows in groups.items() if name != 'overall']
  named = named or [('all documents', groups['overall'])]
  return [(label, rows, COLORS[i % len(COLORS)]) for i, (label, rows) in enumerate(named)]


def tau_histograms(arrays: dict, pairs: list[str], directory: str, groups: dict,
                   titles: Optional[dict] = None) -> list[str]:
  """One histogram of per-document τ per pair, by group.

  Args:
    arrays: the kendall stage's arrays, with `tau_<pair>` [N] for each pair.
    pairs: the pair names to plot, in order.
    directory: where the figure goes (PNG and SVG).
    groups: name -> [N] rows (`stages.stage.class_groups`).
    titles: {pair: its label} (the stage passes 'τ(α, gradient)', read from
      the measures' records); a pair without one is titled 'attention ~ gradient'.

  Returns:
    The paths written.
  """
  titles = titles or {}
  fig, axes = new_figure(1, len(pairs), figsize=(4 * len(pairs), 3.2), squeeze=False)
  for ax, pair in zip(axes[0], pairs):
    tau = arrays[f'tau_{pair}']
    for label, rows, color in _groups(groups):
      values = tau[rows & np.isfinite(tau)]
      if len(values):
        ax.hist(values, bins=30, range=(-1, 1), alpha=0.5, color=color,
                weights=np.full(len(values), 1 / len(values)), label=label)
    ax.set_title(titles.get(pair, pair.replace('_', ' ~ ')))
    ax.set_xlabel('Kendall τ')
  axes[0][0].set_ylabel('fraction of documents')
  if axes[0][0].get_legend_handles_labels()[0]:  # no finite τ in the first pair: nothing to label
    axes[0][0].legend()
  return save(fig, os.path.join(directory, 'kendall_tau_histograms'))


def permutation_violins(arrays: dict, bin_labels: list[str], directory: str, groups: dict) -> list[str]:
  shown = _groups(groups)
  fig, axes = new_figure(1, len(shown), figsize=(4.5 * len(shown), 3.5), sharey=True, squeeze=False)
  for ax, (label, rows, color) in zip(axes[0], shown):
    by_bin = [arrays['median'][(arrays['bin'] == b) & rows] for b in range(len(bin_labels))]
    present = [i for i, g in enumerate(by_bin) if len(g) > 1]
    if present:
      parts = ax.violinplot([by_bin[i] for i in present], positions=present, showmedians=True)
      for body in parts['bodies']:
        body.set_facecolor(color)
    ax.set_xticks(range(len(bin_labels)), bin_labels, fontsize=8)
    ax.set_title(label)
    ax.set_xlabel('max attention')
  axes[0][0].set_ylabel('median |Δŷ| over permutations' if arrays['probs'].ndim == 1
                        else 'median TVD over permutations')
  return save(fig, os.path.join(directory, 'permutation_violins'))


def max_jsd_histograms(arrays: dict, directory: str, groups: dict) -> list[str]:
  fig, ax = new_figure(figsize=(5, 3.2))
  for label, rows, color in _groups(groups):
    values = arrays['max_jsd'][rows]
    if len(values):
      ax.hist(values, bins=40, range=(0, 0.7), alpha=0.5, color=color,
              weights=np.full(len(values), 1 / len(values)), label=label)
  ax.set_xlabel('max JS divergence within ε')
  ax.set_ylabel('fraction of documents')
  ax.legend()
  return save(fig, os.path.join(directory, 'adversarial_max_jsd_histograms'))


def delta_js_scatter(arrays: dict, usable: np.ndarray, directory: str) -> list[str]:
  fig, ax = new_figure(figsize=(5, 3.5))
  delta_js = arrays['single_js_top'] - arrays['single_js_other']
  # Rasterized: a vector point per document makes a 25,000-document SVG megabytes.
  ax.scatter(arrays['single_delta_alpha'][usable], delta_js[usable], s=4, alpha=0.4, rasterized=True)
  ax.axhline(0.0, color='grey', lw=0.8)
  ax.set_xlabel('Δα = α(i*) − α(r)')
  ax.set_ylabel('ΔJS = JS(i*) − JS(r)')
  return save(fig, os.path.join(directory, 'single_weight_delta_js'))


def fraction_removed_boxes(fractions: dict, directory: str) -> list[str]:
  fig, ax = new_figure(figsize=(6, 3.5))
  names = list(fractions)
  data = [fractions[n][fractions[n] >= 0] for n in names]
  ax.boxplot([d if len(d) else np.zeros(1) for d in data], showfliers=False)
  ax.set_xticks(range(1, len(names) + 1), [n.replace('_', '\n') for n in names], fontsize=8)
  ax.set_ylabel('fraction of items removed\nbefore the first decision flip')
  return save(fig, os.path.join(directory, 'fraction_removed'))
