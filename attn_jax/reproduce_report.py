"""One report of everything the given runs reproduce, for people to read.

    python -m attn_jax.report reproduce RUN ... [--out report/] [--text "..."]

Writes `<out>/index.html` (self-contained) and `<out>/REPORT.md` (figures in
`<out>/figures/`). Each paper whose analyses or experiments the runs hold gets
its tables, measured beside published with a verdict per row, made by the
same row functions as the README's tables (`reproduction`, `wp_report`,
`meister_report`, `report.training_rows`; J&W's test metrics get a
bootstrap interval over the run's test predictions); then the 95 % intervals
the summaries record; then, per run, how to reproduce it (`run_command`), its
data fingerprints and config, the figures its stages and experiments drew,
and heatmaps of chosen test documents (`chosen_documents`); then the texts
given with `--text`, explained by each run (`attn_jax.explain`). What was not
run is said, not left out silently.
"""

import os
import re
from typing import Sequence

import numpy as np

from attn_jax import (atomic_io, chosen_documents, errors, meister_report, published, report,
                      report_render as render, reproduction, run_command, statistics, wp_report)
from attn_jax.explain import explain
from attn_jax.restore import restore
from attn_jax.training.metrics import classification_metrics

TITLE = 'attn-jax reproduction report'
JW_STAGES = ('gradient', 'loo', 'kendall', 'permutation', 'adversarial')
SS_STAGES = ('erasure',)
WP_EXPERIMENTS = ('uniform', 'seeds', 'consistent_adversary', 'guides')
MEISTER_EXPERIMENTS = ('sparsegen_sweep', 'adversary_regimes')
WP_TITLES = {'wp-table2': 'W&P Table 2: F1 with learned and with uniform attention',
             'wp-table3': 'W&P Table 3: the diagnostic MLP with each guide\'s attention',
             'wp-lambda-sweep': 'W&P Figure 5 / Table 5: the model-consistent adversary along λ',
             'wp-seeds': 'W&P Figure 3: seed variance against J&W\'s adversary',
             'wp-wall-time': 'Wall time of the W&P experiments'}
MEISTER_TITLES = {'meister-table1': 'Meister Table 1: entropy of g_{h_p}(x)',
                  'meister-table6': 'Meister Table 6: τ of α with each importance measure',
                  'meister-table2': 'Meister Table 2: sparsegen λ against input-importance entropy',
                  'meister-sweep': 'The sparsegen λ grid, model by model',
                  'meister-table3': 'Meister Table 3: test accuracy',
                  'meister-table5': 'Meister Table 5: frozen and unfrozen adversaries',
                  'meister-wall-time': 'Wall time of Meister\'s stages and experiments'}
JW_MODEL = 'bilstm + tanh / softmax'  # the model J&W's test metrics are of (`report.load_run`'s wording)
PREDICTIONS = 'predictions_test.npz'
CI_VALUE_KEYS = ('nanmean', 'mean', 'mean_max_jsd', 'estimate')  # which number an interval is of


def _slug(text: str) -> str:
  return re.sub(r'[^A-Za-z0-9]+', '-', text).strip('-')


class _Run:
  """What the report reads of one run folder."""

  def __init__(self, path: str, index: int):
    if not os.path.isfile(os.path.join(path, 'eval.json')) or not os.path.isfile(os.path.join(path, 'config.json')):
      raise errors.AttnJaxError(f'{path} is not a run folder: it lacks eval.json or config.json '
                                '(pass a workdir or --output_dir written by run.py)')
    self.path = path
    try:
      self.info = report.load_run(path)
    except (OSError, ValueError, KeyError, TypeError) as e:
      raise errors.AttnJaxError(f'{path}: eval.json or config.json does not read ({type(e).__name__}: {e})') from e
    self.name = self.info['name']
    self.slug = f'{index}-{_slug(self.name)}'  # file names: two runs may share a folder name
    self.stages = reproduction.load_found(path)
    self.experiments = wp_report.load_summaries(path)

  def has(self, stages=(), experiments=()) -> bool:
    return any(s in self.stages for s in stages) or any(e in self.experiments for e in experiments)


# ---------------------------------------------------------------- the papers

def _table_section(title: str, rows: list, notes=(), level: int = 3) -> render.Section:
  return render.Section(title, [render.Table(rows, tuple(notes))], level)


def _metric_of(labels: np.ndarray, probs: np.ndarray, metric: str):
  """The metric of the documents at the given indices: the bootstrap resamples
  indices, as a metric needs labels and probabilities together."""
  return lambda index: classification_metrics(labels[index.astype(int)], probs[index.astype(int)])[metric]


def _metric_rows(runs: list[_Run]) -> list[list[str]]:
  """J&W's test metrics with a 95 % percentile bootstrap interval over the
  run's test predictions (predictions_test.npz), verdict as for the analyses."""
  rows = [reproduction.HEADER]
  for r in runs:
    # J&W's numbers are for their BiLSTM + tanh + softmax model only (as `report.training_rows`).
    paper = published.JAIN_WALLACE_TEST.get(r.info['dataset'], {}) if r.info['model'] == JW_MODEL else {}
    path = os.path.join(r.path, PREDICTIONS)
    if not paper or not os.path.isfile(path):
      continue
    with np.load(path) as f:
      probs, labels = f['probs'], f['labels']
    measured_all = classification_metrics(labels, probs)
    for metric, value in paper.items():
      measured = measured_all[metric]
      ci = statistics.bootstrap_interval(np.arange(len(labels)), _metric_of(labels, probs, metric))
      rows.append([r.name, f'test {metric}', f'{measured:.3f}', f'{value:.3f}',
                   reproduction.verdict({'bootstrap_ci95': [ci['low'], ci['high']]}, measured, value, 0.0),
                   f'{len(labels)} test docs, {PREDICTIONS}'])
  return rows


def _jw_sections(runs: list[_Run]) -> list[render.Section]:
  blocks = [render.Text('Test metrics of the selected model beside J&W\'s published numbers (BiLSTM + tanh + '
                        'softmax only).'), render.Table(report.training_rows([r.info for r in runs]))]
  metric_rows = _metric_rows(runs)
  if len(metric_rows) > 1:
    blocks += [render.Text('With a verdict: "within" when J&W\'s number lies in the 95 % percentile bootstrap '
                           'interval over the test documents of the run\'s own predictions.'),
               render.Table(metric_rows)]
  sections = [render.Section('Jain & Wallace: test metrics of each model', blocks)]
  analysed = [r for r in runs if r.has(JW_STAGES + SS_STAGES)]
  if analysed:
    rows, notes = [reproduction.HEADER], []
    for r in analysed:
      rows += reproduction.analysis_rows(r.name, r.info['dataset'], {s: f.summary for s, f in r.stages.items()})
      notes += reproduction.alternatives(r.path, r.stages)
    sections.append(render.Section('Jain & Wallace and Serrano & Smith: analyses', [
        render.Text('"within": J&W\'s number lies in the 95 % bootstrap interval over test documents that the '
                    'summary records (older summaries: within J&W\'s own run-to-run spread). S&S published no '
                    'numbers for binary tasks: their rows have no reference.'),
        render.Table(rows, tuple(notes))]))
  return sections


def _paper_sections(title: str, made: dict, titles: dict) -> list[render.Section]:
  """A paper's tables that have rows (`wp_report.tables`, `meister_report.tables`)."""
  blocks = [_table_section(titles.get(block, block), rows, notes)
            for block, (rows, notes) in made.items() if len(rows) > 1]
  return [render.Section(title, [])] + blocks if blocks else []


def _wp_sections(runs: list[_Run]) -> list[render.Section]:
  chosen = [(r.name, r.info['dataset'], {e: s for e, s in r.experiments.items() if e in WP_EXPERIMENTS})
            for r in runs if r.has(experiments=WP_EXPERIMENTS)]
  return _paper_sections('Wiegreffe & Pinter', wp_report.tables(chosen), WP_TITLES) if chosen else []


def _meister_sections(runs: list[_Run]) -> list[render.Section]:
  chosen = [meister_report.load(r.path) for r in runs
            if r.has(meister_report.STAGES, MEISTER_EXPERIMENTS)]
  return _paper_sections('Meister et al.', meister_report.tables(chosen), MEISTER_TITLES) if chosen else []


def _intervals(summary, path=()):
  """(statistic path, value, [low, high], n) of every entry with a bootstrap interval."""
  if isinstance(summary, dict):
    if isinstance(summary.get('bootstrap_ci95'), list):
      value = next((summary[k] for k in CI_VALUE_KEYS if isinstance(summary.get(k), (int, float))), None)
      yield path, value, summary['bootstrap_ci95'], summary.get('n')
    for key, value in summary.items():
      yield from _intervals(value, path + (str(key),))


def _statistic(stage: str, path: tuple) -> str:
  """A summary path in the tables' words: ('pairs', 'attention_loo', 'neg') -> 'τ(α, LOO) neg'."""
  parts = [p for p in path if p != 'pairs']
  if parts and parts[0] in reproduction.TAU_PAIRS:
    return ' '.join([reproduction.TAU_PAIRS[parts[0]], *parts[1:]])
  if len(parts) == 2 and parts[0] == 'tau':
    measure = parts[1]
    base = measure.removesuffix('_detached')
    name = meister_report.NAMES.get(base, base) + (' detached' if base != measure else '')
    return f'τ(α, {name})'
  if stage == 'adversarial':
    return ' '.join(['max JSD', *parts])
  return ' '.join(parts)


def _interval_rows(runs: list[_Run]) -> list[list[str]]:
  rows = [['run', 'from', 'statistic', 'measured', '95% interval', 'over']]
  for r in runs:
    for stage, found in r.stages.items():
      seen = set()
      for path, value, (low, high), n in _intervals(found.summary):
        if (value, low, high, n) in seen:  # the same entry filed twice (importance: tau_detached)
          continue
        seen.add((value, low, high, n))
        rows.append([r.name, stage, _statistic(stage, path), '–' if value is None else f'{value:.3f}',
                     f'{low:.3f}–{high:.3f}', f'{n if n is not None else "?"} documents (bootstrap)'])
    seeds = r.experiments.get('seeds', {}).get('seed_models', {})
    for metric, entry in seeds.items():
      ci = statistics.t_interval(entry.get('values', []))
      if ci['n'] > 1:
        rows.append([r.name, 'seeds', f'seed models {metric}', f'{ci["mean"]:.3f}',
                     f'{ci["low"]:.3f}–{ci["high"]:.3f}', f'{ci["n"]} seeds (Student t)'])
  return rows


# ------------------------------------------------------------------ each run

def _provenance(r: _Run) -> list[render.Block]:
  command = run_command.reproduce(r.path)
  data = {}
  if os.path.isfile(os.path.join(r.path, 'data.json')):
    data = atomic_io.read_json(os.path.join(r.path, 'data.json'))
  results = r.info['results']
  keyed = sorted({f.summary.get('key', {}).get('data') for f in r.stages.values()} - {None})
  splits = ', '.join(f'{s} {v.get("size")} ({v.get("positive")} positive)'
                     for s, v in data.get('splits', {}).items()) or '–'
  rows = [['record', 'value'],
          ['eval.json data_fingerprint', str(results.get('data_fingerprint', 'not recorded'))],
          ['data.json fingerprint', str(data.get('fingerprint', 'no data.json'))],
          ['analysis results keyed by', ', '.join(keyed) or '–'],
          ['splits', splits], ['vocabulary', str(data.get('vocab_size', '–'))],
          ['data source', report.data_source_cell(results.get('data_source') or data.get('source'))]]
  return [render.Text('Reproduce it with (from the repository root):'), render.Code(command.command),
          render.Table([['about the command'], *[[n] for n in command.notes]]),
          render.Table(rows), render.Details('config.json', render.config_text(command.config))]


def _figures(r: _Run) -> list[render.Block]:
  listed = [('training', 'training_curves.png')]
  listed += [(stage, f) for stage, found in r.stages.items() for f in found.summary.get('figures', [])]
  listed += [(name, f) for name, s in r.experiments.items() for f in s.get('figures', [])]
  blocks = []
  for origin, figure in listed:
    path = os.path.join(r.path, figure)
    if figure.endswith('.png') and os.path.isfile(path):
      blocks.append(render.Figure(path, f'{r.name} · {origin} · {os.path.basename(figure)}',
                                  f'{r.slug}-{origin}-{os.path.basename(figure)}'))
  return blocks or [render.Text('No figures in this run folder.')]


def _heatmaps(r: _Run) -> list[render.Block]:
  documents, notes = chosen_documents.choose(r.path)
  blocks = [render.Text('Words coloured by each measure, each row scaled to its own largest value (the exact value '
                        'is in each word\'s tooltip).')] if documents else []
  blocks += [render.Heatmap(d.words, d.scores, d.title, f'{r.slug}-doc{d.row}') for d in documents]
  return blocks + [render.Text(n) for n in notes]


def _run_sections(r: _Run) -> list[render.Section]:
  return [render.Section(f'Run {r.name}', [render.Text(f'`{r.path}`: {r.info["dataset"]}, {r.info["model"]}, '
                                                       f'{r.info["embed_init"]}, seed {r.info["seed"]}.')]),
          render.Section('How to reproduce it', _provenance(r), 3),
          render.Section('Figures', _figures(r), 3),
          render.Section('Chosen test documents', _heatmaps(r), 3)]


def _text_sections(runs: list[_Run], texts: Sequence[str]) -> list[render.Section]:
  if not texts:
    return []
  blocks = []
  for r in runs:
    try:
      explanations = explain(restore(r.path), list(texts))
    except (errors.AttnJaxError, ValueError, OSError) as e:
      blocks.append(render.Text(f'{r.name}: the texts could not be explained ({e})'))
      continue
    for i, e in enumerate(explanations):
      unknown = int((~e.known).sum())
      title = (f'{r.name}: "{e.text}" (ŷ = {e.prob:.3f}'
               + (f'; {unknown} word(s) read as <UNK>)' if unknown else ')'))
      blocks.append(render.Heatmap(e.words, {chosen_documents.ALPHA: e.alpha, chosen_documents.GRADIENT: e.gradient,
                                             chosen_documents.LOO: e.loo}, title, f'{r.slug}-text{i}'))
  return [render.Section('Your texts', [render.Text(
      'Each text tokenized as the run\'s dataset and read with its vocabulary (`attn_jax.explain`).')] + blocks)]


# ------------------------------------------------------------------- overview

def _overview(runs: list[_Run], papers: list[render.Section], command: str) -> list[render.Section]:
  ran = [['run', 'dataset', 'model', 'J&W analyses', 'S&S erasure', 'W&P experiments', 'Meister']]
  for r in runs:
    meister = [s for s in meister_report.STAGES if s in r.stages] + [e for e in MEISTER_EXPERIMENTS
                                                                    if e in r.experiments]
    ran.append([r.name, r.info['dataset'], r.info['model'],
                ', '.join(s for s in JW_STAGES if s in r.stages) or 'not run',
                'ran' if 'erasure' in r.stages else 'not run',
                ', '.join(e for e in WP_EXPERIMENTS if e in r.experiments) or 'not run',
                ', '.join(meister) or 'not run'])
  counts = [['tables', 'rows agreeing with the paper', 'rows missing it']]
  for section in papers:
    for block in section.blocks:
      if isinstance(block, render.Table):
        ok, missed = render.verdict_counts(block.rows)
        if ok or missed:
          counts.append([section.title, str(ok), str(missed)])
  missing = []
  if not any(r.has(JW_STAGES + SS_STAGES) for r in runs):
    missing.append('J&W\'s and S&S\'s analyses: no run holds them (run.py runs them by default; '
                   '`--config.analyses=` turns them off)')
  if not any(r.has(experiments=WP_EXPERIMENTS) for r in runs):
    missing.append('W&P: no run holds their experiments (`--config.experiments=' + ','.join(WP_EXPERIMENTS) + '`)')
  if not any(r.has(meister_report.STAGES, MEISTER_EXPERIMENTS) for r in runs):
    missing.append('Meister et al.: no run holds their stages or experiments (`--config.analyses=importance,'
                   'state_importance`, `--config.experiments=' + ','.join(MEISTER_EXPERIMENTS) + '`)')
  blocks = [render.Text(f'Made by `{command}` with {run_command.version()}. The runs do not record the '
                        'attn-jax version that trained them; each result\'s key (in the tables) names the '
                        'checkpoint, data and settings it was computed from.'),
            render.Table(ran)]
  if len(counts) > 1:
    blocks.append(render.Table(counts))
  if missing:
    blocks.append(render.Table([['not in these runs'], *[[m] for m in missing]]))
  return [render.Section('What these runs reproduce', blocks)]


def gather(paths: Sequence[str], texts: Sequence[str] = (), command: str = '') -> list[render.Section]:
  """The report's sections for the run folders `paths`.

  Raises:
    AttnJaxError: a path is not a run folder.
  """
  if not paths:
    raise errors.AttnJaxError('name at least one run folder (a workdir or --output_dir written by run.py)')
  runs = [_Run(p, i) for i, p in enumerate(paths)]
  papers = _jw_sections(runs) + _wp_sections(runs) + _meister_sections(runs)
  intervals = _interval_rows(runs)
  if len(intervals) > 1:
    papers.append(render.Section('95 % intervals the results record', [
        render.Text('Percentile bootstrap intervals over test documents, as the stages record them, and '
                    'Student-t intervals over the seed models of W&P\'s seeds experiment (`attn_jax.statistics`).'),
        render.Table(intervals)]))
  sections = _overview(runs, papers, command) + papers
  for r in runs:
    sections += _run_sections(r)
  return sections + _text_sections(runs, texts)


def write(paths: Sequence[str], out: str, texts: Sequence[str] = (), command: str = '') -> dict:
  """Writes `<out>/index.html` and `<out>/REPORT.md` (figures in `<out>/figures/`);
  returns {'html': path, 'markdown': path}."""
  sections = gather(paths, texts, command)
  os.makedirs(out, exist_ok=True)
  return {'html': render.write_html(TITLE, sections, out), 'markdown': render.write_markdown(TITLE, sections, out)}
