"""S&S's appendix results for their own models: Figures 4/8 (negative ΔJS
binned by Δα), Figure 11 (attention mass zeroed at the first flip, per
ranking) and Figures 12–13 (the single-weight test on the top item of the
gradient and of the gradient × attention ranking), each as a table with
S&S's published counts beside it and as a figure (PNG + SVG).

Rows come from the erasure summaries (`serrano_smith_runs.ModelRun`); a summary from
before the erasure stage's version 2 has no Figure 11 quartiles or Figures
12–13 tests, and shows '–' there.
"""

import os
from typing import Optional

import numpy as np
from matplotlib.patches import Patch

from attn_jax.papers import published
from attn_jax.plots import figures
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.serrano_smith_runs import DATASET_LABELS, MODELS, RANKINGS, _by, _pct, datasets, single_cells

OTHER_TOPS = {'gradient': 'i*_g (Fig. 12)', 'gradient_x_attention': 'i*_p (Fig. 13)'}
BINS = 10  # Δα bins of width 0.1 (the erasure stage's)


def _analysed(runs):
  return [r for r in runs if r.erasure is not None]


def _each(runs):
  """(dataset, model, run) for every analysed run, in S&S's order."""
  done = _analysed(runs)
  for d in datasets(done):
    for model in MODELS:
      r = _by(done, d, model)
      if r is not None:
        yield d, model, r


# ------------------------------------------------------------ Δα (Figs. 4/8)

def delta_alpha_bins(summary: dict) -> list[dict]:
  return summary.get('single_weight', {}).get('delta_js_negative_by_delta_alpha') or []


def share_at_least(summary: Optional[dict], threshold: float = 0.3) -> Optional[float]:
  """The share of tested instances whose Δα = α_{i*} − α_r is ≥ `threshold`
  (a bin edge), from the binned counts."""
  bins = delta_alpha_bins(summary or {})
  total = sum(b['n'] for b in bins)
  if not total:
    return None
  return sum(b['n'] for b in bins if b['delta_alpha'][0] >= threshold - 1e-9) / total


def delta_alpha_rows(runs) -> list[list[str]]:
  """Figures 4/8 as numbers: per Δα bin, instances with ΔJS < 0 / instances."""
  edges = [f'{i / BINS:.1f}–{(i + 1) / BINS:.1f}' for i in range(BINS)]
  rows = [['dataset', 'model', 'Δα ≥ 0.3 (%)'] + [f'Δα {e}' for e in edges]]
  for d, model, r in _each(runs):
    bins = delta_alpha_bins(r.erasure)
    share = share_at_least(r.erasure)
    rows.append([DATASET_LABELS[d], model, _pct(None if share is None else 100 * share)]
                + [f'{b["delta_js_negative"]} / {b["n"]}' for b in bins])
  return rows


def delta_alpha_figure(runs, stem: str) -> list[str]:
  """S&S Figures 4/8: counts of negative ΔJS by Δα bin, a panel per model."""
  rows = list(_each(runs))
  found = datasets(_analysed(runs))
  if not rows:
    return []
  fig, axes = figures.new_figure(len(found), len(MODELS), figsize=(2.2 * len(MODELS), 2.4 * len(found)))
  axes = np.atleast_2d(axes)
  centres = (np.arange(BINS) + 0.5) / BINS
  for i, d in enumerate(found):
    for j, model in enumerate(MODELS):
      ax = axes[i, j]
      r = next((r for dd, m, r in rows if dd == d and m == model), None)
      if r is None:
        ax.set_axis_off()
        continue
      counts = [b['delta_js_negative'] for b in delta_alpha_bins(r.erasure)]
      ax.bar(centres[:len(counts)], counts, width=0.9 / BINS, color='C3')
      ax.set_title(f'{model}, {DATASET_LABELS[d].split(" (")[0]}', fontsize=7)
      ax.tick_params(labelsize=6)
      if i == len(found) - 1:
        ax.set_xlabel('Δα = α_i* − α_r', fontsize=7)
      if j == 0:
        ax.set_ylabel('instances with ΔJS < 0', fontsize=7)
  fig.tight_layout()
  return figures.save(fig, stem)


# ------------------------------------------------------------ mass (Fig. 11)

def _mass(summary, ranking) -> Optional[dict]:
  return ((summary or {}).get('removal', {}).get(ranking) or {}).get('attention_mass_percentiles')


def mass_rows(runs) -> list[list[str]]:
  """Figure 11 as numbers: the original attention mass zeroed at the first
  flip, median [quartiles] per ranking (mean where only that was kept), and
  how far the gradient and product rankings' medians sit below attention's."""
  rows = [['dataset', 'model'] + [k.replace('_', ' ') for k in RANKINGS]
          + ['attention − gradient', 'attention − grad×α']]
  for d, model, r in _each(runs):
    cells = []
    for k in RANKINGS:
      q = _mass(r.erasure, k)
      removal = r.erasure['removal'].get(k) or {}
      if q:
        cells.append(f'{q["50"]:.2f} [{q["25"]:.2f}–{q["75"]:.2f}]')
      elif removal.get('mean_attention_mass_removed') is not None:
        cells.append(f'mean {removal["mean_attention_mass_removed"]:.2f}')
      else:
        cells.append('–')
    shifts = [mass_shift(r.erasure, k) for k in ('gradient', 'gradient_x_attention')]
    rows.append([DATASET_LABELS[d], model] + cells + [_pct(s, 2) for s in shifts])
  return rows


def mass_shift(summary, ranking) -> Optional[float]:
  """Median mass zeroed by attention's ranking minus `ranking`'s (S&S: often ≥ 0.25)."""
  a, b = _mass(summary, 'attention'), _mass(summary, ranking)
  return None if not a or not b else a['50'] - b['50']


def mass_figure(runs, stem: str) -> list[str]:
  """S&S Figure 11: a box per ranking (5th–95th percentile whiskers)."""
  return ranking_boxes(runs, stem, 'attention_mass_percentiles',
                       'attention mass zeroed\nat the first flip')


def ranking_boxes(runs, stem: str, key: str, ylabel: str) -> list[str]:
  """Per dataset, per model, a box per ranking of the percentiles stored
  under `key` in each ranking's removal summary."""
  done = _analysed(runs)
  found = datasets(done)
  if not found:
    return []
  fig, axes = figures.new_figure(len(found), 1, figsize=(10, 3.3 * len(found)))
  axes = np.atleast_1d(axes)
  colours = dict(zip(RANKINGS, ('C0', 'C7', 'C2', 'C3', 'C1')))
  drawn = False
  for ax, d in zip(axes, found):
    stats, positions, colour_of = [], [], []
    for i, model in enumerate(MODELS):
      r = _by(done, d, model)
      for j, ranking_name in enumerate(RANKINGS):
        q = (r.erasure['removal'].get(ranking_name) or {}).get(key) if r else None
        if not q:
          continue
        stats.append({'med': q['50'], 'q1': q['25'], 'q3': q['75'], 'whislo': q['5'],
                      'whishi': q['95'], 'label': ''})
        positions.append(i * (len(RANKINGS) + 1) + j)
        colour_of.append(colours[ranking_name])
    if stats:
      drawn = True
      boxes = ax.bxp(stats, positions=positions, showfliers=False, patch_artist=True, widths=0.8)
      for patch, colour in zip(boxes['boxes'], colour_of):
        patch.set_facecolor(colour)
    ax.set_xticks([i * (len(RANKINGS) + 1) + 2 for i in range(len(MODELS))], MODELS)
    ax.set_ylabel(ylabel)
    ax.set_title(DATASET_LABELS[d], fontsize=9)
  if not drawn:
    return []
  handles = [Patch(facecolor=colours[k], label=k.replace('_', ' ')) for k in RANKINGS]
  axes[0].legend(handles=handles, fontsize=7, ncol=len(RANKINGS), loc='upper right')
  fig.tight_layout()
  return figures.save(fig, stem)


# ------------------------------------------------------------ other tops (Figs. 12–13)

def _flips(summary, key) -> Optional[float]:
  """The "yes" row of a single-weight test: % of instances where erasing the tested i* flips."""
  cells = single_cells(summary, None if key == 'single_weight' else key)
  return None if cells[0] is None else cells[0] + cells[1]


def other_tops_rows(runs) -> list[list[str]]:
  """Figures 12–13 as numbers: the single-weight test's four cells (both /
  i* only / r only / neither, %) with i* the top-attended item (Table 2),
  the gradient ranking's top item, and the product ranking's."""
  rows = [['dataset', 'model', 'i* = top α (Table 2)'] + list(OTHER_TOPS.values())
          + ['i* flips: α / gradient / grad×α (%)']]
  for d, model, r in _each(runs):
    cells = [' / '.join(_pct(x) for x in single_cells(r.erasure))]
    cells += [' / '.join(_pct(x) for x in single_cells(r.erasure, k)) for k in OTHER_TOPS]
    yes = [_flips(r.erasure, 'single_weight')] + [_flips(r.erasure, k) for k in OTHER_TOPS]
    rows.append([DATASET_LABELS[d], model] + cells + [' / '.join(_pct(x) for x in yes)])
  return rows


def other_tops_counts(runs) -> dict:
  """{ranking: (models where its top item flips less often / more often than
  the top-attended item's, models tested)}: S&S's "14 of 24" and "all 24"."""
  out = {}
  for k in OTHER_TOPS:
    pairs = [(_flips(r.erasure, 'single_weight'), _flips(r.erasure, k)) for _, _, r in _each(runs)]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    out[k] = (sum(b < a for a, b in pairs), sum(b > a for a, b in pairs), len(pairs))
  return out


def other_tops_notes(runs) -> list[str]:
  counts = other_tops_counts(runs)
  fewer, _, n = counts['gradient']
  _, more, n_p = counts['gradient_x_attention']
  return [f'The gradient ranking\'s top item flips the decision less often than the top-attended item '
          f'in {fewer} of {n} models (S&S: {published.SERRANO_SMITH_FIG12_FEWER[0]} of '
          f'{published.SERRANO_SMITH_FIG12_FEWER[1]}); the product ranking\'s top item more often in '
          f'{more} of {n_p} (S&S: {published.SERRANO_SMITH_FIG13_MORE[0]} of '
          f'{published.SERRANO_SMITH_FIG13_MORE[1]}).']


# The tables, in the order they print: adding one is a registration here.
TABLES.register(Table('ss-delta-alpha', 'paper', 10, delta_alpha_rows, paper='ss', command='ss',
                      title='S&S Figures 4/8: Δα, the top weight minus a random one'))
TABLES.register(Table('ss-mass', 'paper', 20, mass_rows, paper='ss', command='ss',
                      title='S&S Figure 11: attention mass removed at the first flip, by ranking'))
TABLES.register(Table('ss-other-tops', 'paper', 30, other_tops_rows, paper='ss', command='ss',
                      title='S&S Figures 12-13: the single-weight test on the top gradient and '
                            'gradient × attention items', notes=other_tops_notes))


def figures_for(runs, directory: str) -> list[str]:
  """Figures 4/8 and 11 beside the saved tables."""
  return (delta_alpha_figure(runs, os.path.join(directory, 'ss_delta_alpha'))
          + mass_figure(runs, os.path.join(directory, 'ss_mass_removed')))
