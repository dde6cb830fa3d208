"""Jain & Wallace's numbers beside ours: test metrics, the data, and the
analyses (τ of α with gradient and LOO, the permutation test, the adversary;
J&W's `graph_outputs/`).

    python -m attn_jax.report training WORKDIR_OR_RESULTS_DIR ... [--save results] [--readme FILE]
    python -m attn_jax.report data [SAVED.json] [--save results] [--readme FILE]
    python -m attn_jax.report analyses WORKDIR_OR_RESULTS_DIR ... [--save results] [--readme FILE]

`training` reads `eval.json` and `config.json` of each run and prints
measured test metrics beside Jain & Wallace's; `--save` copies each run's
small result files (eval.json, metrics.jsonl, config.json, data.json) to
`results/<run>/`, which is committed. `data` prepares every dataset
(ATTN_JAX_DATA) and prints split sizes and vocabularies beside J&W's;
`--save` writes them to `results/data_splits.json`. `analyses` prints each
run's analysis summaries beside the published numbers (the rows of every
paper's stages, the `stage` tables of `report_registry.TABLES`); `--save` copies the summaries to
`results/<run>/analyses/<stage>/`; it also writes each stage's time
(`analysis-timings`). `--readme FILE` rewrites that table's block in FILE.
"""

import os

import numpy as np

from attn_jax import config as config_lib
from attn_jax.analysis import statistics
from attn_jax.core import atomic_io, registry
from attn_jax.core.errors import ConfigError
from attn_jax.papers import published
from attn_jax.tables import render, seed_spread
from attn_jax.tables.common import (RunFolder, check_any_marker, load_run, load_stage_results, markdown, nothing_to_report,
                                    plain, read_saved, root_of, save_run_files, data_source_cell, write_blocks)
from attn_jax.tables.report_registry import COMMANDS, SECTIONS, TABLES, Command, PaperSections, Table, tables
from attn_jax.stages import feature_importance, stage_store as store
from attn_jax.training.metrics import classification_metrics

# J&W's three τ (the kendall stage's pairs) and their labels, 'τ(α, gradient)', from the measures' records.
TAU_PAIRS = {pair: feature_importance.tau_label(pair) for pair in feature_importance.PAIRS}
HEADER = ['run', 'statistic', 'measured', 'J&W published', 'verdict', 'from (documents, key)']
METRICS = ('accuracy', 'f1_pos', 'roc_auc')
DATASETS = ('sst', 'imdb', '20news', 'agnews')
JW_MODEL = 'bilstm + tanh / softmax'  # the model J&W's test metrics are of (`load_run`'s wording)
PREDICTIONS = 'predictions_test.npz'


# ------------------------------------------------------- the analyses table

# stage -> its most complete results in a run folder (the name notebooks use).
load_found = load_stage_results


def load_summaries(run: str) -> dict:
  """stage -> the summary of its most complete results (most documents)."""
  return {stage: found.summary for stage, found in load_found(run).items()}


def source_label(summary: dict) -> str:
  """Which results a number comes from: document count, split and key."""
  key = summary.get('key', {})
  return f'{summary.get("documents", "?")} {key.get("split", "?")} docs, key {key.get("hash", "?")[:8]}'


def alternatives(run: str, found: dict[str, store.Found]) -> list[str]:
  """Lines naming the other results a run holds beside those shown."""
  lines = []
  for stage, shown in found.items():
    for other in store.find(run, stage):
      if other.directory != shown.directory:
        lines.append(f'{run}: {stage} also has {source_label(other.summary)} in {other.directory}'
                     + ('' if other.intact else f' (damaged: {other.problem})'))
  for stage in registry.STAGES.names():  # a stage with damaged results only: named, not silently missing
    if stage not in found:
      lines += [f'{run}: {stage} not shown, damaged: {other.problem}' for other in store.find(run, stage)[:1]
                if not other.intact]
  return lines


def verdict(entry: dict, measured: float, paper: float, tolerance: float) -> str:
  """'within' when the published value lies in the 95 % bootstrap interval over
  test documents (attn_jax.analysis.statistics) recorded in the summary; summaries of
  attn-jax <= 0.1 have none, and fall back to a fixed tolerance."""
  ci = entry.get('bootstrap_ci95')
  if ci is not None:
    inside = ci[0] <= paper <= ci[1]
    return ('within' if inside else 'MISSED') + f' (95% CI {ci[0]:.3f}–{ci[1]:.3f})'
  return ('within' if abs(measured - paper) <= tolerance else 'MISSED') + f' (±{tolerance}, no CI recorded)'


def _f(x, digits=3) -> str:
  return '–' if x is None else f'{x:.{digits}f}'


def _configuration(model: str) -> tuple[str, str, str]:
  """'cnn + dot / softmax' (`load_run`'s wording) -> (encoder, attention, projection)."""
  encoder, _, rest = model.partition(' + ')
  attention, _, projection = rest.partition(' / ')
  return encoder, attention, projection


def _grid_entry(dataset: str, model: str) -> dict:
  """J&W's published numbers of this run's configuration (their grids; {} for another model)."""
  encoder, attention, projection = _configuration(model)
  if projection != 'softmax':
    return {}
  return {**published.JAIN_WALLACE_GRID, **published.JAIN_WALLACE_QA_GRID}.get((dataset, encoder, attention), {})


def published_tau(dataset: str, model: str = JW_MODEL) -> dict:
  """{group: {pair: (mean, std, sig)}} J&W publish for the run's configuration:
  BiLSTM + tanh with its per-class rows; the grid's other configurations overall."""
  if model == JW_MODEL and dataset in published.JAIN_WALLACE_TAU:
    return published.JAIN_WALLACE_TAU[dataset]
  tau = {p: v for p, v in _grid_entry(dataset, model).get('tau', {}).items() if v and v[0] is not None}
  return {'overall': tau} if tau else {}


def _published_overall(dataset: str, model: str) -> dict:
  """{'tau_<pair>': J&W's overall mean} for the run's configuration."""
  overall = published_tau(dataset, model).get('overall', {})
  return {f'tau_{pair}': value[0] for pair, value in overall.items()}


def tau_rows(name: str, dataset: str, kendall: dict, model: str = JW_MODEL) -> list[list[str]]:
  paper = published_tau(dataset, model)
  spread = published.JAIN_WALLACE_TAU_SPREAD
  rows = []
  # 'overall', then the predicted classes the summary holds ('neg', 'pos'; none for many classes),
  # whatever the order of the summary's keys (a summary read back has them sorted).
  for group in sorted(kendall['pairs']['attention_gradient'], key=lambda g: g != 'overall'):
    for pair, label in TAU_PAIRS.items():
      m = kendall['pairs'][pair][group]
      p = paper.get(group, {}).get(pair)
      rows.append([name, f'{label} {group}', f'{_f(m["mean"])} ± {_f(m["std"])} (sig {_f(m["pval_sig"], 2)})',
                   f'{p[0]:.3f} ± {p[1]:.3f} (sig {p[2]:.2f})' if p else '–',
                   verdict(m, m.get('nanmean', m['mean']), p[0], spread) if p else ''])
  return rows


def adversarial_rows(name: str, dataset: str, adversarial: dict, model: str = JW_MODEL) -> list[list[str]]:
  if model == JW_MODEL:
    paper = published.JAIN_WALLACE_ADVERSARIAL.get(dataset, {})
  else:  # the grid's other configurations: the mean only, read off their histograms
    paper = {c: (v, None) for c, v in _grid_entry(dataset, model).get('adversarial_max_jsd', {}).items()}
  rows = []
  groups = [g for g in ('neg', 'pos') if g in adversarial] or ['overall']  # by class where J&W show it
  for group in groups:
    m, p = adversarial[group], paper.get(group)
    rows.append([name, f'adversarial max JSD {group}',
                 f'{_f(m["mean_max_jsd"])} (>0.5: {_f(m["fraction_above_0.5"], 2)})',
                 ('–' if not p else f'≈{p[0]:.2f}' + ('' if p[1] is None else f' (>0.5: {p[1]:.2f})')),
                 verdict(m, m['mean_max_jsd'], p[0], 0.05) if p else ''])
  return rows


def permutation_rows(name: str, dataset: str, permutation: dict, model: str = JW_MODEL) -> list[list[str]]:
  bins = {b: d for b, d in permutation['by_bin'].items() if d.get('n', 0) >= 10}
  medians = [d['median'] for d in bins.values()]
  # Read off J&W's BiLSTM + tanh violin plots: no other configuration's.
  paper = published.JAIN_WALLACE_PERMUTATION_RANGE.get(dataset) if model == JW_MODEL else None
  measured = f'{min(medians):.3f}–{max(medians):.3f}' if medians else '–'
  detail = ', '.join(f'{b}: {d["median"]:.3f} (n={d["n"]})' for b, d in bins.items())
  verdict = ''
  if paper and medians:
    verdict = 'overlaps' if min(medians) <= paper[1] and max(medians) >= paper[0] else 'MISSED'
  # ∣ (U+2223), not |: a | would split the Markdown cell. More classes: the TVD (J&W's QA code).
  spec = registry.DATASETS.get(dataset)
  change = 'TVD' if spec is not None and spec.num_classes > 2 else '∣Δŷ∣'
  return [[name, f'permutation median {change} by max-α bin (n≥10)', f'{measured} [{detail}]',
           f'≈{paper[0]:.2f}–{paper[1]:.2f}' if paper else '–', verdict]]


TABLES.register(Table('kendall', 'stage', 10, tau_rows, paper='jw'))
TABLES.register(Table('adversarial', 'stage', 20, adversarial_rows, paper='jw'))
TABLES.register(Table('permutation', 'stage', 30, permutation_rows, paper='jw'))


def analysis_rows(name: str, dataset: str, summaries: dict, papers=None, model: str = JW_MODEL) -> list[list[str]]:
  """The rows of every registered stage table (of `papers`, default all) that
  `summaries` has, beside what is published for the run's `model` (`load_run`'s
  'encoder + attention / projection'); the last cell says which results each comes from."""
  rows = []
  for entry in tables('stage'):
    if entry.name in summaries and (papers is None or entry.paper in papers):
      rows += [row + [source_label(summaries[entry.name])]
               for row in entry.rows(name, dataset, summaries[entry.name], model=model)]
  return rows


def timing_rows(runs: list[dict]) -> list[list[str]]:
  """Each stage's recorded time on each run (summary.json `seconds`)."""
  rows = [['run', 'stage', 'documents', 'seconds', 'documents/s', 'key']]
  for run in runs:
    for stage, summary in load_summaries(run['path']).items():
      rows.append([run['name'], stage, str(summary['documents']), f'{summary["seconds"]:.1f}',
                   f'{summary["documents_per_second"]:.1f}', summary.get('key', {}).get('hash', '?')[:8]])
  return rows


def _analyses(parser, args, argv) -> None:
  del parser, argv
  here = root_of(args.readme)
  runs = _loaded(args)
  if args.save:
    for run in runs:
      save_run_files(run, args.save)
      for found in load_found(run['path']).values():
        # The shown results keep their key-named folder, so the saved copy
        # says which settings and document count it is.
        relative = os.path.relpath(found.directory, run['path'])
        atomic_io.write_json(os.path.join(args.save, run['name'], relative, 'summary.json'), store.summary_copy(found))
    runs = [load_run(os.path.join(args.save, run['name'])) for run in runs]
  rows, notes, summaries = [HEADER], [], []
  for run in runs:
    found = load_found(run['path'])
    summaries.append({stage: f.summary for stage, f in found.items()})
    rows += analysis_rows(run['name'], run['dataset'], summaries[-1], model=run['model'])
    notes += alternatives(run['path'], found)
  nothing_to_report([rows], [run['path'] for run in runs], 'analysis results (analyses/<stage>/*/summary.json, intact)',
                    'run its stages first (python run.py --config=... --workdir=... --config.analyses=gradient,loo,'
                    'kendall,...), or give a run that holds them')
  print(plain(rows))
  if notes:
    print('Each stage shows its most complete results; the runs also hold:\n' + '\n'.join(notes))
  for run in runs:  # one seed beside its configuration's seeds (the J&W grid's row)
    for line in seed_spread.lines(run['path'], _published_overall(run['dataset'], run['model'])):
      print(line)
  if args.readme:
    sources = [os.path.relpath(run['path'], here) for run in runs]
    command = 'python -m attn_jax.report analyses ' + ' '.join(sources) + (
        f' --block {args.block}' if args.block else '')
    files = [f'{s}/analyses/*/summary.json' for s in sources]
    block = args.block or 'analysis'
    papers = list(dict.fromkeys(e.paper for e in tables('stage')))
    # Each of these blocks is written where a file holds it (one paper's rows alone:
    # README.md's S&S table); a readme holding none of them is an error.
    check_any_marker(args.readme, [f'{block}-{name}' for name in ['results', 'timings'] + papers])
    write_blocks(args.readme, f'{block}-results', markdown(rows), command, files, optional=True)
    write_blocks(args.readme, f'{block}-timings', markdown(timing_rows(runs)), command, files, optional=True)
    for paper in papers:
      own = [HEADER] + [row for run, s in zip(runs, summaries)
                        for row in analysis_rows(run['name'], run['dataset'], s, (paper,), model=run['model'])]
      write_blocks(args.readme, f'{block}-{paper}', markdown(own), command, files, optional=True)


# ------------------------------------------------------ test metrics, data

def training_rows(runs: list[dict]) -> list[list[str]]:
  rows = [['run', 'model', 'embeddings', 'seed', 'test n', *[f'{m} (J&W)' for m in METRICS],
           'selected epoch (1 = first)', 'its dev roc_auc', 'train time', 'data source']]
  for run in runs:
    r = run['results']
    # J&W's numbers are for their BiLSTM + tanh + softmax model only.
    paper = (published.JAIN_WALLACE_TEST.get(run['dataset'], {})
             if run['model'] == 'bilstm + tanh / softmax' else {})
    # A multi-class model (S&S's) has accuracy only of these.
    cells = [('–' if m not in r else f'{r[m]:.3f} ({paper[m]:.3f})' if m in paper else f'{r[m]:.3f} (–)')
             for m in METRICS]
    selection = next((v for k, v in r.items() if k.startswith('selection_')), float('nan'))
    minutes = r.get('training_seconds', float('nan')) / 60
    rows.append([run['name'], run['model'], run['embed_init'], str(run['seed']), str(r['n']), *cells,
                 str(r['selected_epoch'] + 1), f'{selection:.3f}', f'{minutes:.1f} min',
                 data_source_cell(r.get('data_source'))])
  return rows


def measure_splits() -> dict:
  """dataset -> split -> [n, negatives, positives], plus the vocabulary size."""
  from attn_jax.data import builders, jain_wallace_protocol as jain_wallace  # pylint: disable=g-import-not-at-top
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  measured = {}
  for dataset in DATASETS:
    cfg = config_lib.default_config(dataset, 'bilstm').data
    if dataset == 'agnews':  # only test.csv is distributed beside the project
      test = jain_wallace.ag_news(builders.load_raw(dataset), ('test',)).splits['test']
      splits, vocab = {'test': test.labels}, None
    else:
      data = load_dataset(cfg)
      splits, vocab = {s: v.labels for s, v in data.splits.items()}, len(data.vocab)
    measured[dataset] = {s: [len(y), int((y == 0).sum()), int((y == 1).sum())] for s, y in splits.items()}
    measured[dataset]['vocab'] = vocab
  return measured


def data_rows(measured: dict) -> list[list[str]]:
  def cell(value):
    return '–' if value is None else '/'.join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)

  rows = [['dataset', 'train (n/neg/pos)', 'dev', 'test', 'test (J&W)', 'vocab', 'vocab (J&W)']]
  # J&W's order (`DATASETS`), whatever order a saved file keeps its keys in; others after.
  order = [d for d in DATASETS if d in measured] + sorted(d for d in measured if d not in DATASETS)
  for dataset, m in ((d, measured[d]) for d in order):
    paper = published.JAIN_WALLACE_SPLITS.get(dataset, {})
    rows.append([dataset, cell(m.get('train')), cell(m.get('dev')), cell(m.get('test')),
                 cell(paper.get('test')), cell(m.get('vocab')), cell(paper.get('vocab'))])
  return rows


def _loaded(args) -> list[dict]:
  """The runs named on the command line, each under its `--save-as` name if given."""
  runs = [load_run(p) for p in args.runs]
  names = getattr(args, 'save_as', None) or []
  if names and len(names) != len(runs):
    raise ConfigError(f'--save-as was given {len(names)} time(s) for {len(runs)} run(s): give one name per run')
  return [{**run, 'name': name} for run, name in zip(runs, names)] if names else runs


def _training(parser, args, argv) -> None:
  del parser, argv
  here = root_of(args.readme)
  runs = _loaded(args)
  print(plain(training_rows(runs)))
  if args.save:
    runs = [load_run(save_run_files(run, args.save)) for run in runs]
  if args.readme:
    sources = [os.path.relpath(run['path'], here) for run in runs]
    write_blocks(args.readme, 'training-results', markdown(training_rows(runs)),
                'python -m attn_jax.report training ' + ' '.join(sources),
                [f'{s}/eval.json' for s in sources])


def _data(parser, args, argv) -> None:
  del parser, argv
  here = root_of(args.readme)
  if args.runs:
    measured, path = read_saved(args.runs[0], 'the data_splits.json that `report data --save DIR` wrote',
                                'or no path, to measure the splits'), args.runs[0]
  else:
    measured, path = measure_splits(), None
  print(plain(data_rows(measured)))
  if args.save:
    path = os.path.join(args.save, 'data_splits.json')
    atomic_io.write_json(path, measured)
  if args.readme and path:
    source = os.path.relpath(path, here)
    write_blocks(args.readme, 'data-splits', markdown(data_rows(measured)),
                f'python -m attn_jax.report data {source}', [source])


COMMANDS.register(Command('training', 10, 'WORKDIR_OR_RESULTS_DIR ... [--save results]',
                          "test metrics beside J&W's", _training, after_run=True))
COMMANDS.register(Command('data', 20, '[SAVED.json] [--save results]',
                          "split sizes and vocabularies beside J&W's", _data))
COMMANDS.register(Command('analyses', 30, 'WORKDIR_OR_RESULTS_DIR ... [--save results] [--block NAME]',
                          'every stage\'s numbers beside the published ones (J&W, S&S; known evidence; ERASER)',
                          _analyses, papers=('jw', 'ss', 'evidence', 'faithfulness')))


# -------------------------------------------- the reproduction report's part

def _metric_of(labels: np.ndarray, probs: np.ndarray, metric: str):
  """The metric of the documents at the given indices: the bootstrap resamples
  indices, as a metric needs labels and probabilities together."""
  return lambda index: classification_metrics(labels[index.astype(int)], probs[index.astype(int)])[metric]


def _metric_rows(runs: list[RunFolder]) -> list[list[str]]:
  """J&W's test metrics with a 95 % percentile bootstrap interval over the
  run's test predictions (predictions_test.npz), verdict as for the analyses."""
  rows = [HEADER]
  for r in runs:
    # J&W's numbers are for their BiLSTM + tanh + softmax model only (as `training_rows`).
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
                   verdict({'bootstrap_ci95': [ci['low'], ci['high']]}, measured, value, 0.0),
                   f'{len(labels)} test docs, {PREDICTIONS}'])
  return rows


def _sections(runs: list[RunFolder]) -> list[render.Section]:
  blocks = [render.Text('Test metrics of the selected model beside J&W\'s published numbers (BiLSTM + tanh + '
                        'softmax only).'), render.Table(training_rows([r.info for r in runs]))]
  metric_rows = _metric_rows(runs)
  if len(metric_rows) > 1:
    blocks += [render.Text('With a verdict: "within" when J&W\'s number lies in the 95 % percentile bootstrap '
                           'interval over the test documents of the run\'s own predictions.'),
               render.Table(metric_rows)]
  sections = [render.Section('Jain & Wallace: test metrics of each model', blocks)]
  analysed = [r for r in runs if r.of_paper('jw')[0]]
  if analysed:
    rows, notes = [HEADER], []
    for r in analysed:
      rows += analysis_rows(r.name, r.info['dataset'], {s: f.summary for s, f in r.stages.items()}, ('jw',),
                            model=r.info['model'])
      notes += alternatives(r.path, {s: f for s, f in r.stages.items() if s in r.of_paper('jw')[0]})
    sections.append(render.Section('Jain & Wallace: analyses', [
        render.Text('"within": J&W\'s number lies in the 95 % bootstrap interval over test documents that the '
                    'summary records (older summaries: within J&W\'s own run-to-run spread).'),
        render.Table(rows, tuple(notes))]))
  return sections


SECTIONS.register(PaperSections(
    'jw', 'jw', 10, _sections,
    missing=lambda runs: None if any(r.of_paper('jw')[0] for r in runs) else (
        'J&W\'s analyses: no run holds them (run.py runs them by default; `--config.analyses=` turns them off)'),
    ran=lambda r: ', '.join(r.of_paper('jw')[0]) or 'not run'))
