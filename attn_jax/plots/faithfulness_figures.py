"""Faithfulness by erasure: ERASER's comprehensiveness and sufficiency curves
of each importance measure against the share of words removed or kept
(`attn_jax.analysis.eraser_metrics`; the `eraser` stage)."""

import os

import numpy as np

from attn_jax.plots.figures import new_figure, save


def erasure_curves(fractions, curves: dict, random: set, directory: str,
                   stem: str = 'eraser_curves') -> list[str]:
  """One model: mean comprehensiveness and sufficiency over the documents at
  each fraction k, one line per measure, random rankings dashed.

  Args:
    fractions: the K fractions of each document's words (x axis, in %).
    curves: {label: ([K] mean comprehensiveness, [K] mean sufficiency)}, in legend order.
    random: the labels of random rankings (drawn dashed, grey).
    directory: where `<stem>.png` and `<stem>.svg` go.
    stem: the files' name.

  Returns:
    The written paths.
  """
  from matplotlib import colormaps  # pylint: disable=g-import-not-at-top  (where a figure is drawn)
  percent = 100 * np.asarray(fractions, np.float64)
  # More measures than the default cycle's 10 colours: tab20's, dark then light, without
  # its greys (the random rankings are grey).
  tab20 = colormaps['tab20'].colors
  palette = [tab20[i] for i in (*range(0, 20, 2), *range(1, 20, 2)) if i not in (14, 15)]
  colours = {label: palette[i % len(palette)]
             for i, label in enumerate(label for label in curves if label not in random)}
  fig, axes = new_figure(1, 2, figsize=(9.5, 3.6))
  titles = ('comprehensiveness: p(ŷ|x) − p(ŷ|x without r_k)', 'sufficiency: p(ŷ|x) − p(ŷ|r_k alone)')
  for panel, (ax, title) in enumerate(zip(axes, titles)):
    for label, values in curves.items():
      dashed = label in random
      ax.plot(percent, values[panel], marker='o', ms=3, lw=1.2, label=label,
              linestyle='--' if dashed else '-', color='grey' if dashed else colours[label])
    ax.axhline(0.0, color='black', lw=0.5)
    ax.set_xscale('log')
    ax.set_xticks(percent, [f'{p:g}' for p in percent])
    ax.minorticks_off()  # the log axis's own ticks would label other k
    ax.set_xlabel('k: % of the words (the top-ranked)')
    ax.set_title(title, fontsize=9)
  axes[0].set_ylabel('mean over the documents')
  axes[1].legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1.0))
  return save(fig, os.path.join(directory, stem))
