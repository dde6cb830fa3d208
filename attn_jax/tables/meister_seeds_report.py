"""Meister et al.'s Tables 1, 3 and 6 with seeds: the table of the
`meister_seeds` study (`attn_jax.studies.meister_seeds`, `Study.kind`
'meister_seeds').

Per arm: test accuracy (Table 3), the mean normalised entropy of g_{h_p}(x)
pooled over (document, position) pairs (Table 1), and τ of α with g_ŷ(x),
D_ŷ(x), g_ŷ(I) and D_ŷ(I) (Table 6), each attn-jax's mean ± 95 % Student-t
half-width over seeds, beside Meister et al.'s published mean ± sd and the
verdict of attn-jax's seeds against the published mean
(`verdicts.compare(seeds, published, margin)`, one sample: equivalent,
equivalent with a smaller difference, different or inconclusive at ±0.05
for τ and entropies, ±0.02 for accuracy).

What the comparison can show: Meister et al.'s number is one model's mean
over test documents, and their ± is the sd over documents, not over
models; so the test treats their mean as a fixed number. A *different* says
attn-jax's seeds, as a population, land elsewhere; it cannot say whether
their single model was a typical seed.
"""

import os

from attn_jax.analysis import measure, statistics, verdicts
from attn_jax.papers import published
from attn_jax.tables import study_results
from attn_jax.tables.common import plain, root_of, with_notes, write_blocks
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.studies import saved, totals

# Meister's Table 6 measures, labelled by their records (`Measure.column`).
MEASURES = tuple((m, measure.columns('importance')[m]) for m in ('g_y_x', 'd_y_x', 'g_y_i', 'd_y_i'))


def _accuracy(member: str):
  return study_results._get(study_results._read(os.path.join(member, 'eval.json')), 'accuracy')  # pylint: disable=protected-access


def _entropy(member: str):
  """Table 1: the last layer's pooled mean H̃ of g_{h_p}(x)."""
  s = study_results._summary(member, 'state_importance')  # pylint: disable=protected-access
  return None if s is None else study_results._get(s, 'table1', s.get('last_layer'), 'mean')  # pylint: disable=protected-access


def _tau(measure: str):
  return lambda member: study_results._get(study_results._summary(member, 'importance'),  # pylint: disable=protected-access
                                           'tau', measure, 'nanmean')


# column -> (label, reader of one model's folder, margin)
COLUMNS = (('accuracy', 'accuracy (Table 3)', _accuracy, verdicts.MARGINS['accuracy']),
           ('entropy', 'H̃(g_{h_p}(x)) (Table 1)', _entropy, verdicts.MARGINS['tau']),
           *[(m, f'τ(α, {label}) (Table 6)', _tau(m), verdicts.MARGINS['tau']) for m, label in MEASURES])


def _row_key(arm) -> str:
  """Meister et al.'s model name of an arm ('bilstm_softmax'), or None for the λ-grid ends."""
  projection = arm.overrides.get('model.projection')
  return f'{arm.encoder}_{projection}' if projection in ('softmax', 'sparsemax') else None


def published_values(arm) -> dict:
  """{column: (mean, sd) or mean} that Meister et al. publish for this arm's row."""
  key = _row_key(arm)
  if key is None:
    return {}
  out = {}
  if (arm.dataset, key) in published.MEISTER_TABLE1:
    out['entropy'] = published.MEISTER_TABLE1[(arm.dataset, key)]
  if key.endswith('softmax') and (arm.dataset, arm.encoder) in published.MEISTER_TABLE3:
    out['accuracy'] = (published.MEISTER_TABLE3[(arm.dataset, arm.encoder)], None)
  out.update(published.MEISTER_TABLE6.get((arm.dataset, key), {}))
  return out


def _published_text(value) -> str:
  if value is None:
    return '–'
  mean, sd = value
  return f'{mean:.2f}' + ('' if sd is None else f' ± {sd:.2f}')


def arm_values(study, root: str, arm) -> dict:
  """{column: [per-seed value]} of an arm's models (None where not computed)."""
  members = study_results.models(os.path.join(root, study.folder_name(arm)))
  return {name: [read(m) for m in members] for name, _, read, _ in COLUMNS}


def rows(study, root: str) -> tuple[list[list[str]], list[str]]:
  """The table (an arm a row; per column attn-jax's interval, Meister's number
  and the verdict) and the lines under it (verdict counts, what they mean)."""
  table = [['configuration', 'seeds', *[label for _, label, _, _ in COLUMNS]]]
  tests = []
  for arm in study.arms:
    values = arm_values(study, root, arm)
    n = statistics.t_interval(values['accuracy'])['n']
    if not n:
      continue
    paper = published_values(arm)
    cells = []
    for name, _, _, margin in COLUMNS:
      ci = statistics.t_interval(values[name])
      text = study_results.cell(ci) if ci['n'] else '–'
      if name in paper:
        test = verdicts.compare(values[name], paper[name][0], margin)
        if study_results.unfinished(study, n) or test['difference'] is None:
          text += f' ({_published_text(paper[name])})'
        else:
          tests.append(test)
          text += f' ({_published_text(paper[name])}) {verdicts.SYMBOLS[test["verdict"]]}'
      cells.append(text)
    table.append([arm.name, f'{n}' + (f' of {study.seeds_of(arm)} (unfinished)' if study_results.unfinished(study, n)
                                      else ''), *cells])
  counted = verdicts.count(tests)
  notes = [f'against Meister et al.\'s published mean, cells: {counted["tested"]} tested: '
           f'{verdicts.describe_counts(counted)}; with Holm\'s correction across them: '
           f'{verdicts.describe_counts(counted, "holm")}',
           'mean ± 95 % Student-t half-width over seeds; (Meister et al.: one model\'s mean ± sd over test documents); '
           f'the verdict of the seeds against that mean as a fixed number, margins {verdicts.MARGINS["accuracy"]:g} '
           f'accuracy, {verdicts.MARGINS["tau"]:g} τ and entropy: {verdicts.LEGEND}; an unfinished row is shown '
           'untested; the λ-grid ends have no published row']
  return table, notes


def table(study, root: str, save_to, readme, reference) -> list[list[str]]:
  """Prints the table and rewrites the `meister_seeds-table` block of those
  `readme` files that hold it."""
  del reference
  root = saved(study, root, save_to)
  table_rows, notes = rows(study, root)
  notes += totals(study, root)
  print(plain(table_rows) + '\n' + '\n'.join(notes))
  if readme:
    source = os.path.relpath(root, root_of(readme))
    write_blocks(readme, f'{study.name}-table', with_notes(table_rows, notes),
                 f'python -m attn_jax.studies report {study.name} --root={source}',
                 [f'{source}/<arm>/<seed>/eval.json', f'{source}/<arm>/<seed>/analyses/*/summary.json',
                  f'{source}/study.json'], optional=True)
  return table_rows


TABLES.register(Table('meister_seeds', 'study', 70, table, paper='meister'))
