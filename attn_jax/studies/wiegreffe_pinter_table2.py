"""W&P's Table 2 on SST with seeds, beside W&P's own code on the same inputs:
BiLSTM + tanh with learned attention against the same model with uniform
attention (α = 1/n over the words; W&P §3.2, ALGORITHMS.md §C.1), 5 seeds
each, test F1 (positive class) as mean ± 95 % CI.

    python -m attn_jax.studies run wp_table2 --reuse=workdirs/jw_grid_fixed
    python -m attn_jax.studies report wp_table2 --root=workdirs/wp_table2 --save=results/wp_table2

The learned arm is the J&W grid's `sst_bilstm_tanh` (same config: `--reuse`
of a grid root lends its trained models). `benchmarks/wp_reference.py` runs
W&P's code on this arm's inputs and writes `<reference>/sst_{learned,
uniform}_{test,dev}sel/seed<k>/summary.json`: `testsel` is W&P's script (its
snapshot keeps the epoch with the best *test* ROC-AUC), `devsel` their trainer
given attn-jax's dev split to select on, as attn-jax does. The report tests
attn-jax against `devsel` (the same protocol) with Welch's t-test and shows
`testsel` beside, and per implementation the gap learned − uniform with a
Welch test of whether uniform attention is worse.
"""

import os

from attn_jax.analysis import statistics
from attn_jax.papers import published
from attn_jax.studies import collect, jain_wallace_reference
from attn_jax.studies.arms import Arm

ANALYSES = ''  # test F1 only (eval.json)
ARMS = (
    Arm('sst_learned', 'sst', 'bilstm', {'model.attention': 'tanh'}),
    Arm('sst_uniform', 'sst', 'bilstm', {'model.attention': 'tanh', 'model.projection': 'uniform'}),
)
SELECTIONS = (('devsel', "W&P's code, dev selection"), ('testsel', "W&P's code as W&P ran it (test selection)"))
STATISTIC = 'f1_pos'


def default_reference(root: str) -> str:
  """`wp_reference` beside the study's folder (results/wp_table2 -> results/wp_reference)."""
  return os.path.join(os.path.dirname(os.path.normpath(root)), 'wp_reference')


def _values(side: dict) -> list:
  return [v for v in side['values'][STATISTIC] if v is not None]


def comparison(study, root: str, reference: str) -> dict:
  """{attention: {'ours': collect_arm, selection: read_arm}} for 'learned' and 'uniform'."""
  out = {}
  for arm in study.arms:
    attention = arm.name.split('_')[1]
    out[attention] = {'ours': collect.collect_arm(os.path.join(root, study.folder_name(arm))),
                      **{sel: jain_wallace_reference.read_arm(os.path.join(reference, f'sst_{attention}_{sel}'))
                         for sel, _ in SELECTIONS}}
  return out


def _cell(values: list) -> str:
  ci = statistics.t_interval(values)
  return collect.cell(ci) + (f' (n={ci["n"]})' if ci['n'] else '')


def _welch(a: list, b: list) -> str:
  test = statistics.welch_t_test(a, b)
  if test['p'] is None:
    return '–'
  return 'agree' if test['p'] >= jain_wallace_reference.ALPHA else (
      f'differ (p={test["p"]:.3f})' if test['p'] >= 0.001 else 'differ (p<0.001)')


def rows(study, root: str, reference: str) -> tuple[list[list[str]], list[str]]:
  """The table (per attention: attn-jax, W&P's code with each selection,
  W&P's published F1, Welch attn-jax vs W&P dev selection) and its notes
  (learned − uniform per implementation)."""
  paper = published.WIEGREFFE_PINTER_TABLE2['sst']
  c = comparison(study, root, reference)
  table = [['attention', 'F1: attn-jax', *[f'F1: {label}' for _, label in SELECTIONS], 'F1: W&P published',
            'Welch: attn-jax vs W&P code (dev selection)']]
  for attention, key in (('learned', 'attention'), ('uniform', 'uniform')):
    sides = c[attention]
    table.append([attention, _cell(_values(sides['ours'])),
                  *[_cell(_values(sides[sel])) for sel, _ in SELECTIONS], f'{paper[key]:.3f}',
                  _welch(_values(sides['ours']), _values(sides['devsel']))])
  notes = [f'W&P published: learned − uniform = {paper["attention"] - paper["uniform"]:+.3f}']
  for side, label in (('ours', 'attn-jax'), *SELECTIONS):
    learned, uniform = _values(c['learned'][side]), _values(c['uniform'][side])
    if learned and uniform:
      gap = sum(learned) / len(learned) - sum(uniform) / len(uniform)
      notes.append(f'{label}: learned − uniform = {gap:+.3f} '
                   f'(Welch, learned vs uniform: {_welch(learned, uniform)})')
  return table, notes
