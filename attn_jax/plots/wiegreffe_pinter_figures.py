"""Wiegreffe & Pinter's figures, from an experiment's results (PNG and SVG).

Seed variance by max-attention bin beside J&W's adversary (W&P Fig. 3),
the consistent adversary's JSD-vs-TVD trade-off along λ (Fig. 5), and bars
for the uniform baseline (Table 2) and the guided MLP (Table 3) with W&P's
published F1 marked.
"""

import os

import numpy as np

from attn_jax.papers import published
from attn_jax.plots.analysis_figures import CLASSES
from attn_jax.plots.figures import new_figure, save

MAX_ATTENTION_EDGES = (0.25, 0.5, 0.75)  # bins [0,.25), [.25,.5), [.5,.75), [.75,1]
BIN_LABELS = ('[0, .25)', '[.25, .5)', '[.5, .75)', '[.75, 1]')
GUIDE_ORDER = ('uniform', 'trained_mlp', 'base', 'adversary')


def _class_violins(ax, values: np.ndarray, bins: np.ndarray, predicted: np.ndarray) -> None:
  """One violin per (bin, predicted class), the classes side by side."""
  for name, c, color in CLASSES:
    offset = -0.2 if c == 0 else 0.2
    groups = [(b, values[(bins == b) & (predicted == c) & np.isfinite(values)])
              for b in range(len(BIN_LABELS))]
    groups = [(b, g) for b, g in groups if len(g)]
    if not groups:
      continue
    parts = ax.violinplot([g for _, g in groups], positions=[b + offset for b, _ in groups],
                          widths=0.38, showmedians=True)
    for body in parts['bodies']:
      body.set_facecolor(color)
    for lines in ('cmedians', 'cmins', 'cmaxes', 'cbars'):
      parts[lines].set_color(color)
    ax.plot([], [], color=color, lw=6, alpha=0.5, label=f'predicted {name}')
  ax.set_xticks(range(len(BIN_LABELS)), BIN_LABELS, fontsize=8)
  ax.set_xlabel('base model max attention')


def seed_violins(arrays: dict, directory: str) -> list[str]:
  """W&P Fig. 3: per-instance median over seeds of JSD(α_base, α_seed) by the
  base model's max-attention bin, split by its predicted class; beside it J&W's
  adversary max JSD (`adversary_max_jsd`, NaN where not analysed) in the same
  layout, omitted when nothing was analysed.

  arrays: median_jsd [N], max_attention [N], predicted [N], adversary_max_jsd [N].
  """
  bins = np.digitize(arrays['max_attention'], MAX_ATTENTION_EDGES)
  predicted = np.asarray(arrays['predicted'])
  adversary = np.asarray(arrays.get('adversary_max_jsd', np.full(len(bins), np.nan)), float)
  panels = [('median JSD over seeds', np.asarray(arrays['median_jsd'], float))]
  if np.isfinite(adversary).any():
    panels.append(('J&W adversary max JSD', adversary))
  fig, axes = new_figure(1, len(panels), figsize=(5 * len(panels), 3.5), sharey=True, squeeze=False)
  for ax, (title, values) in zip(axes[0], panels):
    _class_violins(ax, values, bins, predicted)
    ax.set_title(title)
  # JSD with natural log lies in [0, ln 2].
  axes[0][0].set_ylim(-0.02, np.log(2) + 0.02)
  axes[0][0].set_ylabel('JS divergence')
  axes[0][0].legend(fontsize=8, loc='upper left')
  return save(fig, os.path.join(directory, 'seed_jsd_violins'))


def _lambda_scale(ax, lambdas: list[float]) -> None:
  positive = [l for l in lambdas if l > 0]
  if positive and len(positive) == len(lambdas):
    ax.set_xscale('log')
  elif positive:  # λ = 0 has no place on a log axis
    ax.set_xscale('symlog', linthresh=min(positive))


def tradeoff_curve(summary: dict, directory: str) -> list[str]:
  """W&P Fig. 5: mean JSD(α_base, α_adv) against mean TVD ½|Δp| on the test
  split along the λ sweep, J&W's per-instance adversary as one '+'; beside it
  the adversaries' F1 against λ, the base model's as a dashed line. Diverged
  adversaries (rows with 'failed') are left out."""
  rows = sorted((r for r in summary['rows'] if 'failed' not in r), key=lambda r: r['lambda'])
  fig, (left, right) = new_figure(1, 2, figsize=(10, 3.8))
  fig.set_layout_engine('constrained')
  tvd = [r['mean_tvd'] for r in rows]
  jsd = [r['mean_jsd'] for r in rows]
  left.plot(tvd, jsd, marker='o', color='tab:blue', label='consistent adversary')
  # Points crowd where JSD saturates: label one only when it is clear of the
  # last labelled one (in fractions of each axis' span), so labels stay legible.
  span_x, span_y = (max(tvd) - min(tvd)) or 1.0, (max(jsd) - min(jsd)) or 1.0
  last = None
  for r, x, y in zip(rows, tvd, jsd):
    if last is None or max(abs(x - last[0]) / span_x, abs(y - last[1]) / span_y) > 0.15:
      left.annotate(f'λ={r["lambda"]:g}', (x, y), textcoords='offset points', xytext=(4, 4), fontsize=7)
      last = (x, y)
  jw = summary.get('jw_adversary')
  if jw:
    left.plot([jw['mean_tvd']], [jw['mean_jsd']], marker='+', ms=12, mew=2, ls='none',
              color='tab:red', label='J&W adversary')
  left.margins(0.15)  # room for the λ labels
  left.set_xlabel('mean TVD ½|Δp| (test)')
  left.set_ylabel('mean JSD(α_base, α_adv) (test)')
  left.legend(fontsize=8)
  lambdas = [r['lambda'] for r in rows]
  right.plot(lambdas, [r['f1_pos'] for r in rows], marker='o', color='tab:blue', label='adversary')
  base = summary.get('base')
  if base:
    right.axhline(base['f1_pos'], color='grey', ls='--', lw=1, label='base model')
  _lambda_scale(right, lambdas)
  right.set_xlabel('λ')
  right.set_ylabel('F1 (positive class)')
  right.legend(fontsize=8)
  return save(fig, os.path.join(directory, 'consistent_adversary_tradeoff'))


def _bars_with_paper(ax, labels: list[str], measured: list[float], paper: list) -> None:
  """Bars of the measured values, W&P's published ones as black ticks."""
  x = np.arange(len(labels))
  ax.bar(x, measured, color='tab:blue', alpha=0.7, label='measured')
  for i, v in enumerate(measured):  # inside the bar: the published tick sits on its top
    ax.text(i, v / 2, f'{v:.3f}', ha='center', va='center', color='white', fontsize=8)
  shown = [(i, p) for i, p in enumerate(paper) if p is not None]
  if shown:
    ax.plot([i for i, _ in shown], [p for _, p in shown], marker='_', ms=24, mew=2, ls='none',
            color='black', label='W&P published')
  ax.set_xticks(x, labels, fontsize=8)
  ax.set_ylim(0, 1.25)  # the legend above the bars
  ax.set_yticks(np.linspace(0, 1, 6))
  ax.legend(fontsize=8, loc='upper right', ncols=2)


def guide_bars(summary: dict, directory: str) -> list[str]:
  """W&P Table 3: the diagnostic MLP's test F1 with each guide's attention."""
  rows = sorted(summary['rows'], key=lambda r: (GUIDE_ORDER.index(r['guide'])
                                               if r['guide'] in GUIDE_ORDER else len(GUIDE_ORDER), r['guide']))
  paper = published.WIEGREFFE_PINTER_TABLE3.get(summary.get('dataset'), {})
  fig, ax = new_figure(figsize=(5, 3.5))
  _bars_with_paper(ax, [r['guide'] for r in rows], [r['f1_pos'] for r in rows],
                   [paper.get(r['guide']) for r in rows])
  ax.set_ylabel('F1 (positive class)')
  ax.set_title(f'MLP with imposed attention ({summary.get("dataset", "?")})')
  return save(fig, os.path.join(directory, 'guide_f1_bars'))


def uniform_bars(summary: dict, directory: str) -> list[str]:
  """W&P Table 2: the base model against its uniform-attention twin, F1,
  accuracy and ROC-AUC side by side; W&P published F1 only."""
  paper = published.WIEGREFFE_PINTER_TABLE2.get(summary.get('dataset'), {})
  fig, axes = new_figure(1, 3, figsize=(10, 3.2), sharey=True)
  for ax, metric in zip(axes, ('f1_pos', 'accuracy', 'roc_auc')):
    published_values = ([paper.get('attention'), paper.get('uniform')] if metric == 'f1_pos'
                        else [None, None])
    _bars_with_paper(ax, ['learned', 'uniform'],
                     [summary['learned'][metric], summary['uniform'][metric]], published_values)
    ax.set_title(metric)
  return save(fig, os.path.join(directory, 'uniform_vs_learned_bars'))
