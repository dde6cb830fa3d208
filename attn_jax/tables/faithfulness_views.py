"""Which measure is faithful, three ways, for the same rows: agreement (J&W's
Kendall τ of α with leave-one-out and with their gradient, from the J&W
grid or QA study), erasure without retraining (ERASER's AOPC above random,
the `eraser` stage over seeds) and removal with retraining (ROAR's area
between random's accuracy curve and the measure's, the `roar` study).

    python -m attn_jax.tables.faithfulness_views \\
        --row sst_bilstm_tanh results/jw_grid/sst_bilstm_tanh results/eraser/jw_grid/sst_bilstm_tanh-3seeds \\
        --roar results/roar --readme docs/faithfulness.md

Each cell is a mean ± 95 % Student-t half-width over seeds with the verdict
of `verdicts.compare` against random (ERASER: paired by seed at the stage's
margin; ROAR: the seeds' ABC against 0 at 0.02). Whether ERASER and ROAR
order the measures alike is read off the means: Kendall's τ between the
two orders and the pairs of measures they put in the same order — a
description of these seeds, not a test.
"""

import argparse
import itertools
import os

import numpy as np

from attn_jax.analysis import statistics, verdicts
from attn_jax.tables import faithfulness, faithfulness_roar_report as roar, study_results
from attn_jax.tables.common import plain, root_of, with_notes, write_blocks

BLOCK = 'faithfulness-views'
HEADER = ['row', 'measure', 'τ(α, measure), J&W', 'ERASER comp. − random', 'ERASER random − suff.',
          'ROAR ABC', 'recursive ROAR ABC']


def _cell(values, test=None) -> str:
  ci = statistics.t_interval(values)
  if not ci['n']:
    return '–'
  text = study_results.cell(ci)
  return text if test is None else f'{text} {verdicts.SYMBOLS[test["verdict"]]}'


def _eraser(arm_dir: str) -> dict:
  """{measure: {metric: (per-seed differences from random, test)}} of an arm's eraser summaries."""
  summaries = faithfulness.arm_summaries(arm_dir) if arm_dir and os.path.isdir(arm_dir) else []
  if not summaries:
    return {}
  out = {}
  names = [n for n in summaries[0]['measures'] if n != 'random']
  for metric, sign in (('comprehensiveness', 1.0), ('sufficiency', -1.0)):
    for n in names:
      if not all(n in s['aopc'][metric]['means'] for s in summaries):
        continue
      diff = [sign * (s['aopc'][metric]['means'][n]['mean'] - s['aopc'][metric]['means']['random']['mean'])
              for s in summaries]
      margin = summaries[0]['margin']
      out.setdefault(n, {})[metric] = (diff, verdicts.compare(diff, 0.0, margin) if len(diff) > 1 else None)
  return out


def _roar(arm_dir: str, experiment: str) -> dict:
  """{measure: (per-seed ABC, test against 0)} of an arm's ROAR summaries."""
  summaries = roar._summaries(arm_dir, experiment) if arm_dir and os.path.isdir(arm_dir) else []  # pylint: disable=protected-access
  out = {}
  for summary in summaries:
    ks, curves = roar.seed_curves(summary)
    for n, (abc, _) in roar.areas(ks, curves).items():
      if n != roar.RANDOM:
        out.setdefault(n, []).append(abc)
  return {n: (v, verdicts.compare(v, 0.0, roar.MARGIN) if len(v) > 1 else None) for n, v in out.items()}


def _order_agreement(a: dict, b: dict) -> tuple[float, int, int, list, list]:
  """Kendall's τ-a of two {measure: mean} over their common measures, pairs in the same order, pairs."""
  common = [n for n in a if n in b]
  pairs = list(itertools.combinations(common, 2))
  same = sum(1 for x, y in pairs if np.sign(a[x] - a[y]) == np.sign(b[x] - b[y]) != 0)
  opposite = sum(1 for x, y in pairs if np.sign(a[x] - a[y]) == -np.sign(b[x] - b[y]) != 0)
  tau = (same - opposite) / len(pairs) if pairs else float('nan')
  return tau, same, len(pairs), sorted(common, key=lambda n: -a[n]), sorted(common, key=lambda n: -b[n])


def rows(name: str, grid_arm: str, eraser_arm: str, roar_arm: str) -> tuple[list, list]:
  """One row's table rows (a line per measure) and its notes."""
  taus = study_results.collect_arm(grid_arm)['values'] if grid_arm and os.path.isdir(grid_arm) else {}
  erased, plain_roar = _eraser(eraser_arm), _roar(roar_arm, 'roar')
  recursive = _roar(roar_arm, 'recursive_roar')
  names = list(dict.fromkeys([*erased, *plain_roar, *recursive]))
  out = []
  for n in names:
    tau = _cell(taus.get('tau_attention_loo', [])) if n == 'leave_one_out' else ''
    comp = erased.get(n, {}).get('comprehensiveness')
    suff = erased.get(n, {}).get('sufficiency')
    out.append([name, n, tau, _cell(*comp) if comp else '–', _cell(*suff) if suff else '–',
                _cell(*plain_roar[n]) if n in plain_roar else '–', _cell(*recursive[n]) if n in recursive else '–'])
  notes = []
  if taus.get('tau_attention_gradient'):
    notes.append(f'{name}: τ(α, J&W gradient) {_cell(taus["tau_attention_gradient"])} over '
                 f'{statistics.t_interval(taus["tau_attention_gradient"])["n"]} seeds (the J&W study\'s)')
  means_e = {n: float(np.mean(v['comprehensiveness'][0])) for n, v in erased.items() if 'comprehensiveness' in v}
  means_r = {n: float(np.mean(v[0])) for n, v in plain_roar.items()}
  if len(set(means_e) & set(means_r)) >= 2:
    tau, same, total, order_e, order_r = _order_agreement(means_e, means_r)
    notes.append(f'{name}: ERASER comprehensiveness orders the measures {" > ".join(order_e)}; ROAR '
                 f'{" > ".join(order_r)}: {same} of {total} pairs in the same order (Kendall τ-a {tau:.2f})')
  return out, notes


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--row', action='append', nargs=3, default=[], metavar=('NAME', 'GRID_ARM', 'ERASER_ARM'),
                      help='a row: its name (its folder in --roar), the J&W study arm holding its τ, and the '
                           'study arm holding its eraser results (repeatable)')
  parser.add_argument('--roar', required=True, help='the roar study root (<NAME>/ arms)')
  parser.add_argument('--readme', action='append', default=[])
  args = parser.parse_args(argv)
  table, notes = [HEADER], []
  for name, grid_arm, eraser_arm in args.row:
    r, n = rows(name, grid_arm, eraser_arm, os.path.join(args.roar, name))
    table += r
    notes += n
  notes.append('mean ± 95 % Student-t half-width over seeds; ERASER: each seed\'s mean AOPC minus random\'s '
               '(sufficiency: random\'s minus the measure\'s, so larger is more faithful in every column); ROAR: '
               'ABC = ∫(random − measure) dk; each against 0: ' + verdicts.LEGEND)
  print(plain(table) + '\n' + '\n'.join(notes))
  for readme in args.readme:
    write_blocks(readme, BLOCK, with_notes(table, notes),
                 'python -m attn_jax.tables.faithfulness_views ' + ' '.join(
                     [f'--row {" ".join(r)}' for r in args.row] + [f'--roar {args.roar}']),
                 _sources(args, readme), optional=True)


def _sources(args, readme: str) -> list[str]:
  """The files the table reads that exist: the ROAR summaries, the eraser summaries, the J&W arms' τ."""
  base = root_of(readme)
  found = []
  if any(roar._summaries(os.path.join(args.roar, name), e) for name, _, _ in args.row for e, _ in roar.EXPERIMENTS):  # pylint: disable=protected-access
    found.append(f'{os.path.relpath(args.roar, base)}/<row>/<seed>/experiments/*/summary.json')
  for _, grid_arm, eraser_arm in args.row:
    if faithfulness.arm_summaries(eraser_arm):
      found.append(f'{os.path.relpath(eraser_arm, base)}/<seed>/analyses/eraser/*/summary.json')
    if os.path.isdir(grid_arm):
      found.append(f'{os.path.relpath(grid_arm, base)}/<seed>/analyses/kendall/*/summary.json')
  return found


if __name__ == '__main__':
  main()
