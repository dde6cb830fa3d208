"""W&P's Table 2 with seeds beside W&P's own code on the same inputs: the
table of the `wp_table2` study (attn_jax.studies.wiegreffe_pinter_table2),
learned against uniform attention per dataset, test F1 as mean ± 95 % CI,
with the project's verdict (`verdicts.compare`: TOST at 0.02 and the test of
zero) of attn-jax against W&P's code with dev selection, and of learned
against uniform attention. A dataset with no
model on either side has no row.
"""

import os

from attn_jax.analysis import statistics
from attn_jax.papers import published
from attn_jax.tables import jain_wallace_reference, study_results
from attn_jax.tables.common import plain, root_of, with_notes, write_blocks
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.studies import saved, totals

SELECTIONS = (('devsel', "W&P's code, dev selection"), ('testsel', "W&P's code as W&P ran it (test selection)"))
STATISTIC = 'f1_pos'


def default_reference(root: str) -> str:
  """`wp_reference` beside the study's folder (results/wp_table2 -> results/wp_reference)."""
  return os.path.join(os.path.dirname(os.path.normpath(root)), 'wp_reference')


def _values(side: dict) -> list:
  return [v for v in side['values'][STATISTIC] if v is not None]


def comparison(study, root: str, reference: str) -> dict:
  """{dataset: {attention: {'ours': collect_arm, selection: read_arm}}} for
  'learned' and 'uniform', the datasets with a model on either side, in the
  study's order."""
  out = {}
  for arm in study.arms:
    attention = arm.name.rsplit('_', 1)[1]
    out.setdefault(arm.dataset, {})[attention] = {
        'ours': study_results.collect_arm(os.path.join(root, study.folder_name(arm))),
        **{sel: jain_wallace_reference.read_arm(os.path.join(reference, f'{arm.dataset}_{attention}_{sel}'))
           for sel, _ in SELECTIONS}}
  return {d: sides for d, sides in out.items()
          if any(_values(side[key]) for side in sides.values() for key in ('ours', *dict(SELECTIONS)))}


def _cell(values: list, of: int = 0) -> str:
  """`of`: the seeds the arm trains, said beside n while it has fewer
  (`study_results.unfinished`)."""
  ci = statistics.t_interval(values)
  n = f'n={ci["n"]}' + (f' of {of}, unfinished' if 0 < ci['n'] < of else '')
  return study_results.cell(ci) + (f' ({n})' if ci['n'] else '')


def _verdict(a: list, b: list) -> str:
  return jain_wallace_reference.verdict(jain_wallace_reference.equivalence(a, b, STATISTIC))


def rows(study, root: str, reference: str) -> tuple[list[list[str]], list[str]]:
  """The table (per dataset and attention: attn-jax, W&P's code with each
  selection, W&P's published F1, the verdict attn-jax vs W&P dev selection) and its
  notes (per dataset, learned − uniform per implementation)."""
  table = [['dataset', 'attention', 'F1: attn-jax', *[f'F1: {label}' for _, label in SELECTIONS],
            'F1: W&P published', 'verdict: attn-jax vs W&P code (dev selection)']]
  notes = [f'{jain_wallace_reference.MARGINS_TEXT} (here: attn-jax − W&P\'s code; learned − uniform)']
  arms = {a.name: a for a in study.arms}
  for dataset, c in comparison(study, root, reference).items():
    paper = published.WIEGREFFE_PINTER_TABLE2[dataset]
    unfinished = []
    for attention, key in (('learned', 'attention'), ('uniform', 'uniform')):
      sides = c[attention]
      arm = arms.get(f'{dataset}_{attention}')
      if arm is not None and study_results.unfinished(study, len(_values(sides['ours']))):
        unfinished.append(attention)
      table.append([dataset, attention, _cell(_values(sides['ours']), study.seeds_of(arm) if arm else 0),
                    *[_cell(_values(sides[sel])) for sel, _ in SELECTIONS], f'{paper[key]:.3f}',
                    _verdict(_values(sides['ours']), _values(sides['devsel']))])
    notes.append(f'{dataset}: W&P published: learned − uniform = {paper["attention"] - paper["uniform"]:+.3f}')
    for side, label in (('ours', 'attn-jax'), *SELECTIONS):
      learned, uniform = _values(c['learned'][side]), _values(c['uniform'][side])
      if side == 'ours' and unfinished:
        notes.append(f'{dataset}: {label}: learned − uniform not computed: the {" and ".join(unfinished)} '
                     + ('arms are' if len(unfinished) > 1 else 'arm is') + ' unfinished')
      elif learned and uniform:
        gap = sum(learned) / len(learned) - sum(uniform) / len(uniform)
        notes.append(f'{dataset}: {label}: learned − uniform = {gap:+.3f} '
                     f'(learned vs uniform: {_verdict(learned, uniform)})')
  return table, notes


def table(study, root: str, reference: str, readme) -> list[list[str]]:
  """Prints W&P's Table 2 with seeds beside W&P's code (`rows`) and
  rewrites the `wp_table2-table` block of those `readme` files that hold it."""
  table_rows, notes = rows(study, root, reference)
  notes += totals(study, root)
  print(plain(table_rows) + '\n' + '\n'.join(notes))
  if readme:
    here = root_of(readme)
    source, ref = os.path.relpath(root, here), os.path.relpath(reference, here)
    default = os.path.abspath(reference) == os.path.abspath(default_reference(root))
    write_blocks(readme, f'{study.name}-table', with_notes(table_rows, notes),
                 f'python -m attn_jax.studies report {study.name} --root={source}'
                 + ('' if default else f' --reference={ref}'),
                 [f'{source}/<arm>/<seed>/eval.json', f'{ref}/<arm>/<seed>/summary.json',
                  f'{source}/study.json'], optional=True)
  return table_rows


TABLES.register(Table(
    'wp_table2', 'study', 50, lambda study, root, save_to, readme, reference:
    table(study, saved(study, root, save_to), reference or default_reference(save_to or root), readme)))
