"""The J&W grid in one table, the one the README shows: per row, attn-jax's
mean ± 95 % interval over seeds beside J&W's published value and beside J&W's
own code on the same inputs, with the verdict of the two implementations;
under it, the two counts a reader asks first, as sentences: how many rows
land within reach of the published τ (at the tolerance below and over a
range of tolerances, both implementations on the same rows), and how the
statistics compare with J&W's code.

A cell reads `0.319 ± 0.055 [0.351 ✓] · code 0.333 ± 0.103 ?`: ✓ / ✗ whether
the published value lies inside attn-jax's interval; then J&W's code's
interval and the verdict (`verdicts.SYMBOLS`: ≡ equivalent, ≡Δ equivalent
with a difference smaller than the margin, ≠ different, ? inconclusive;
`verdicts.compare` at `verdicts.MARGINS`). The per-seed detail,
F1, ROC-AUC, the adversary, the permutations and wall times are in the grid's
full table (`studies.grid_rows`) and the side-by-side table
(`studies.reference_rows`) in docs/jain_wallace.md.
"""

import os

from attn_jax.analysis import verdicts
from attn_jax.papers import published
from attn_jax.tables import jain_wallace_reference as reference_lib
from attn_jax.tables.study_results import cell, collect_arm, unfinished

COLUMNS = (('accuracy', 'accuracy'), ('tau_attention_gradient', 'τ(α, grad)'),
           ('tau_attention_loo', 'τ(α, LOO)'), ('tau_gradient_loo', 'τ(grad, LOO)'))
TAUS = tuple(stat for stat, _ in COLUMNS[1:])
VERDICT_MARKS = verdicts.SYMBOLS
# "Within reach" of a published τ: J&W's repository holds two runs of the same
# code (HEAD and commit 6af8947), whose mean τ per predicted class differ by up
# to 0.068 (`published.jain_wallace_run_to_run`); a published τ is one such
# run, so a mean within a little more than that, 0.08, is within reach. The
# count is printed over TOLERANCES too, so no reading hangs on this one value.
TOLERANCE = 0.08
TOLERANCES = (0.04, 0.06, 0.08, 0.10, 0.12)


def published_values(arm) -> dict:
  """J&W's published numbers of a study arm's configuration (classification or
  QA grid), {statistic: value}."""
  paper = {**published.JAIN_WALLACE_GRID, **published.JAIN_WALLACE_QA_GRID}.get(
      (arm.dataset, arm.encoder, arm.overrides.get('model.attention')), {})
  return {**paper.get('test', {}), **{f'tau_{p}': v[0] for p, v in paper.get('tau', {}).items() if v}}


def summary_cell(ours: dict, paper, theirs: dict, test: dict) -> str:
  """One statistic of one row: attn-jax's interval [published ✓/✗] · code
  J&W's code's interval and the verdict mark ('–' sides left out)."""
  text = cell(ours, paper=paper)
  if theirs['n']:
    text += f' · code {cell(theirs)}' + (f' {VERDICT_MARKS[test["verdict"]]}' if test['difference'] is not None
                                         else '')
  return text


def within_reach(means: dict, paper: dict) -> bool | None:
  """All three τ means within TOLERANCE of J&W's published values (None: a
  mean or a published value is missing)."""
  if any(means.get(s) is None or paper.get(s) is None for s in TAUS):
    return None
  return all(abs(means[s] - paper[s]) <= TOLERANCE for s in TAUS)


def rows_and_counts(study, root: str, reference: str) -> tuple[list[list[str]], dict]:
  """The table's rows (every arm of the study, in its order) and the counts
  `notes` turns into sentences."""
  rows = [['configuration', 'seeds (attn-jax / J&W code)', *[label for _, label in COLUMNS]]]
  reach = {'ours': [], 'code': []}
  means = {'ours': {}, 'code': {}, 'paper': {}}
  tests, all_four = [], []
  for arm in study.arms:
    ours = collect_arm(os.path.join(root, study.folder_name(arm)))
    theirs = reference_lib.read_arm(os.path.join(reference, arm.name))
    paper = published_values(arm)
    row_tests = {s: reference_lib.equivalence(ours['values'][s], theirs['values'][s], s) for s, _ in COLUMNS}
    n = ours['ci']['accuracy']['n']
    rows.append([arm.name, f'{n}{f" of {study.seeds_of(arm)} (unfinished)" if unfinished(study, n) else ""}'
                 f' / {len(theirs["seeds"])}',
                 *[summary_cell(ours['ci'][s], paper.get(s), theirs['ci'][s], row_tests[s]) for s, _ in COLUMNS]])
    for side, ci in (('ours', ours['ci']), ('code', theirs['ci'])):
      if side == 'ours' and unfinished(study, n):
        continue  # one or two seeds are no row's mean: shown, not counted
      row_means = {s: ci[s]['mean'] if ci[s]['n'] else None for s in TAUS}
      close = within_reach(row_means, paper)
      if close is not None:
        reach[side].append((arm.name, close))
        means[side][arm.name], means['paper'][arm.name] = row_means, paper
    if all(t['difference'] is not None for t in row_tests.values()):
      tests += row_tests.values()
      all_four.append((arm.name, all(t['equivalent'] for t in row_tests.values())))
  return rows, {'reach': reach, 'means': means, 'found': reference_lib.counts(tests), 'rows_tested': all_four}


def reach_over_tolerances(means: dict) -> dict:
  """On the rows both sides can be counted on: {tolerance: (attn-jax rows, J&W code rows, rows)}."""
  both = sorted(set(means['ours']) & set(means['code']))
  out = {}
  for tolerance in TOLERANCES:
    count = lambda side: sum(all(abs(means[side][a][s] - means['paper'][a][s]) <= tolerance for s in TAUS)
                             for a in both)
    out[tolerance] = (count('ours'), count('code'), len(both))
  return out


def notes(counts: dict) -> list[str]:
  """The counts as sentences, then what the marks mean."""
  ours, code = counts['reach']['ours'], counts['reach']['code']
  named = lambda pairs: [name for name, yes in pairs if yes]
  lines = [f'Within reach of J&W\'s published τ (all three means within {TOLERANCE:g}; J&W\'s own two runs of their '
           f'code differ by up to {published.jain_wallace_run_to_run():.3f} in a class\'s mean τ): attn-jax '
           f'{len(named(ours))} of {len(ours)} rows' + (f' ({", ".join(named(ours))})' if named(ours) else '')
           + f'; J&W\'s own code on the same inputs {len(named(code))} of {len(code)} rows'
           + (f' ({", ".join(named(code))})' if named(code) else '') + '.']
  over = reach_over_tolerances(counts['means'])
  if over:
    rows_both = next(iter(over.values()))[2]
    lines.append(f'On the {rows_both} rows both implementations have, rows within reach at each tolerance '
                 '(attn-jax / J&W\'s code): ' + ', '.join(f'{t:.2f}: {a} / {c}' for t, (a, c, _) in over.items()) + '.')
  tested, found = counts['rows_tested'], counts['found']
  lines.append(f'Against J&W\'s own code on the same inputs, row × statistic cells: '
               f'{reference_lib.counts_text(found)}; all four statistics shown equivalent (≡ or ≡Δ) in '
               f'{len(named(tested))} of {len(tested)} rows' + (f' ({", ".join(named(tested))})' if named(tested)
                                                              else '') + '.')
  lines.append('mean ± 95 % Student-t half-width over seeds; [J&W published ✓ inside the interval, ✗ outside]; '
               f'· code: J&W\'s own code on the same inputs, then its verdict: {reference_lib.MARGINS_TEXT.split("; Δ")[0]}; '
               'per seed, Δ with its interval and what more seeds could decide: docs/jain_wallace.md')
  return lines


def block_name(root: str) -> str:
  """`jw_grid-summary`, or `jw_grid-summary-<folder>` for a root named
  `jw_grid_<something>` (another recipe beside the grid's own)."""
  folder = os.path.basename(os.path.normpath(root))
  return 'jw_grid-summary' + (f'-{folder}' if folder.startswith('jw_grid_') else '')


def write(study, root: str, reference: str, readme=None) -> list[list[str]] | None:
  """Prints the table with its sentences and rewrites its block
  (`block_name(root)`) in those `readme` files that hold it; None, printing
  nothing, when `reference` holds no arm (as the side-by-side table)."""
  if not reference_lib.arms(reference):
    return None
  rows, counts = rows_and_counts(study, root, reference)
  reference_lib.print_and_write(study, root, reference, readme, block_name(root), rows, notes(counts))
  return rows
