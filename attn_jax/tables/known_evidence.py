"""Known evidence, as the reports show it: which importance measure ranks the
supporting facts' words highest (`attn_jax.stages.evidence`).

The `evidence` stage's summary gives rows of the analyses table (`report
analyses`) and a section of the reproduction report; a study whose arms run
it (the J&W QA study) gets the table and figure of `study_rows` /
`study_figure`: per arm, each measure's mean AP with its 95 % interval over
seeds. No paper publishes these numbers; beside them stand rankings that
read no model (`attn_jax.analysis.position_baselines`): a random ranking of
words (the stage's exact chance), of word types (an Average encoder's
chance), later words first and the last statement first, computed from the
bAbI test files for the very questions the stage scored (`task_baselines`,
recorded in the study's `evidence_baselines.json`). Which measure beats
which baseline, and whether the best measure is apart from the next, are
tests (`attn_jax.analysis.verdicts.compare`), not the order of the means.
"""

import functools
import hashlib
import os
from typing import Optional

import numpy as np

from attn_jax.analysis import evidence_ranking, measure, position_baselines, statistics, verdicts
from attn_jax.core import atomic_io
from attn_jax.core.errors import DataError
from attn_jax.data import sources
from attn_jax.plots import evidence_figures
from attn_jax.tables import render
from attn_jax.tables.common import RunFolder
from attn_jax.tables.jain_wallace import HEADER, alternatives, analysis_rows
from attn_jax.tables.report_registry import SECTIONS, TABLES, PaperSections, Table
from attn_jax.tables.study_results import cell, models as collect_models
from attn_jax.stages import evidence as evidence_stage, stage_store as store

# The measures a table shows, in this order, and their column names: α, the
# registered measures the evidence stage scores (their records' columns,
# `Measure.column`; read when used, so a measure registered since is here),
# and S&S's decision gradients.
LABELS = measure.Labels('evidence', before={'alpha': 'α'},
                        after={'decision_gradient': 'S&S ∂d/∂α', 'decision_gradient_x_attention': 'S&S α·∂d/∂α'})
# The columns of the study's table whatever the saved models hold (those its
# models were first scored on); a measure registered since has its column
# once a model of the table has it.
ALWAYS_SHOWN = ('alpha', *evidence_stage.EVIDENCE_KEYED, *evidence_stage.DECISION)


def shown(cis_by_arm: list) -> list:
  """The measures a study table shows: `ALWAYS_SHOWN` and any other with a value in an arm.

  Args:
    cis_by_arm: per arm, {measure: t interval} (`arm_intervals`, `arm_evidence`'s 'cis').

  Returns:
    Measure names in `LABELS` order.
  """
  return [m for m in LABELS if m in ALWAYS_SHOWN or any(cis.get(m, {}).get('n') for cis in cis_by_arm)]


def evidence_rows(name: str, dataset: str, evidence: dict, model: str = '') -> list[list[str]]:
  del dataset, model  # no paper publishes these
  chance = evidence['chance']['mean_ap']
  # Runs since the stage records them: the rankings that read no model beside chance.
  beside = ''.join(f'; {BASELINE_LABELS[n]} {b["mean_ap"]:.3f}' for n, b in evidence.get('baselines', {}).items()
                   if n in BASELINE_LABELS)
  rows = []
  for measure, m in evidence['measures'].items():
    low, high = m['bootstrap_ci95']
    rows.append([name, f'evidence AP: {LABELS.get(measure, measure)} (top word is evidence)',
                 f'{m["mean_ap"]:.3f} [{low:.3f}, {high:.3f}] ({m["top_hit"]:.2f})',
                 f'chance {chance:.3f}{beside}', 'highest mean' if measure == evidence['best'] else ''])
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

# The rankings that read no model, as the study's table names them.
BASELINE_LABELS = {'random_words': 'random words', 'random_word_types': 'random word types',
                   'later_words_first': 'later words first', 'last_statement_first': 'last statement first'}
BASELINES_FILE = 'evidence_baselines.json'  # in the study's root: the baselines of each task's test questions
BASELINES_VERSION = 1  # bumped when a baseline's definition changes: the file is then recomputed
MARGIN = verdicts.MARGINS['ap']
# A measure beats a baseline when its per-seed mean APs are shown above it.
BEATS = (verdicts.DIFFERENT, verdicts.EQUIVALENT_SMALL)


def member_values(member: str) -> dict:
  """One model's mean AP per measure and the chance AP ({} before the stage ran)."""
  found = store.most_complete(member, 'evidence')
  if found is None or not found.intact:
    return {}
  summary = found.summary
  out = {**{m: v['mean_ap'] for m, v in summary['measures'].items()}, 'chance': summary['chance']['mean_ap']}
  if 'evidence_words' in summary:
    out['evidence_words'] = summary['evidence_words']['mean']
  for name, b in summary.get('baselines', {}).items():
    out[f'stage:{name}'] = b['mean_ap']
  return out


def per_question(member: str) -> Optional[dict]:
  """{row name: [questions] float AP} of a model's `kept.npz` (the stage's
  per-question APs, kept in results/ since it writes them); None before."""
  found = store.most_complete(member, 'evidence')
  kept = None if found is None else store.load_kept(found.directory)
  if kept is None:
    return None
  return {str(n): np.asarray(row, np.float64) for n, row in zip(kept['names'], kept['ap'])}


def arm_intervals(arm_dir: str) -> dict:
  """{measure or 'chance': t interval over the arm's models of the mean AP}."""
  values = [member_values(m) for m in collect_models(arm_dir)]
  names = [*LABELS, 'chance']
  return {n: statistics.t_interval([v[n] for v in values if n in v]) for n in names}


# ------------------------------------------------------------ baselines

def _arm_config(arm_dir: str) -> dict:
  """The first model's config.json that reads ({} where none does)."""
  for member in collect_models(arm_dir):
    try:
      return atomic_io.read_json(os.path.join(member, 'config.json'))
    except (OSError, ValueError):
      continue
  return {}


def arm_setting(arm_dir: str) -> tuple[Optional[str], Optional[str]]:
  """(dataset, encoder) of an arm's models, from their config.json."""
  cfg = _arm_config(arm_dir)
  return cfg.get('data', {}).get('dataset'), cfg.get('model', {}).get('encoder')


def _sha256(path: str) -> str:
  with open(path, 'rb') as f:
    return hashlib.sha256(f.read()).hexdigest()


def question_arrays(path: str) -> dict:
  """A bAbI test file's questions as the evidence stage scores them (the
  dataset's own protocol, `babi.read_questions`, every question in
  file order: the stage's `docs: 1000` with no `sample_docs`): [N, W]
  `evidence`, `words`, `types` (word ids, by first appearance) and
  `separators` (the '.' between statements), and [N] `lengths` (SOS, EOS
  counted)."""
  from attn_jax.data.datasets import babi  # pylint: disable=g-import-not-at-top  (tfds: only where read)
  tokenized = babi.read_questions(path)
  lengths = np.array([len(d) + 2 for d in tokenized.docs])
  width = int(lengths.max())
  evidence, separators = np.zeros((len(lengths), width), bool), np.zeros((len(lengths), width), bool)
  types = np.full((len(lengths), width), -1, np.int64)
  ids: dict = {}
  for i, (doc, positions) in enumerate(zip(tokenized.docs, tokenized.evidence)):
    evidence[i, np.asarray(positions, np.int64) + 1] = True
    types[i, 1:len(doc) + 1] = [ids.setdefault(w, len(ids)) for w in doc]
    separators[i, 1:len(doc) + 1] = [w == '.' for w in doc]
  return {'evidence': evidence, 'words': position_baselines.words_mask(lengths, width), 'types': types,
          'separators': separators, 'lengths': lengths}


def compute_baselines(path: str, seed: int = 0, draws: int = position_baselines.TYPE_DRAWS) -> dict:
  """Every baseline's mean AP over a bAbI test file's questions, with what
  identifies those questions (their count, chance AP, evidence words)."""
  q = question_arrays(path)
  found = position_baselines.baseline_average_precision(q['evidence'], q['words'], q['types'], q['separators'],
                                                        draws=draws, seed=seed)
  count = q['evidence'][:, 1:].sum(axis=1)
  out = {'questions': int(len(count)), 'file': os.path.basename(path), 'sha256': _sha256(path),
         'random_words': float(np.nanmean(evidence_ranking.chance_average_precision(count, q['lengths'] - 2))),
         'evidence_words': float(count.mean())}
  for name in ('later_words_first', 'last_statement_first'):
    out[name] = position_baselines.mean_with_error(found[name])[0]
  out['random_word_types'], out['random_word_types_se'] = position_baselines.mean_with_error(
      found['random_word_types'], found['random_word_types_se'])
  out.update(draws=draws, seed=seed)
  return out


@functools.lru_cache(maxsize=8)
def _computed(path: str, sha256: str) -> dict:
  del sha256  # keys the cache: a changed file is read again
  return compute_baselines(path)


def _test_file(dataset: str) -> Optional[str]:
  """The dataset's test file in the data folder ($ATTN_JAX_DATA), or None."""
  folder = sources.archive_dir(None)
  if not folder or not dataset.startswith('babi'):
    return None
  try:
    return sources.locate(dataset, folder).get('test')
  except DataError:
    return None


def task_baselines(root: str, dataset: Optional[str]) -> Optional[dict]:
  """The baselines of `dataset`'s test questions: from the study root's
  `BASELINES_FILE` where it holds them for the same test file (and this
  version of their definitions), else computed from the data folder's test
  file and recorded there; None where neither has them."""
  if not dataset:
    return None
  path = os.path.join(root, BASELINES_FILE)
  try:
    record = atomic_io.read_json(path)
  except (OSError, ValueError):
    record = {}
  if record.get('version') != BASELINES_VERSION:
    record = {}
  tasks = record.setdefault('tasks', {})
  test = _test_file(dataset)
  digest = None if test is None else _sha256(test)
  known = tasks.get(dataset)
  if known is not None and (digest is None or known.get('sha256') == digest):
    return known
  if test is None:
    return None
  tasks[dataset] = _computed(test, digest)
  record.update(version=BASELINES_VERSION, how=(
      'per bAbI task, the mean AP over its test questions of rankings that read no model '
      '(attn_jax.analysis.position_baselines), written by the study\'s report (attn_jax.tables.known_evidence)'))
  try:
    atomic_io.write_json(path, record)
  except OSError:
    pass  # a read-only root: the table still has them
  return tasks[dataset]


def matching_models(arm_dir: str, baselines: Optional[dict]) -> tuple[int, int]:
  """(models whose evidence summary has the chance AP and mean evidence-word
  count of `baselines`' questions, models with an evidence summary): equal
  numbers say the baselines are of the questions the models were scored on."""
  values = [v for v in (member_values(m) for m in collect_models(arm_dir)) if v]
  if baselines is None:
    return 0, len(values)
  same = [abs(v['chance'] - baselines['random_words']) < 1e-9
          and abs(v.get('evidence_words', baselines['evidence_words']) - baselines['evidence_words']) < 1e-9
          for v in values]
  return sum(same), len(values)


def _from_stage(values: list[dict]) -> dict:
  """The baselines the models' own evidence stage recorded (runs since it
  records them), where the data files are not at hand."""
  out = {}
  for name in ('later_words_first', 'random_word_types'):
    found = [v[f'stage:{name}'] for v in values if f'stage:{name}' in v]
    if found and len(found) == len(values):
      out[name] = float(np.mean(found))
  return out


# ------------------------------------------------------------ the tests

def beats(test: dict) -> bool:
  """A measure beats a baseline: its per-seed mean APs are shown above it
  ('different' or 'equivalent, with a difference smaller than the margin',
  the difference positive)."""
  return test['verdict'] in BEATS and (test['difference'] or 0) > 0


def arm_evidence(arm_dir: str, encoder: Optional[str] = None) -> dict:
  """Everything the study's evidence table says of one arm.

  Returns:
    {'cis': {measure or 'chance': t interval}, 'n': models with the stage,
     'dataset', 'encoder', 'baselines': {name: mean AP (a number per row)},
     'checked': (models matching the baselines' questions, models),
     'tests': {measure: {baseline: verdicts.compare one-sample}},
     'chance_name': the baseline that is this row's chance ('random_word_types'
       for an Average encoder, else 'random_words'),
     'best', 'next', 'best_test' (paired over seeds) or None, 'tied': bool}.
  """
  members = collect_models(arm_dir)
  values = [member_values(m) for m in members]
  values = [v for v in values if v]
  cis = {n: statistics.t_interval([v[n] for v in values if n in v]) for n in [*LABELS, 'chance']}
  dataset, configured = arm_setting(arm_dir)
  encoder = encoder or configured
  task = task_baselines(os.path.dirname(os.path.normpath(arm_dir)), dataset)
  checked = matching_models(arm_dir, task)
  baselines = {'random_words': cis['chance']['mean']} if cis['chance']['n'] else {}
  if task is not None and checked[0] == checked[1]:
    baselines.update({n: task[n] for n in BASELINE_LABELS if n in task})
  elif task is None and values:
    baselines.update(_from_stage(values))
  if encoder != 'average':
    baselines.pop('random_word_types', None)  # measures of other encoders do not tie by type
  chance_name = 'random_word_types' if encoder == 'average' and 'random_word_types' in baselines else 'random_words'
  measures = [m for m in LABELS if cis[m]['n']]
  tests = {m: {b: verdicts.compare([v[m] for v in values if m in v], value, MARGIN)
               for b, value in baselines.items()} for m in measures}
  ranked = sorted(measures, key=lambda m: cis[m]['mean'], reverse=True)
  best = ranked[0] if ranked else None
  second = ranked[1] if len(ranked) > 1 else None
  best_test = None
  if second is not None:
    pairs = [(v[best], v[second]) for v in values if best in v and second in v]
    best_test = verdicts.compare([a for a, _ in pairs], [b for _, b in pairs], MARGIN, paired=True)
  tied = best_test is not None and not beats(best_test)
  return {'cis': cis, 'n': max((ci['n'] for ci in cis.values()), default=0), 'dataset': dataset,
          'encoder': encoder, 'baselines': baselines, 'checked': checked, 'tests': tests,
          'chance_name': chance_name, 'best': best, 'next': second, 'best_test': best_test, 'tied': tied,
          'record': task or {}, 'per_question': sum(per_question(m) is not None for m in members)}


def _interval(test: dict) -> str:
  return (f'Δ {test["difference"]:+.3f} [{test["low95"]:+.3f}, {test["high95"]:+.3f}]'
          if test['low95'] is not None else f'Δ {test["difference"]:+.3f}' if test['difference'] is not None else '')


def best_text(found: dict) -> str:
  """'leave-one-out ≠ Meister g(x), Δ … [95 %]' where the paired test over
  seeds shows the best measure above the next; 'tied: A, B (?, Δ …)' where
  it does not; the one measure alone where there is no other."""
  if found['best'] is None:
    return '–'
  best, second, test = LABELS[found['best']], found['next'], found['best_test']
  if second is None:
    return best
  symbol = verdicts.SYMBOLS[test['verdict']]
  if found['tied']:
    return f'tied: {best}, {LABELS[second]} ({symbol} {_interval(test)})'
  return f'{best} {symbol} {LABELS[second]} ({_interval(test)})'


def beaten_text(found: dict, baseline: str) -> str:
  """The measures that beat `baseline` on the row: 'none', 'all 8', 'all but
  α', or their names, in LABELS' order; '–' where the baseline is not known."""
  if baseline not in found['baselines'] or not found['tests']:
    return '–'
  winners = [m for m, t in found['tests'].items() if beats(t[baseline])]
  if not winners:
    return 'none'
  if len(winners) == len(found['tests']):
    return f'all {len(winners)}'
  losers = [m for m in found['tests'] if m not in winners]
  if len(winners) > len(losers):
    return 'all but ' + ', '.join(LABELS[m] for m in losers)
  return ', '.join(LABELS[m] for m in winners)


def _number(value) -> str:
  return '–' if value is None else f'{value:.3f}'


def study_header(measures: list) -> list[str]:
  """The study table's header row, with a column per measure of `measures` (`shown`)."""
  return ['configuration', 'seeds', *[LABELS[m] for m in measures], 'chance: random words', 'random word types',
          'later words first', 'last statement first', 'best vs next (paired over seeds)',
          'beat chance', 'beat later words first', 'beat last statement first']


def study_rows(arms: list[tuple[str, str]]) -> list[list[str]]:
  """arms: (name, folder) -> the table: per arm the seeds, each measure's
  mean AP ± 95 % interval over seeds, the baselines (a number per row), the
  best measure against the next (paired test over seeds, 'tied' where not
  shown above it), and which measures beat chance (random word types for
  an Average encoder), later words first and the last statement first."""
  found_by_arm = [(name, arm_evidence(folder)) for name, folder in arms]
  measures = shown([found['cis'] for _, found in found_by_arm])
  rows = [study_header(measures)]
  for name, found in found_by_arm:
    cis, b = found['cis'], found['baselines']
    rows.append([name, str(found['n']) if found['n'] else '0 (not run yet)', *[cell(cis[m]) for m in measures],
                 cell(cis['chance']), _number(b.get('random_word_types')), _number(b.get('later_words_first')),
                 _number(b.get('last_statement_first')), best_text(found),
                 beaten_text(found, found['chance_name']), beaten_text(found, 'later_words_first'),
                 beaten_text(found, 'last_statement_first')])
  return rows


def headline(arms: list[tuple[str, str, str]]) -> list[str]:
  """The closing lines (arms: (name, encoder, folder)): per encoder, the
  rows whose best measure the paired test shows above the next; over all
  rows, how many have a measure that beats each baseline, and how many a
  tied best; each task's baselines with what checks their questions; the
  verdicts' legend."""
  found = [(name, encoder, arm_evidence(folder, encoder)) for name, encoder, folder in arms]
  found = [(name, encoder, f) for name, encoder, f in found if f['n']]
  if not found:
    return []
  lines = []
  for encoder in dict.fromkeys(e for _, e, _ in found):
    rows = [(name, f) for name, e, f in found if e == encoder and f['best_test'] is not None]
    apart = [f'{name}: {LABELS[f["best"]]}' for name, f in rows if not f['tied']]
    lines.append(f'{encoder}: the best measure shown above the next (paired over seeds) on {len(apart)} of '
                 f'{len(rows)} rows' + (f' ({"; ".join(apart)})' if apart else '')
                 + f'; tied on {len(rows) - len(apart)}')
  tested = [(name, f) for name, _, f in found if f['best_test'] is not None]
  lines.append(f'the best measure tied with the next on {sum(f["tied"] for _, f in tested)} of {len(tested)} rows')
  for baseline, label in (('chance', 'chance (random word types on Average rows, random words on the others)'),
                          ('later_words_first', 'later words first'),
                          ('last_statement_first', 'the last statement first')):
    known = [(name, f) for name, f in ((n, f) for n, _, f in found)
             if (f['chance_name'] if baseline == 'chance' else baseline) in f['baselines'] and f['tests']]
    if not known:
      continue
    winners = [name for name, f in known
               if any(beats(t[f['chance_name'] if baseline == 'chance' else baseline]) for t in f['tests'].values())]
    lines.append(f'rows where a measure beats {label}: {len(winners)} of {len(known)}'
                 + (f' ({", ".join(winners)})' if winners and len(winners) < len(known) else ''))
  lines += baseline_notes(found)
  lines.append(f'tests: each measure\'s per-seed mean APs against a baseline (one number per row: one-sample t '
               f'test), the best measure against the next paired over seeds; margin ±{MARGIN:g} AP '
               f'(verdicts.MARGINS); a measure beats a baseline where shown above it (≠ or ≡Δ); '
               + verdicts.LEGEND)
  return lines


def baseline_notes(found: list[tuple[str, str, dict]]) -> list[str]:
  """Per task: its baselines' values and how many models' evidence stage
  scored those very questions; where the per-question APs are."""
  lines = []
  for dataset in dict.fromkeys(f['dataset'] for _, _, f in found):
    rows = [f for _, _, f in found if f['dataset'] == dataset]
    same, total = sum(f['checked'][0] for f in rows), sum(f['checked'][1] for f in rows)
    if not any('later_words_first' in f['baselines'] for f in rows):
      lines.append(f'{dataset or "an arm of unknown data"}: no position baselines (neither its test file in '
                   f'$ATTN_JAX_DATA nor the study\'s {BASELINES_FILE} has them'
                   + (f', or its questions are not the models\': {same} of {total} models match)' if total else ')'))
      continue
    b = {}
    for f in rows:
      b.update(f['baselines'])
    record = next((f['record'] for f in rows if f['record']), {})
    se = record.get('random_word_types_se')
    lines.append(
        f'{dataset} baselines, mean AP over its {record.get("questions", "?")} test questions: random words '
        f'{_number(b.get("random_words"))}, random word types {_number(b.get("random_word_types"))}'
        + (f' (Monte Carlo, {record.get("draws")} type orders a question, standard error {se:.5f})' if se else '')
        + f', later words first {_number(b.get("later_words_first"))}, last statement first '
        f'{_number(b.get("last_statement_first"))} (the study\'s {BASELINES_FILE}); the same questions as the models\' '
        f'evidence stage: chance AP and mean evidence-word count equal on {same} of {total} models')
  kept = sum(f['per_question'] for _, _, f in found)
  models = sum(f['n'] for _, _, f in found)
  lines.append(f'per-question APs (the stage\'s kept.npz, saved by report --save) for {kept} of {models} models'
               + ('' if kept == models else ': models analysed before the stage kept them have none, so no test '
                  'across questions can be run on them (retraining the study fills them)'))
  return [line for line in lines if line]


def study_figure(arms: list[tuple[str, str]], path: str) -> list[str]:
  rows = [(name, arm_intervals(folder)) for name, folder in arms]
  measures = shown([cis for _, cis in rows])
  rows = [(name, {LABELS.get(m, m): ci for m, ci in cis.items()}) for name, cis in rows
          if any(ci['n'] for ci in cis.values())]
  if not rows:
    return []
  os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
  return evidence_figures.study_intervals(rows, [LABELS[m] for m in measures], path)


def chance_note(arms: list[tuple[str, str]]) -> str:
  chance = [arm_intervals(f)['chance'] for _, f in arms]
  means = [c['mean'] for c in chance if c['n']]
  return ('' if not means else
          f'chance: a random ranking\'s expected AP, {np.min(means):.3f}–{np.max(means):.3f} across the rows '
          '(it depends on how many of a passage\'s words are evidence)')
