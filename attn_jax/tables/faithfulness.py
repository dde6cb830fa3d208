"""Which measure is faithful, as the reports show it: ERASER's erasure
metrics (the `eraser` stage) per run and per measure.

Per run (dataset × encoder × attention): each measure's AOPC
comprehensiveness and sufficiency and its paired difference from the
random ranking; and paired tests between every two measures. Where several
seeds of a run are given (the models of a sweep, or an arm of a study), the
intervals and tests are over seeds (each seed's mean AOPC: Student-t, paired
by seed); with one model, over its test documents (the stage's own summary:
bootstrap intervals, tests paired by document). Verdicts are those of
`attn_jax.analysis.verdicts.compare` at the stage's margin, Holm's
correction across the pairs of a run beside them. No paper publishes these
numbers for these models.
"""

import collections
from typing import Optional

from attn_jax.analysis import eraser_comparisons as comparisons, verdicts
from attn_jax.tables import render
from attn_jax.tables.common import RunFolder
from attn_jax.tables.report_registry import SECTIONS, TABLES, PaperSections, Table
from attn_jax.tables.study_results import models as collect_models
from attn_jax.stages import eraser as eraser_stage, stage_store as store

METRICS = eraser_stage.METRICS
SHORT = {'comprehensiveness': 'comp.', 'sufficiency': 'suff.'}


def member_summary(member: str) -> Optional[dict]:
  """One model's `eraser` summary (its most complete intact results), or None."""
  found = store.most_complete(member, 'eraser')
  return found.summary if found is not None and found.intact else None


def arm_summaries(arm_dir: str) -> list[dict]:
  """The `eraser` summaries of a study arm's models (its seeds), in name order."""
  return [s for s in (member_summary(m) for m in collect_models(arm_dir)) if s is not None]


def run_tests(summaries: list[dict]) -> dict:
  """One run's numbers: over seeds where there are several summaries, else over documents.

  Args:
    summaries: the `eraser` summaries of the run's models (one per seed).

  Returns:
    {'over': 'seeds' or 'documents', 'n': seeds or documents, 'names': rows
     in order (measures, then 'random'), 'labels', 'margin', 'no_words'
     (the first summary's), and per metric `compare_measures`' {'means',
     'vs_random', 'pairs'}}.
  """
  first = summaries[0]
  out = {'labels': {**first['labels'], comparisons.RANDOM: 'random'}, 'margin': first['margin'],
         'no_words': first.get('no_words', {})}
  names = [n for n in first['measures'] if not comparisons.is_random(n)]
  if len(summaries) == 1:
    out.update(over='documents', n=first['n'], names=names + [comparisons.RANDOM])
    out.update({m: first['aopc'][m] for m in METRICS})
    return out
  # A measure some seed lacks (registered since that seed ran) is left out of the seeds' tests.
  names = [n for n in names if all(n in s['aopc'][METRICS[0]]['means'] for s in summaries)]
  out.update(over='seeds', n=len(summaries), names=names + [comparisons.RANDOM])
  for metric in METRICS:
    values = {n: [s['aopc'][metric]['means'][n]['mean'] for s in summaries] for n in out['names']}
    out[metric] = comparisons.compare_measures(values, first['margin'], interval='t')
  return out


def _interval(mean: dict) -> str:
  if mean['low'] is None or mean['low'] != mean['low']:  # one seed: no interval
    return f'{mean["mean"]:.3f}'
  return f'{mean["mean"]:.3f} [{mean["low"]:.3f}, {mean["high"]:.3f}]'


def _difference(test: Optional[dict], holm: bool = False) -> str:
  """'+0.012 [+0.004, +0.020] ≠', the verdict's symbol as `verdicts.compare` gives it."""
  if test is None or test['difference'] is None:
    return '–'
  text = f'{test["difference"]:+.3f}'
  if test['low95'] is not None:
    text += f' [{test["low95"]:+.3f}, {test["high95"]:+.3f}]'
  text += f' {verdicts.SYMBOLS[test["verdict"]]}'
  return text + (f' (Holm {verdicts.SYMBOLS[test["verdict_holm"]]})' if holm else '')


def _over(found: dict) -> str:
  return f'{found["n"]} seeds' if found['over'] == 'seeds' else f'{found["n"]} documents'


def measure_rows(groups: list[tuple[str, list[dict]]]) -> list[list[str]]:
  """Per run and measure: AOPC comprehensiveness and sufficiency (mean, 95 %
  interval) and the paired difference from random with its verdict.

  Args:
    groups: (run name, its models' `eraser` summaries).

  Returns:
    The table's rows, header first.
  """
  rows = [['run', 'over', 'measure', 'AOPC comprehensiveness', 'Δ comp. vs random', 'AOPC sufficiency',
           'Δ suff. vs random']]
  for name, summaries in groups:
    if not summaries:
      continue
    found = run_tests(summaries)
    for n in found['names']:
      cells = []
      for metric in METRICS:
        cells += [_interval(found[metric]['means'][n]), _difference(found[metric].get('vs_random', {}).get(n))]
      rows.append([name, _over(found), found['labels'].get(n, n), *cells])
  return rows


def pair_rows(groups: list[tuple[str, list[dict]]]) -> list[list[str]]:
  """Per run, every two measures: the paired difference a − b of their AOPC
  (comprehensiveness, sufficiency), its 95 % interval and verdict, and the
  verdict with Holm's correction across the run's pairs."""
  rows = [['run', 'over', 'measure a', 'measure b', 'Δ AOPC comp. (a − b)', 'Δ AOPC suff. (a − b)']]
  for name, summaries in groups:
    if not summaries:
      continue
    found = run_tests(summaries)
    label = found['labels']
    for comp, suff in zip(*(found[m]['pairs'] for m in METRICS)):
      rows.append([name, _over(found), label.get(comp['a'], comp['a']), label.get(comp['b'], comp['b']),
                   _difference(comp, holm=True), _difference(suff, holm=True)])
  return rows


def notes(groups: list[tuple[str, list[dict]]]) -> list[str]:
  """The lines under the tables: what the numbers are, the margin, the verdicts'
  legend, and how many documents a fraction leaves without a word."""
  found = [(name, run_tests(s)) for name, s in groups if s]
  if not found:
    return []
  margins = sorted({f['margin'] for _, f in found})
  lines = ['AOPC: the mean over the fractions k of p(ŷ|x) − p(ŷ|x without its top k % words) '
           '(comprehensiveness: larger is more faithful) and of p(ŷ|x) − p(ŷ|the top k % alone) (sufficiency: '
           'smaller is more faithful); DeYoung et al. 2020 §4.2; docs/faithfulness.md',
           'over seeds: mean and 95 % Student-t interval of the seeds\' mean AOPC, tests paired by seed; over '
           'documents: one model\'s mean with its 95 % bootstrap interval, tests paired by document; '
           'Δ = measure − random (or a − b) with its 95 % interval',
           f'verdicts: TOST (α = 0.05) at margin {", ".join(f"{m:g}" for m in margins)} AOPC and the test of a '
           'zero difference: ' + verdicts.LEGEND + '; Holm: the same with Holm\'s correction across the pairs of '
           'measures of a run, per metric']
  for name, f in found:
    empty = {k: v for k, v in f['no_words'].items() if v}
    if empty:
      lines.append(f'{name}: documents whose top k % is no word (floor rounding; comprehensiveness 0 there): '
                   + ', '.join(f'{float(k) * 100:g} %: {v}' for k, v in empty.items())
                   + (' (of the first seed)' if f['over'] == 'seeds' else ''))
  return lines


def stage_rows(name: str, dataset: str, summary: dict, model: str = '') -> list[list[str]]:
  """Rows of the analyses table (`report analyses`): one per measure of one run."""
  del dataset, model  # no paper publishes these
  found = run_tests([summary])
  rows = []
  for n in found['names']:
    parts = [f'{SHORT[m]} {_interval(found[m]["means"][n])}'
             + (f', vs random {_difference(found[m]["vs_random"][n])}' if n in found[m].get('vs_random', {}) else '')
             for m in METRICS]
    rows.append([name, f'ERASER AOPC: {found["labels"].get(n, n)}', '; '.join(parts), '–', ''])
  return rows


TABLES.register(Table('eraser', 'stage', 60, stage_rows, paper='faithfulness'))


def run_groups(runs: list[RunFolder]) -> list[tuple[str, list[dict]]]:
  """The runs holding `eraser` results, grouped by dataset and model (their
  seeds): [(name, summaries)], in the order first met."""
  groups = collections.OrderedDict()
  for r in runs:
    if 'eraser' in r.stages and r.stages['eraser'].intact:
      groups.setdefault(f'{r.info["dataset"]} {r.info["model"]}', []).append(r.stages['eraser'].summary)
  return list(groups.items())


def _sections(runs: list[RunFolder]) -> list[render.Section]:
  groups = run_groups(runs)
  if not groups:
    return []
  # Each run's curves (the stage's figure) are in its own section of the report.
  return [render.Section('Which measure is faithful: erasure without retraining (ERASER)', [
      render.Text('Each measure\'s top-ranked words removed (comprehensiveness) or kept alone (sufficiency) '
                  'at 1, 5, 10, 20 and 50 % of the words, the model re-run on the shortened text, averaged over '
                  'the fractions (AOPC); beside a random ranking (docs/faithfulness.md).'),
      render.Table(measure_rows(groups), tuple(notes(groups))),
      render.Text('Every two measures, paired over the same seeds (or documents).'),
      render.Table(pair_rows(groups))])]


SECTIONS.register(PaperSections(
    'faithfulness', 'faithfulness', 60, _sections,
    missing=lambda runs: None if any('eraser' in r.stages for r in runs) else (
        'ERASER\'s erasure metrics: no run holds them (`--config.analyses=eraser`; a study\'s trained arms: '
        '`python -m attn_jax.studies run STUDY --set analyses=eraser`)'),
    ran=lambda r: 'ran' if 'eraser' in r.stages else 'not run'))
