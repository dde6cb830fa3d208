"""ROAR's figure (Hooker et al. 2019, Fig. 4; Madsen et al. 2022, Fig. 2):
test accuracy against the fraction k of words masked, one curve per
importance measure, random's shaded. From one model's experiment summary
(`accuracy_curves`) or from the curves of a study's seeds (`study_curves`:
means with their 95 % intervals)."""

import os

import numpy as np

from attn_jax.plots.figures import new_figure, save

RANDOM = 'random'


def _draw(ax, ks: np.ndarray, curves: dict, bands: dict, labels: dict) -> None:
  for name, y in curves.items():
    if name == RANDOM:
      ax.plot(ks, y, color='0.35', ls='--', label=labels.get(name, name))
      low, high = bands.get(name, (y, y))
      ax.fill_between(ks, low, high, color='0.6', alpha=0.35, lw=0)
    else:
      line, = ax.plot(ks, y, marker='o', ms=3, label=labels.get(name, name))
      if name in bands:
        ax.fill_between(ks, *bands[name], color=line.get_color(), alpha=0.15, lw=0)
  ax.set_xlabel('fraction of words masked, k')
  ax.set_ylabel('test accuracy')
  ax.set_xlim(0, 1)
  ax.legend(fontsize=7)


def accuracy_curves(summary: dict, directory: str, labels: dict | None = None) -> list[str]:
  """One model's ROAR curves: its base accuracy at k = 0, then each measure's model per k.

  Args:
    summary: a `roar` or `recursive_roar` experiment summary ('fractions',
      'measures', 'rows' of {'measure', 'k', 'accuracy'}, 'base', 'all_masked').
    directory: where `roar.png` and `roar.svg` go.
    labels: {measure name: legend label}.

  Returns:
    The written paths.
  """
  end = (summary.get('all_masked') or {}).get('accuracy', np.nan)
  ks = np.array([0.0] + list(summary['fractions']) + [1.0])
  curves = {}
  for name in summary['measures']:
    by_k = {r['k']: r.get('accuracy', np.nan) for r in summary['rows'] if r['measure'] == name}
    curves[name] = np.array([summary['base']['accuracy']] + [by_k.get(k, np.nan) for k in summary['fractions']]
                            + [end])
  fig, ax = new_figure(figsize=(5, 3.5))
  _draw(ax, ks, curves, {}, labels or {})
  ax.set_title(('recursive ROAR' if summary.get('recursive') else 'ROAR') + f' (seed {summary["seed"]})',
               fontsize=9)
  return save(fig, os.path.join(directory, 'recursive_roar' if summary.get('recursive') else 'roar'))


def study_curves(ks: np.ndarray, means: dict, intervals: dict, title: str, stem: str,
                 labels: dict | None = None) -> list[str]:
  """A row's ROAR curves over seeds.

  Args:
    ks: [K] fractions (0 first: the base models).
    means: {measure: [K] mean accuracy over seeds}.
    intervals: {measure: ([K] low, [K] high)} 95 % intervals over seeds.
    title: the figure's title.
    stem: path without extension.
    labels: {measure name: legend label}.

  Returns:
    The written paths (PNG and SVG).
  """
  fig, ax = new_figure(figsize=(5, 3.5))
  _draw(ax, np.asarray(ks), means, intervals, labels or {})
  ax.set_title(title, fontsize=9)
  return save(fig, stem)
