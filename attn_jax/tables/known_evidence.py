"""Known evidence, as the reports show it: which importance measure ranks the
supporting facts' words highest (`attn_jax.stages.evidence`).

The `evidence` stage's summary gives rows of the analyses table (`report
analyses`) and a section of the reproduction report; a study whose arms run
it (the J&W QA study) gets the table and figure of `study_rows` /
`study_figure`: per arm, each measure's mean AP with its 95 % interval over
seeds. No paper publishes these numbers, so nothing stands beside them but
the chance AP of a random ranking.
"""

import os

import numpy as np

from attn_jax.analysis import statistics
from attn_jax.plots import evidence_figures
from attn_jax.tables import render
from attn_jax.tables.common import RunFolder
from attn_jax.tables.jain_wallace import HEADER, alternatives, analysis_rows
from attn_jax.tables.report_registry import SECTIONS, TABLES, PaperSections, Table
from attn_jax.tables.study_results import cell, models as collect_models
from attn_jax.stages import stage_store as store

# The measures a table shows, in this order, and their column names.
LABELS = {'alpha': 'α', 'gradient': 'J&W gradient', 'gradient_logit': 'gradient (logit)',
          'gradient_attached': 'gradient, α attached', 'gradient_l2': 'Meister g(x)',
          'loo': 'leave-one-out', 'decision_gradient': 'S&S ∂d/∂α',
          'decision_gradient_x_attention': 'S&S α·∂d/∂α'}


def evidence_rows(name: str, dataset: str, evidence: dict, model: str = '') -> list[list[str]]:
  del dataset, model  # no paper publishes these
  chance = evidence['chance']['mean_ap']
  rows = []
  for measure, m in evidence['measures'].items():
    low, high = m['bootstrap_ci95']
    rows.append([name, f'evidence AP: {LABELS.get(measure, measure)} (top word is evidence)',
                 f'{m["mean_ap"]:.3f} [{low:.3f}, {high:.3f}] ({m["top_hit"]:.2f})',
                 f'chance {chance:.3f}', 'best' if measure == evidence['best'] else ''])
  return rows


TABLES.register(Table('evidence', 'stage', 50, evidence_rows, paper='evidence'))


def _sections(runs: list[RunFolder]) -> list[render.Section]:
  analysed = [r for r in runs if r.of_paper('evidence')[0]]
  if not analysed:
    return []
  rows, notes = [HEADER], []
  for r in analysed:
    rows += analysis_rows(r.name, r.info['dataset'], {s: f.summary for s, f in r.stages.items()}, ('evidence',),
                          model=r.info['model'])
    notes += alternatives(r.path, {s: f for s, f in r.stages.items() if s == 'evidence'})
  return [render.Section('Known evidence: which measure finds the supporting facts', [
      render.Text('Average precision of the evidence words in each measure\'s ranking of the passage\'s '
                  'words (bootstrap 95 % interval over documents; in brackets the fraction of documents '
                  'whose top word is evidence). No paper publishes these: beside them is a random '
                  'ranking\'s exact expected AP (docs/known_evidence.md).'),
      render.Table(rows, tuple(notes))])]


SECTIONS.register(PaperSections(
    'evidence', 'evidence', 50, _sections,
    missing=lambda runs: None,  # only datasets with known evidence (bAbI, synthetic) run it
    ran=lambda r: 'ran' if r.of_paper('evidence')[0] else 'not run'))


# ----------------------------------------------------------------- studies

def member_values(member: str) -> dict:
  """One model's mean AP per measure and the chance AP ({} before the stage ran)."""
  found = store.most_complete(member, 'evidence')
  if found is None or not found.intact:
    return {}
  summary = found.summary
  return {**{m: v['mean_ap'] for m, v in summary['measures'].items()}, 'chance': summary['chance']['mean_ap']}


def arm_intervals(arm_dir: str) -> dict:
  """{measure or 'chance': t interval over the arm's models of the mean AP}."""
  values = [member_values(m) for m in collect_models(arm_dir)]
  names = [*LABELS, 'chance']
  return {n: statistics.t_interval([v[n] for v in values if n in v]) for n in names}


def study_rows(arms: list[tuple[str, str]]) -> list[list[str]]:
  """arms: (name, folder) -> the table: per arm the seeds, each measure's
  mean AP ± 95 % interval over seeds, chance, and the best measure."""
  rows = [['configuration', 'seeds', *LABELS.values(), 'chance', 'best (intervals apart from the next?)']]
  for name, folder in arms:
    cis = arm_intervals(folder)
    n = max((ci['n'] for ci in cis.values()), default=0)
    rows.append([name, str(n) if n else '0 (not run yet)', *[cell(cis[m]) for m in LABELS], cell(cis['chance']),
                 best_cell(cis)])
  return rows


def best_cell(cis: dict) -> str:
  """The measure with the highest mean AP, and whether its interval is apart
  from the runner-up's (2+ seeds each)."""
  ranked = sorted((ci['mean'], m) for m, ci in cis.items() if m != 'chance' and ci['n'])
  if not ranked:
    return '–'
  best, second = cis[ranked[-1][1]], (cis[ranked[-2][1]] if len(ranked) > 1 else None)
  apart = (second is not None and best['n'] > 1 and second['n'] > 1 and best['low'] > second['high'])
  return LABELS[ranked[-1][1]] + (' (yes)' if apart else ' (no)' if second is not None else '')


def headline(arms: list[tuple[str, str, str]]) -> list[str]:
  """Per encoder (arms: (name, encoder, folder)), which measure has the
  highest mean AP on most of its rows; measures with as many rows each are
  named together as a tie, in LABELS' order (the same line on every run)."""
  lines = []
  for encoder in dict.fromkeys(e for _, e, _ in arms):
    winners = [best_cell(arm_intervals(f)).split(' (')[0] for _, e, f in arms if e == encoder]
    winners = [w for w in winners if w != '–']
    if winners:
      most = max(winners.count(w) for w in winners)
      order = [label for label in LABELS.values() if label in winners]
      top = [w for w in order if winners.count(w) == most]
      others = [w for w in order if w not in top]
      lines.append(f'{encoder}: the highest mean evidence AP on {most} of {len(winners)} rows: {" and ".join(top)}'
                   + (' (tied: each on as many rows)' if len(top) > 1 else '')
                   + (f' (others: {", ".join(others)})' if others else ''))
  return lines


def study_figure(arms: list[tuple[str, str]], path: str) -> list[str]:
  rows = [(name, arm_intervals(folder)) for name, folder in arms]
  rows = [(name, {LABELS.get(m, m): ci for m, ci in cis.items()}) for name, cis in rows
          if any(ci['n'] for ci in cis.values())]
  if not rows:
    return []
  os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
  return evidence_figures.study_intervals(rows, list(LABELS.values()), path)


def chance_note(arms: list[tuple[str, str]]) -> str:
  chance = [arm_intervals(f)['chance'] for _, f in arms]
  means = [c['mean'] for c in chance if c['n']]
  return ('' if not means else
          f'chance: a random ranking\'s expected AP, {np.min(means):.3f}–{np.max(means):.3f} across the rows '
          '(it depends on how many of a passage\'s words are evidence)')
