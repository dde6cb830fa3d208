"""The ROAR study's table and figure (`attn_jax.studies.faithfulness_roar`,
`Study.kind` 'roar'): per row and per measure, how far below random's its
accuracy curve lies once its top words are masked and the model retrained.

Per seed, with curves over k = 0 (the row's model), the study's fractions,
and 100 % (every word masked, the same for every measure):

    ABC  = ∫₀¹ (random(k) − measure(k)) dk       (trapezoid rule)
    RACU = clip(ABC / ∫₀¹ (random(k) − random(1)) dk, −1, 1)

ABC is the mean accuracy lost beyond random's over k; RACU is Madsen et
al.'s (2022) relative area between the curves (their `export/roar_plot.py`
computes it on macro-F1 for SST and IMDB, accuracy for bAbI; here accuracy
for every row). Each cell is the mean ± 95 % Student-t half-width over
seeds. "Above random" is the verdict function on the seeds' ABC against 0
(one sample) at margin 0.02 — the accuracy margin every comparison of
accuracies here uses, read as a mean accuracy gap over k. Measures are then
compared pairwise on ABC, paired by seed, with Holm's correction across the
pairs of a row.
"""

import itertools
import os

import numpy as np

from attn_jax.analysis import statistics, verdicts
from attn_jax.core import atomic_io
from attn_jax.plots import roar_figures
from attn_jax.tables import study_results
from attn_jax.tables.common import plain, root_of, with_notes, write_blocks
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.studies import saved, totals

EXPERIMENTS = (('roar', 'ROAR'), ('recursive_roar', 'recursive ROAR'))
RANDOM = 'random'
MARGIN = verdicts.MARGINS['accuracy']


def seed_curves(summary: dict) -> tuple[np.ndarray, dict]:
  """([K + 2] k from 0 to 1, {measure: [K + 2] accuracy}) of one seed's experiment summary."""
  ks = np.array([0.0] + list(summary['fractions']) + [1.0])
  end = (summary.get('all_masked') or {}).get('accuracy', np.nan)
  curves = {}
  for name in summary['measures']:
    by_k = {r['k']: r.get('accuracy', np.nan) for r in summary['rows'] if r['measure'] == name}
    curves[name] = np.array([summary['base']['accuracy']] + [by_k.get(k, np.nan) for k in summary['fractions']]
                            + [end], float)
  return ks, curves


def areas(ks: np.ndarray, curves: dict) -> dict:
  """{measure: (ABC, RACU)} of one seed's curves against its random curve (NaN where a point is missing)."""
  random = curves[RANDOM]
  floor = np.trapezoid(random - random[-1], ks)
  out = {}
  for name, y in curves.items():
    abc = float(np.trapezoid(random - y, ks))
    out[name] = (abc, float(np.clip(abc / floor, -1, 1)) if floor > 0 else float('nan'))
  return out


def _summaries(arm_dir: str, experiment: str) -> list[dict]:
  found = []
  for member in study_results.models(arm_dir):
    path = os.path.join(member, 'experiments', experiment, 'summary.json')
    if os.path.exists(path):
      found.append(atomic_io.read_json(path))
  return found


def arm_rows(label: str, summaries: list[dict], figure_stem: str | None) -> tuple[list, list, list]:
  """Table rows, verdict tests and notes of one arm's experiment over its seeds."""
  curves = [seed_curves(s) for s in summaries]
  names = list(summaries[0]['measures'])
  ks = curves[0][0]
  by_measure = {n: [areas(k, c)[n] for k, c in curves if n in c] for n in names}
  rows, tests = [], []
  for name in names:
    abc = [a for a, _ in by_measure[name]]
    racu = [r for _, r in by_measure[name]]
    cells = [study_results.cell(statistics.t_interval(abc)), study_results.cell(statistics.t_interval(racu))]
    if name == RANDOM:
      cells.append('(baseline)')
    else:
      test = verdicts.compare(abc, 0.0, MARGIN)
      tests.append(test)
      cells.append(f'{verdicts.SYMBOLS[test["verdict"]]} {verdicts.SHORT[test["verdict"]]}')
    rows.append([label, name, str(len(abc)), *cells])
  pairs = [(a, b) for a, b in itertools.combinations([n for n in names if n != RANDOM], 2)]
  pair_tests = [verdicts.compare([x for x, _ in by_measure[a]], [x for x, _ in by_measure[b]], MARGIN, paired=True)
                for a, b in pairs]
  holm = verdicts.holm_verdicts(pair_tests) if pair_tests else []
  order = sorted((n for n in names if n != RANDOM), key=lambda n: -np.nanmean([a for a, _ in by_measure[n]]))
  notes = [f'{label}: measures by mean ABC, largest first: {", ".join(order)}']
  differing = [f'{a} vs {b}' for (a, b), v in zip(pairs, holm) if v == verdicts.DIFFERENT]
  notes.append(f'{label}: pairs of measures different in ABC (paired by seed, Holm): '
               + (', '.join(differing) if differing else 'none') + f' of {len(pairs)}')
  if figure_stem:
    stacked = {n: np.stack([c[n] for _, c in curves if n in c]) for n in names}
    means = {n: np.nanmean(v, axis=0) for n, v in stacked.items()}
    bands = {}
    for n, v in stacked.items():
      cis = [statistics.t_interval(v[:, j]) for j in range(v.shape[1])]
      bands[n] = (np.array([c['mean'] - c['half_width'] if c['n'] > 1 else c['mean'] for c in cis]),
                  np.array([c['mean'] + c['half_width'] if c['n'] > 1 else c['mean'] for c in cis]))
    roar_figures.study_curves(ks, means, bands, f'{label} ({len(curves)} seed{"" if len(curves) == 1 else "s"})', figure_stem)
  return rows, tests, notes


def rows(study, root: str, figures: str | None = None) -> tuple[list, list]:
  """The table (header first) and its notes for every arm and experiment that has results."""
  table = [['row', 'measure', 'seeds', 'ABC (accuracy × k)', 'RACU', 'above random (ABC against 0)']]
  tests, notes = [], []
  for arm in study.arms:
    arm_dir = os.path.join(root, study.folder_name(arm))
    for experiment, title in EXPERIMENTS:
      summaries = _summaries(arm_dir, experiment)
      if not summaries:
        continue
      label = f'{arm.name} {title}'
      stem = os.path.join(figures, f'{arm.name}_{experiment}') if figures else None
      r, t, n = arm_rows(label, summaries, stem)
      table += r
      tests += t
      notes += n
  counted = verdicts.count(tests)
  notes.append(f'measures against random: {counted["tested"]} tested: {verdicts.describe_counts(counted)}')
  notes.append(f'ABC = ∫(random − measure) dk over k = 0 … 1 (trapezoid), RACU = ABC / ∫(random − random(1)) dk '
               f'clipped to [−1, 1] (Madsen et al. 2022); mean ± 95 % Student-t half-width over seeds; '
               f'margin {MARGIN:g}: {verdicts.LEGEND}')
  return table, notes


def table(study, root: str, save_to, readme, reference) -> list[list[str]]:
  """Prints the table, draws each row's figure beside the saved results, and
  rewrites the `roar-table` block of the `readme` files that hold it."""
  del reference
  root = saved(study, root, save_to)
  table_rows, notes = rows(study, root, figures=os.path.join(root, 'figures') if save_to else None)
  notes += totals(study, root)
  print(plain(table_rows) + '\n' + '\n'.join(notes))
  if readme:
    source = os.path.relpath(root, root_of(readme))
    ran = [e for e, _ in EXPERIMENTS if any(_summaries(os.path.join(root, study.folder_name(a)), e)
                                            for a in study.arms)]
    write_blocks(readme, f'{study.name}-table', with_notes(table_rows, notes),
                 f'python -m attn_jax.studies report {study.name} --root={source}',
                 [f'{source}/<arm>/<seed>/experiments/{e}/summary.json' for e in ran] + [f'{source}/study.json'],
                 optional=True)
  return table_rows


TABLES.register(Table('roar', 'study', 90, table, paper='faithfulness'))
