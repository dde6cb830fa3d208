"""The J&W question-answering study's tables (`Study.kind` 'qa_grid').

1. Per bAbI row: accuracy and J&W's three τ with their 95 % intervals over
   seeds, beside J&W's published values (`published.JAIN_WALLACE_QA_GRID`);
   the adversary's mean max JSD and the permutations' median TVD (J&W
   publish figures, no numbers, for these).
2. Known evidence (`known_evidence`): each measure's mean AP of the
   supporting facts' words, table and figure.
3. J&W's own code on the same inputs (`benchmarks/original_code/jain_wallace_reference.py --study=jw_qa`),
   read from `jw_qa_reference` beside the table's folder: per statistic the
   difference of the means with its 95 % interval and the verdict
   (`verdicts.compare`: TOST and the test of zero) at `verdicts.MARGINS`; and where
   seeds stop at the plateau of predicting the answers' marginal (bAbI's
   Average rows), how many on each side, with Fisher's exact test.
"""

import os

import scipy.stats

from attn_jax.analysis import statistics
from attn_jax.papers import published
from attn_jax.stages import feature_importance
from attn_jax.tables import jain_wallace_reference, known_evidence
from attn_jax.tables.common import markdown, plain, root_of, write_blocks
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.studies import (REFERENCE_COLUMNS, analysed_cell, earlier_recipe, interval_kinds, published_values,
                                     saved, seeds_cell, seeds_needed_text, totals, wall_seconds)
from attn_jax.tables.study_results import cell, collect_arm

PAIRS = tuple(feature_importance.PAIRS)  # J&W's three τ, as the kendall stage names them
COMPARED = REFERENCE_COLUMNS  # (statistic, label): accuracy and the three τ; margins by statistic


def paper_of(arm) -> dict:
  return published.JAIN_WALLACE_QA_GRID.get((arm.dataset, arm.encoder, arm.overrides.get('model.attention')), {})


def grid_rows(study, root: str) -> list[list[str]]:
  rows = [['configuration', 'seeds', 'accuracy [J&W]', 'τ(α, grad) [J&W]', 'τ(α, LOO) [J&W]',
           'τ(grad, LOO) [J&W]', 'adv. mean max JSD', 'perm. median TVD', 'test docs analysed', 'wall time']]
  for arm in study.arms:
    folder = os.path.join(root, study.folder_name(arm))
    collected = collect_arm(folder)
    c, paper = collected['ci'], paper_of(arm)
    tau = paper.get('tau', {})
    seconds, cut = wall_seconds(root, study.folder_name(arm))
    rows.append([arm.name, seeds_cell(study, arm, folder, c['accuracy']['n']),
                 cell(c['accuracy'], paper=paper.get('test', {}).get('accuracy')),
                 *[cell(c[f'tau_{p}'], paper=(tau.get(p) or (None,))[0]) for p in PAIRS],
                 cell(c['adversarial_overall']), cell(c['permutation_overall']),
                 analysed_cell(collected['values']['analysed_docs']),
                 '–' if seconds is None and not c['accuracy']['n'] else
                 '– (unfinished)' if seconds is None else
                 f'{seconds / 60:.0f} min' + (' (+ a run cut off)' if cut else '')])
  # J&W's NLI rows: SNLI's train split (550,152 pairs) is not in the data folder, so
  # nothing is trained under its name; the rows say so beside J&W's values.
  trained = {(a.dataset, a.encoder, a.overrides.get('model.attention')) for a in study.arms}
  for (dataset, encoder, attention), paper in published.JAIN_WALLACE_QA_GRID.items():
    if (dataset, encoder, attention) in trained or not study.arms or dataset != 'snli':
      continue
    tau = paper.get('tau', {})
    rows.append([f'{dataset}_{encoder}_{attention}', 'needs SNLI train',
                 cell(statistics.t_interval([]), paper=paper['test']['accuracy']),
                 *[cell(statistics.t_interval([]), paper=tau[p][0]) for p in PAIRS], '–', '–', '–', '–'])
  return rows


def inside_counts(study, root: str) -> list[str]:
  """Per statistic: how many published values lie inside our intervals (a
  description, not a test of sameness: one published run has no spread)."""
  arms = [(collect_arm(os.path.join(root, study.folder_name(arm)))['ci'], published_values(arm))
          for arm in study.arms]
  lines = []
  for stat, label in COMPARED:
    verdicts = [statistics.contains(ci[stat], paper.get(stat)) for ci, paper in arms]
    verdicts = [v for v in verdicts if v is not None]
    if verdicts:
      lines.append(f'{label}: J&W\'s published value inside our 95 % interval on {sum(verdicts)} of '
                   f'{len(verdicts)} rows (their one run has no interval: no equivalence can be tested against it)')
  return lines


def compare_with_code(study, root: str, reference: str) -> list[tuple]:
  """Per arm with a seed of J&W's code in `reference`: (arm, attn-jax's
  `collect_arm`, J&W code's `read_arm`, {statistic: equivalence test})."""
  compared = []
  for arm in study.arms:
    theirs = jain_wallace_reference.read_arm(os.path.join(reference, study.folder_name(arm)))
    if not theirs['seeds']:
      continue
    ours = collect_arm(os.path.join(root, study.folder_name(arm)))
    tests = {stat: jain_wallace_reference.equivalence(ours['values'][stat], theirs['values'][stat], stat)
             for stat, _ in COMPARED}
    compared.append((arm, ours, theirs, tests))
  return compared


def reference_rows(study, root: str, reference: str, compared=None) -> list[list[str]]:
  """The side-by-side table; `compared`: `compare_with_code`'s result, when already at hand."""
  rows = [['configuration', 'seeds (ours / J&W code)',
           *[f'{label}: {side}' for _, label in COMPARED for side in ('attn-jax', 'J&W code', 'verdict')]]]
  for arm, ours, theirs, tests in (compare_with_code(study, root, reference) if compared is None else compared):
    cells = [text for stat, _ in COMPARED for text in (
        cell(ours['ci'][stat]), cell(theirs['ci'][stat]), jain_wallace_reference.verdict(tests[stat]))]
    changed = earlier_recipe(study, arm, os.path.join(root, study.folder_name(arm)))
    rows.append([arm.name, f'{ours["ci"]["accuracy"]["n"]} / {len(theirs["seeds"])}'
                 + (f' (attn-jax: earlier recipe, {", ".join(changed)})' if changed else ''), *cells])
  return rows


def reference_counts(compared) -> list[str]:
  """The line that counts the cells by verdict, as measured and with Holm's
  correction (cells with under 2 seeds a side are not tested), and the rows
  with all four statistics shown equivalent, as the grid's table does."""
  if not compared:
    return []
  tests = [t for *_, tests in compared for t in tests.values()]
  found = jain_wallace_reference.counts(tests)
  tested = [(arm, tests) for arm, _, _, tests in compared
            if all(t['difference'] is not None for t in tests.values())]
  equivalent = [arm.name for arm, tests in tested if all(jain_wallace_reference.agree(t) for t in tests.values())]
  return [f'row × statistic cells: {jain_wallace_reference.counts_text(found)}; '
          f'all four statistics shown equivalent (≡ or ≡Δ) in {len(equivalent)} of {len(tested)} rows'
          + (f' ({", ".join(equivalent)})' if equivalent else '') + seeds_needed_text(tests)]


# A bAbI model that predicts the answers' marginal gives every question one
# answer and scores that answer's share of the test set: 0.15-0.22 on tasks
# 1-3 (the most frequent answer's share: 0.19 and 0.215 on tasks 2 and 3).
# Seeds that learnt score 0.29 and more on bAbI 1 and 2 Average + tanh, in
# both implementations; J&W's code has plateau seeds too (bAbI 2 and 3).
PLATEAU_ACCURACY = 0.25


def plateau_notes(study, root: str, reference: str) -> list[str]:
  """Per row where a seed on either side ends below `PLATEAU_ACCURACY`: the
  count on each side and Fisher's exact test (two-sided) of the two
  proportions. Equal accuracy intervals cannot say this: a row of seeds that
  either learn or stay at the plateau has a spread as wide as the gap."""
  notes = []
  for arm in study.arms:
    theirs = jain_wallace_reference.read_arm(os.path.join(reference, study.folder_name(arm)))
    ours = collect_arm(os.path.join(root, study.folder_name(arm)))['values']['accuracy']
    mine = [a for a in ours if a is not None]
    yours = [a for a in theirs['values']['accuracy'] if a is not None]
    low = lambda values: sum(a < PLATEAU_ACCURACY for a in values)
    if not mine or not yours or not low(mine) + low(yours):
      continue
    table = [[low(mine), len(mine) - low(mine)], [low(yours), len(yours) - low(yours)]]
    p = scipy.stats.fisher_exact(table).pvalue
    notes.append(f'{arm.name}: seeds below accuracy {PLATEAU_ACCURACY} (at the plateau of predicting the '
                 f'answers\' marginal): attn-jax {low(mine)} of {len(mine)}, J&W\'s code {low(yours)} of '
                 f'{len(yours)}; Fisher\'s exact test p = {p:.2f}'
                 + (' (no difference detected: not a showing of sameness)' if p >= 0.05 else ''))
  return notes


def _evidence_arms(study, root: str) -> list[tuple[str, str, str]]:
  return [(arm.name, arm.encoder, os.path.join(root, study.folder_name(arm))) for arm in study.arms]


def _tabulate(study, root: str, save_to, readme, reference) -> list[list[str]]:
  root = saved(study, root, save_to)
  rows = grid_rows(study, root)
  notes = inside_counts(study, root) + interval_kinds(study, root) + totals(study, root)
  print(plain(rows) + '\n' + '\n'.join(notes))
  arms = _evidence_arms(study, root)
  evidence = known_evidence.study_rows([(n, f) for n, _, f in arms])
  evidence_notes = known_evidence.headline(arms) + [n for n in [known_evidence.chance_note(
      [(n, f) for n, _, f in arms])] if n]
  figure = known_evidence.study_figure([(n, f) for n, _, f in arms], os.path.join(root, 'evidence_ap'))
  print('\nKnown evidence: mean AP of the supporting facts\' words, ± 95 % interval over seeds\n'
        + plain(evidence) + '\n' + '\n'.join(evidence_notes) + ('\nfigure: ' + ', '.join(figure) if figure else ''))
  reference = reference or os.path.join(os.path.dirname(os.path.normpath(root)), f'{study.name}_reference')
  compared = compare_with_code(study, root, reference)
  ref_rows = reference_rows(study, root, reference, compared)
  margins = jain_wallace_reference.MARGINS_TEXT
  under_reference = reference_counts(compared) + plateau_notes(study, root, reference)
  if len(ref_rows) > 1:
    print('\nJ&W\'s own code on the same inputs\n' + plain(ref_rows) + '\n' + '\n'.join([margins, *under_reference]))
  if readme:
    here = root_of(readme)
    source = os.path.relpath(root, here)
    command = f'python -m attn_jax.studies report {study.name} --root={source}'
    files = [f'{source}/<arm>/<seed>/eval.json', f'{source}/<arm>/<seed>/analyses/*/summary.json',
             f'{source}/study.json']
    write_blocks(readme, f'{study.name}-table', markdown(rows) + '\n\n' + '\n'.join(f'- {n}' for n in notes),
                 command, files, optional=True)
    write_blocks(readme, f'{study.name}-evidence', markdown(evidence) + '\n\n'
                 + '\n'.join(f'- {n}' for n in evidence_notes), command,
                 [f'{source}/<arm>/<seed>/analyses/evidence/*/summary.json'], optional=True)
    missing = [] if len(ref_rows) > 1 else [f'no seed of J&W\'s code in {os.path.relpath(reference, here)} yet']
    write_blocks(readme, f'{study.name}-reference', markdown(ref_rows) + '\n\n'
                 + '\n'.join(f'- {n}' for n in [margins, *under_reference, *missing]), command,
                 [os.path.relpath(reference, here) + '/<arm>/<seed>/summary.json'], optional=True)
  return rows


TABLES.register(Table('qa_grid', 'study', 15, _tabulate, paper='jw'))
