"""Measured vs published numbers, and the README tables made from them.

    python -m attn_jax.report training WORKDIR_OR_RESULTS_DIR ... [--save results] [--readme README.md]
    python -m attn_jax.report data [--save results] [--readme README.md]
    python -m attn_jax.report analyses WORKDIR_OR_RESULTS_DIR ... [--save results] [--readme README.md]
    python -m attn_jax.report benchmarks BENCHMARK.json ... [--readme README.md]
    python -m attn_jax.report model-axis MODEL_AXIS.json ... [--readme README.md]
    python -m attn_jax.report vectors VECTORS.json ... [--save results/vectors] [--readme README.md]
    python -m attn_jax.report wp RUN ... [--save results/wp] [--readme README.md]
    python -m attn_jax.report state-importance STATE_IMPORTANCE.json ... [--readme README.md]
    python -m attn_jax.report meister RUN ... [--save results/meister] [--readme README.md]
    python -m attn_jax.report reproduce RUN ... [--out report] [--text "..." ...]

`training` reads `eval.json` and `config.json` of each run and prints
measured test metrics beside Jain & Wallace's; `--save` copies each run's
small result files (eval.json, metrics.jsonl, config.json, data.json) to
`results/<run>/`, which is committed. `data` prepares every dataset
(ATTN_JAX_DATA) and prints split sizes and vocabularies beside J&W's;
`--save` writes them to `results/data_splits.json`. `analyses` prints each
run's analysis summaries beside J&W's published numbers (attn_jax.reproduction);
`--save` copies the summaries to `results/<run>/analyses/<stage>/`; it also
writes each stage's time (`analysis-timings`). `benchmarks` tabulates the
JSON files written by `benchmarks/analysis_throughput.py --out`, `model-axis`
those of `benchmarks/model_axis_throughput.py --out`, `state-importance`
those of `benchmarks/state_importance_throughput.py --out`; `vectors` the records
`attn_jax.vectors` writes beside each vectors file (`--save` copies them).
`wp` prints the W&P experiments' tables beside Wiegreffe & Pinter's numbers
(attn_jax.wp_report); `--save` copies each run's experiment summaries and
figures to `results/wp/<run>/experiments/<name>/`. `meister` prints Meister et
al.'s Tables 1, 2, 3, 5 and 6 beside theirs (attn_jax.meister_report).
`reproduce` writes one report of all of it for the runs given, to read
rather than to paste: `<out>/index.html` (self-contained, figures embedded)
and `<out>/REPORT.md`, with figures, heatmaps of chosen test documents (and
of each `--text`), and the command that reproduces each run
(attn_jax.reproduce_report).
`--readme` rewrites the README block between that table's markers from the
saved files.
"""

import argparse
import json
import os
import re
import shlex
import sys

from attn_jax import atomic_io, config as config_lib, published, reproduction
from attn_jax.stages import store

RESULT_FILES = ('eval.json', 'metrics.jsonl', 'config.json', 'data.json')
METRICS = ('accuracy', 'f1_pos', 'roc_auc')
DATASETS = ('sst', 'imdb', '20news', 'agnews')


def load_run(path: str) -> dict:
  with open(os.path.join(path, 'eval.json')) as f:
    results = json.load(f)
  with open(os.path.join(path, 'config.json')) as f:
    config = json.load(f)
  model = config['model']
  # A model of a program is named by its folder (seed3), which says little on
  # its own: its program's folder goes in front.
  parent, name = os.path.split(os.path.normpath(path))
  if os.path.exists(os.path.join(parent, 'checkpoints')) or re.fullmatch(r'seed\d+', name):
    name = f'{os.path.basename(parent)}/{name}'
  return {'name': name, 'path': path,
          'dataset': config['data']['dataset'], 'seed': config['seed'],
          'model': f'{model["encoder"]} + {model["attention"]} / {model["projection"]}',
          'embed_init': (f'vectors: {os.path.basename(model["embeddings_file"])}'
                         if model.get('embeddings_file') else f'N(0, {model.get("embed_init_std", 1.0):g}²)'),
          'results': results}


def training_rows(runs: list[dict]) -> list[list[str]]:
  rows = [['run', 'model', 'embeddings', 'seed', 'test n', *[f'{m} (J&W)' for m in METRICS],
           'selected epoch (1 = first)', 'its dev roc_auc', 'train time', 'data source']]
  for run in runs:
    r = run['results']
    # J&W's numbers are for their BiLSTM + tanh + softmax model only.
    paper = (published.JAIN_WALLACE_TEST.get(run['dataset'], {})
             if run['model'] == 'bilstm + tanh / softmax' else {})
    cells = [f'{r[m]:.3f} ({paper[m]:.3f})' if m in paper else f'{r[m]:.3f} (–)' for m in METRICS]
    selection = next((v for k, v in r.items() if k.startswith('selection_')), float('nan'))
    minutes = r.get('training_seconds', float('nan')) / 60
    rows.append([run['name'], run['model'], run['embed_init'], str(run['seed']), str(r['n']), *cells,
                 str(r['selected_epoch'] + 1), f'{selection:.3f}', f'{minutes:.1f} min',
                 data_source_cell(r.get('data_source'))])
  return rows


def data_source_cell(source) -> str:
  """'reference copy', or what is unusual about the data a run was trained on
  (`Dataset.source`); runs of attn-jax <= 0.2 recorded nothing."""
  if not source:
    return 'not recorded'
  if source.get('standard'):
    return 'reference copy'
  return 'NON-STANDARD: ' + '; '.join(source.get('notes', [])) if source.get('notes') else 'NON-STANDARD'


def markdown(rows: list[list[str]]) -> str:
  lines = ['| ' + ' | '.join(rows[0]) + ' |', '|' + '---|' * len(rows[0])]
  lines += ['| ' + ' | '.join(row) + ' |' for row in rows[1:]]
  return '\n'.join(lines)


def plain(rows: list[list[str]]) -> str:
  widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
  return '\n'.join('  '.join(c.ljust(w) for c, w in zip(row, widths)) for row in rows)


def save(run: dict, directory: str) -> str:
  target = os.path.join(directory, run['name'])
  os.makedirs(target, exist_ok=True)
  for name in RESULT_FILES:
    source = os.path.join(run['path'], name)
    if os.path.exists(source) and os.path.abspath(source) != os.path.abspath(os.path.join(target, name)):
      atomic_io.copy_file(source, os.path.join(target, name))
  return target


def measure_splits() -> dict:
  """dataset -> split -> [n, negatives, positives], plus the vocabulary size."""
  from attn_jax.data import builders, jain_wallace  # pylint: disable=g-import-not-at-top
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
  for dataset, m in measured.items():
    paper = published.JAIN_WALLACE_SPLITS.get(dataset, {})
    rows.append([dataset, cell(m.get('train')), cell(m.get('dev')), cell(m.get('test')),
                 cell(paper.get('test')), cell(m.get('vocab')), cell(paper.get('vocab'))])
  return rows


def write_readme(readme: str, table_name: str, table: str, command: str, files: list[str]) -> None:
  markers = (f'<!-- {table_name}:start -->', f'<!-- {table_name}:end -->')
  with open(readme) as f:
    text = f.read()
  start, end = (text.index(m) for m in markers)
  block = (f'{markers[0]}\n<!-- generated by `{command} --readme README.md`; do not edit -->\n\n'
           f'{table}\n\nFrom ' + ', '.join(f'`{f}`' for f in files) + '.\n')
  atomic_io.atomic_write(readme, lambda f: f.write(text[:start] + block + text[end:]))


def _analyses(args, here) -> None:
  runs = [load_run(p) for p in args.runs]
  if args.save:
    for run in runs:
      save(run, args.save)
      for found in reproduction.load_found(run['path']).values():
        # The shown results keep their key-named folder, so the saved copy
        # says which settings and document count it is.
        relative = os.path.relpath(found.directory, run['path'])
        atomic_io.write_json(os.path.join(args.save, run['name'], relative, 'summary.json'), store.summary_copy(found))
    runs = [load_run(os.path.join(args.save, run['name'])) for run in runs]
  rows = [reproduction.HEADER]
  notes = []
  for run in runs:
    found = reproduction.load_found(run['path'])
    rows += reproduction.analysis_rows(run['name'], run['dataset'],
                                       {stage: f.summary for stage, f in found.items()})
    notes += reproduction.alternatives(run['path'], found)
  print(plain(rows))
  if notes:
    print('Each stage shows its most complete results; the runs also hold:\n' + '\n'.join(notes))
  if args.readme:
    sources = [os.path.relpath(run['path'], here) for run in runs]
    command = 'python -m attn_jax.report analyses ' + ' '.join(sources) + (
        f' --block {args.block}' if args.block else '')
    files = [f'{s}/analyses/*/summary.json' for s in sources]
    block = args.block or 'analysis'
    write_readme(args.readme, f'{block}-results', markdown(rows), command, files)
    write_readme(args.readme, f'{block}-timings', markdown(timing_rows(runs)), command, files)


def timing_rows(runs: list[dict]) -> list[list[str]]:
  """Each stage's recorded time on each run (summary.json `seconds`)."""
  rows = [['run', 'stage', 'documents', 'seconds', 'documents/s', 'key']]
  for run in runs:
    for stage, summary in reproduction.load_summaries(run['path']).items():
      rows.append([run['name'], stage, str(summary['documents']), f'{summary["seconds"]:.1f}',
                   f'{summary["documents_per_second"]:.1f}', summary.get('key', {}).get('hash', '?')[:8]])
  return rows


def benchmark_rows(reports: list[dict]) -> list[list[str]]:
  rows = [['dataset', 'analysis', 'docs', 'seconds (compile)', 'docs/s', 'peak RSS MB',
           'loop docs/s', 'speed-up over the loop', 'max abs difference']]
  for bench in reports:
    for r in bench['rows']:
      extra = ''
      if 'reencode_docs_per_second' in r:  # the BiLSTM deletion path vs re-encoding the rows
        gain = r['vectorised_docs_per_second_on_baseline_docs'] / r['reencode_docs_per_second']
        extra = f' ({gain:.1f}x over re-encoding the rows)'
      rows.append([bench.get('dataset', os.path.basename(bench['workdir'])), r['analysis'],
                   str(r['docs']), f'{r["seconds"]:.1f} ({r["compile_seconds"]:.1f})',
                   f'{r["docs_per_second"]:.1f}', f'{r["peak_rss_mb"]:.0f}',
                   f'{r["baseline_docs_per_second"]:.2f} on {r["baseline_docs"]}',
                   f'{r["speedup"]:.1f}x{extra}', f'{r["max_abs_difference"]:.1e}'])
  return rows


def _tabulate(args, here, rows_of, block: str) -> None:
  """Prints the table `rows_of` makes from the JSON files `args.runs`, and
  rewrites the README's `block` with it."""
  rows = rows_of([atomic_io.read_json(p) for p in args.runs])
  print(plain(rows))
  if args.readme:
    sources = [os.path.relpath(p, here) for p in args.runs]
    write_readme(args.readme, block, markdown(rows),
                 f'python -m attn_jax.report {args.table} ' + ' '.join(sources), sources)


def model_axis_rows(reports: list[dict]) -> list[list[str]]:
  rows = [['dataset', 'encoder', 'models', 'one program, vmapped: tokens/s', 'one program, looped: tokens/s',
           'separate runs: tokens/s', 'vmapped / separate', 'looped / separate',
           'compile s (vmap / loop / separate)', 'peak RSS MB (vmap / loop / separate)']]
  for bench in reports:
    for r in bench['rows']:
      arms = ('vmap', 'loop', 'sequential')
      rows.append([bench['dataset'], r['encoder'], str(r['models']),
                   *[f'{r[a]["tokens_per_second"]:.0f}' for a in arms],
                   f'{r["speedup"]["vmap"]:.2f}x', f'{r["speedup"]["loop"]:.2f}x',
                   ' / '.join(f'{r[a]["compile_seconds"]:.0f}' for a in arms),
                   ' / '.join(f'+{r[a]["peak_rss_mb"] - r[a]["rss_before_mb"]:.0f}' for a in arms)])
  return rows


def state_importance_rows(reports: list[dict]) -> list[list[str]]:
  """`benchmarks/state_importance_throughput.py` records: g_{h_p}(x) docs/s,
  FLOPs per document and the fraction of the matmul rate measured in the same run."""
  rows = [['dataset', 'encoder', 'docs', 'mean words (max length)', 'seconds (+ compile)', 'docs/s',
           'GFLOP per doc', 'achieved GFLOP/s', 'matmul GFLOP/s (same run)', 'fraction of matmul rate',
           'peak RSS MB', 'peak temp buffer MB']]
  for r in reports:
    rows.append([r['dataset'], r['encoder'], str(r['documents']),
                 f'{r["mean_words"]:.1f} ({r["max_length"]})', f'{r["seconds"]:.1f} (+{r["compile_seconds"]:.1f})',
                 f'{r["docs_per_second"]:.2f}', f'{r["flops_per_document"] / 1e9:.2f}',
                 f'{r["achieved_gflops"]:.0f}', f'{r["matmul_peak_gflops"]:.0f}',
                 f'{r["fraction_of_peak"]:.0%}', f'{r["peak_rss_mb"]:.0f}', f'{r["peak_temp_buffer_mb"]:.0f}'])
  return rows


def vector_rows(records: list[dict]) -> list[list[str]]:
  rows = [['target', 'corpus documents by source (held out)', 'corpus tokens',
           'vocabulary words with a vector', 'epochs', 'build seconds']]
  for r in records:
    sources = ', '.join(f'{k} {v["documents"]} ({v["held_out"]})' for k, v in r['corpus'].items())
    rows.append([r['recipe']['target'], sources, str(r['corpus_tokens']),
                 f'{r["words_with_vectors"]} of {r["vocabulary_words"]} ({r["coverage"]:.1%})',
                 str(r['recipe']['epochs']), f'{r["seconds"]:.0f}'])
  return rows


def _vectors(args, here) -> None:
  records = [atomic_io.read_json(p) for p in args.runs]
  paths = list(args.runs)
  if args.save:
    paths = [os.path.join(args.save, f'{r["recipe"]["target"]}.json') for r in records]
    for path, record in zip(paths, records):
      atomic_io.write_json(path, record)
  print(plain(vector_rows(records)))
  if args.readme:
    sources = [os.path.relpath(p, here) for p in paths]
    write_readme(args.readme, 'vector-coverage', markdown(vector_rows(records)),
                 'python -m attn_jax.report vectors ' + ' '.join(sources), sources)


def _reproduce(parser, args, argv) -> None:
  """Writes the reproduction report; a run folder it cannot read ends in one line (exit 1)."""
  from attn_jax import errors, reproduce_report  # pylint: disable=g-import-not-at-top  (it imports this module)
  command = 'python -m attn_jax.report ' + ' '.join(shlex.quote(a) for a in (argv or sys.argv[1:]))
  try:
    written = reproduce_report.write(args.runs, args.out, args.text, command)
  except errors.AttnJaxError as e:
    parser.exit(1, f'error: {e}\n')
  print(f'report: {written["html"]} (self-contained) and {written["markdown"]}')


def main(argv=None):
  parser = argparse.ArgumentParser(description='Measured vs published numbers.')
  parser.add_argument('table', choices=['training', 'data', 'analyses', 'benchmarks', 'model-axis',
                                        'vectors', 'wp', 'meister', 'state-importance', 'reproduce'])
  parser.add_argument('runs', nargs='*', help='training, reproduce: workdirs or results/<run> folders; '
                      'data: a saved data_splits.json to show instead of measuring')
  parser.add_argument('--save', help='folder to copy / write the result files into')
  parser.add_argument('--readme', help='rewrite this README\'s block for the table')
  parser.add_argument('--block', help='analyses: the README blocks\' name (default: analysis)')
  parser.add_argument('--out', default='report', help='reproduce: the folder for index.html and REPORT.md')
  parser.add_argument('--text', action='append', default=[],
                      help='reproduce: a text of your own to explain with each run (repeatable)')
  args = parser.parse_args(argv)
  here = os.path.dirname(os.path.abspath(args.readme)) if args.readme else os.getcwd()
  if args.table == 'training':
    runs = [load_run(p) for p in args.runs]
    print(plain(training_rows(runs)))
    if args.save:
      runs = [load_run(save(run, args.save)) for run in runs]
    if args.readme:
      sources = [os.path.relpath(run['path'], here) for run in runs]
      write_readme(args.readme, 'training-results', markdown(training_rows(runs)),
                   'python -m attn_jax.report training ' + ' '.join(sources),
                   [f'{s}/eval.json' for s in sources])
    return
  if args.table == 'analyses':
    _analyses(args, here)
    return
  if args.table == 'benchmarks':
    _tabulate(args, here, benchmark_rows, 'analysis-benchmarks')
    return
  if args.table == 'model-axis':
    _tabulate(args, here, model_axis_rows, 'model-axis-benchmarks')
    return
  if args.table == 'state-importance':
    _tabulate(args, here, state_importance_rows, 'state-importance-benchmarks')
    return
  if args.table == 'vectors':
    _vectors(args, here)
    return
  if args.table == 'reproduce':
    _reproduce(parser, args, argv)
    return
  if args.table in ('wp', 'meister'):
    # Imported here: both import this module.
    from attn_jax import errors, meister_report, wp_report  # pylint: disable=g-import-not-at-top
    try:
      (wp_report if args.table == 'wp' else meister_report).write(args.runs, args.save, args.readme)
    except errors.AttnJaxError as e:
      parser.exit(1, f'error: {e}\n')
    return
  if args.runs:
    measured, path = atomic_io.read_json(args.runs[0]), args.runs[0]
  else:
    measured, path = measure_splits(), None
  print(plain(data_rows(measured)))
  if args.save:
    path = os.path.join(args.save, 'data_splits.json')
    atomic_io.write_json(path, measured)
  if args.readme and path:
    source = os.path.relpath(path, here)
    write_readme(args.readme, 'data-splits', markdown(data_rows(measured)),
                 f'python -m attn_jax.report data {source}', [source])


if __name__ == '__main__':
  main()
