"""Known evidence: how well each importance measure ranks bAbI's supporting
facts' words (`attn_jax.analysis.evidence_ranking`), per model and per study."""

import os

import numpy as np

from attn_jax.plots.figures import new_figure, save


def average_precision_boxes(ap: dict, chance: np.ndarray, directory: str) -> list[str]:
  """One model: the per-document AP of each measure (`ap`: name -> [N]),
  beside the chance AP of each document's random ranking."""
  names = list(ap)
  fig, axes = new_figure(1, 1, figsize=(1.1 * len(names) + 2.5, 3.5), squeeze=False)
  ax = axes[0][0]
  data = [v[np.isfinite(v)] for v in (*[ap[n] for n in names], chance)]
  ax.boxplot(data, showmeans=True)
  ax.set_xticks(range(1, len(names) + 2), [*names, 'chance'], rotation=30, ha='right', fontsize=8)
  ax.set_ylabel('average precision of the evidence words')
  ax.set_ylim(0, 1.02)
  return save(fig, os.path.join(directory, 'evidence_average_precision'))


def study_intervals(rows: list[tuple[str, dict]], measures: list[str], path: str) -> list[str]:
  """A study: per row (task × encoder × attention) the mean AP of each measure
  with its 95 % interval over seeds, and the chance AP.

  rows: (label, {measure or 'chance': {'mean', 'low', 'high', 'n'}})."""
  fig, axes = new_figure(1, 1, figsize=(max(6.0, 0.75 * len(rows) + 2), 4.2), squeeze=False)
  ax = axes[0][0]
  width = 0.8 / (len(measures) + 1)
  for k, name in enumerate([*measures, 'chance']):
    xs, means, errors = [], [], []
    for i, (_, cis) in enumerate(rows):
      ci = cis.get(name)
      if ci and ci['n']:
        xs.append(i + (k - len(measures) / 2) * width)
        means.append(ci['mean'])
        errors.append([ci['mean'] - ci['low'], ci['high'] - ci['mean']] if ci['n'] > 1 else [0, 0])
    if xs:
      ax.errorbar(xs, means, yerr=np.array(errors).T, fmt='o' if name != 'chance' else '_', ms=4,
                  capsize=2, label=name, color='black' if name == 'chance' else None)
  ax.set_xticks(range(len(rows)), [label for label, _ in rows], rotation=45, ha='right', fontsize=7)
  ax.set_ylabel('mean AP of the evidence words')
  ax.set_ylim(0, 1.02)
  ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1.0))  # beside: the points reach the top
  return save(fig, path)
