"""Tables of the benchmark and vector records: analysis throughput, the model
axis, Meister's g_{h_p}(x), and the in-domain word vectors.

    python -m attn_jax.report benchmarks BENCHMARK.json ... [--readme FILE]
    python -m attn_jax.report model-axis MODEL_AXIS.json ... [--readme FILE]
    python -m attn_jax.report state-importance STATE_IMPORTANCE.json ... [--readme FILE]
    python -m attn_jax.report train-throughput TRAIN_THROUGHPUT.json ... [--readme FILE]
    python -m attn_jax.report vectors VECTORS.json ... [--save results/vectors] [--readme FILE]
    python -m attn_jax.report vector-build VECTOR_BUILD.json ... [--readme FILE]
    python -m attn_jax.report first-run FIRST_RUN.json ... [--readme FILE]

`benchmarks` tabulates the JSON files written by
`benchmarks/analysis_throughput.py --out`, `model-axis` those of
`benchmarks/model_axis_throughput.py --out`, `state-importance` those of
`benchmarks/state_importance_throughput.py --out`, `train-throughput` those of
`benchmarks/train_throughput.py --out`; `vectors` the records
`attn_jax.vectors` writes beside each vectors file (`--save` copies them);
`vector-build` those of `benchmarks/vector_build.py --out`, `first-run` those
of `benchmarks/first_run.py --out`.
"""

import os
import re

import numpy as np

from attn_jax.core import atomic_io, errors
from attn_jax.tables.common import markdown, plain, read_record, root_of, write_blocks
from attn_jax.tables.report_registry import COMMANDS, TABLES, Command, Table


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


def record_rows(records: list[dict]) -> list[list[str]]:
  """The table a benchmark of its own carries in its record, as the
  `benchmark` command prints it: the first record's header, every record's rows.

  Args:
    records: benchmark records, each with `table`: {'block': README block,
      'header': [column names], 'rows': [[cell, ...], ...]}.

  Returns:
    The header, then the rows (cells as text).

  Raises:
    AttnJaxError: a record without such a table, or records of different headers or blocks.
  """
  tables = [r.get('table') for r in records]
  if not all(isinstance(t, dict) and {'block', 'header', 'rows'} <= set(t) for t in tables):
    raise errors.AttnJaxError("a record carries no table ({'table': {'block', 'header', 'rows'}}); give the "
                              'records a benchmark of its own writes, or the command of its kind (--help)')
  if len({(t['block'], tuple(t['header'])) for t in tables}) > 1:
    raise errors.AttnJaxError('the records are of different tables (blocks or headers); report one kind at a time')
  return [list(map(str, tables[0]['header']))] + [[str(c) for c in row] for t in tables for row in t['rows']]


def _tabulate(args, rows_of, block) -> None:
  """Prints the table `rows_of` makes from the JSON files `args.runs`, and
  rewrites the `--readme` file's `block` (or `block(records)`) with it."""
  here = root_of(args.readme)
  records = [read_record(p, 'a benchmark\'s --out file (the .json the command in the report\'s help wrote)')
             for p in args.runs]
  rows = rows_of(records)
  block = block(records) if callable(block) else block
  print(plain(rows))
  if args.readme:
    sources = [os.path.relpath(p, here) for p in args.runs]
    write_blocks(args.readme, block, markdown(rows),
                 f'python -m attn_jax.report {args.table} ' + ' '.join(sources), sources)


def model_axis_rows(reports: list[dict]) -> list[list[str]]:
  rows = [['dataset', 'encoder', 'models', 'batch orders', 'one program, vmapped: tokens/s', 'one program, looped: tokens/s',
           'separate runs: tokens/s', 'vmapped / separate', 'looped / separate',
           'compile s (vmap / loop / separate)', 'peak RSS MB (vmap / loop / separate)']]
  for bench in reports:
    for r in bench['rows']:
      arms = ('vmap', 'loop', 'sequential')
      # Records before --orders trained every model on one order.
      rows.append([bench['dataset'], r['encoder'], str(r['models']), r.get('order', 'shared'),
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


def training_rows(reports: list[dict]) -> list[list[str]]:
  """`benchmarks/train_throughput.py` records: training tokens/s with glibc's
  malloc as it comes against attn-jax's host memory setting, the same run."""
  rows = [['device', 'dataset', 'encoder', 'batches (real / padded tokens)', 'rounds',
           'system malloc: tokens/s', 'kept memory: tokens/s', 'speed-up (median of rounds; range)',
           'page faults per step', 'peak RSS MB (system / kept)', 'max abs param difference',
           'matmul GFLOP a step', 'kept: GFLOP/s (its input GEMM alone; 2048² matmul)',
           'XLA:GPU deterministic ops']]
  for r in reports:
    rss = ' / '.join(f'{max(r["peak_rss_mb"][a]):.0f}' for a in ('system', 'kept'))
    for row in r['rows']:
      ratios = row['speedup_per_round']
      faults = ' → '.join(f'{sorted(row[a]["minor_faults_per_step"])[len(ratios) // 2]:.0f}'
                          for a in ('system', 'kept'))
      rows.append([_device(r), r['dataset'], row['encoder'],
                   f'{r["batches"]} ({r["tokens"]} / {r["padded_slots"]})', str(len(ratios)),
                   f'{row["system"]["median_tokens_per_second"]:.0f}',
                   f'{row["kept"]["median_tokens_per_second"]:.0f}',
                   f'{row["speedup_median"]:.2f}x ({min(ratios):.2f}–{max(ratios):.2f})', faults, rss,
                   f'{row["max_abs_param_difference"]:.1e}', *_roofline(row),
                   _gpu_determinism(r)])
  return rows


def _device(record: dict) -> str:
  """'cpu:0, 2 CPUs', 'cuda:0, 16 CPUs' ('–' for records without it)."""
  device = record.get('device', '–')
  return f'{device}, {record["cpus"]} CPUs' if 'cpus' in record else device


def _gpu_determinism(record: dict) -> str:
  """attn_jax.core.determinism's status in the run; '–' on a CPU, where it changes nothing."""
  if not str(record.get('device', '')).startswith(('cuda', 'gpu', 'rocm')):
    return '–'
  return record.get('gpu_determinism', 'not recorded')


def _roofline(row: dict) -> list[str]:
  """The kept arm's matmul rate against a GEMM's here (records since
  2026-11-25; '–' before, or for encoders without a FLOP count)."""
  kept = row['kept']
  if 'gflops' not in kept:
    return ['–', '–']
  median = lambda k: sorted(kept[k])[len(kept[k]) // 2]
  return [f'{row["matmul_gflop_per_step"]:.1f}',
          f'{median("gflops"):.0f} ({median("input_gemm_gflops"):.0f}; {median("matmul_2048_gflops"):.0f})']


def vector_rows(records: list[dict]) -> list[list[str]]:
  rows = [['target', 'recipe', 'corpus documents by source (held out)', 'corpus tokens',
           'vocabulary words with a vector', 'mean vector norm', 'epochs', 'build seconds']]
  for r in records:
    sources = ', '.join(f'{k} {v["documents"]} ({v["held_out"]})' for k, v in r['corpus'].items())
    norm = r.get('mean_norm')
    rows.append([r['recipe']['target'], recipe_name(r['recipe']), sources, str(r['corpus_tokens']),
                 f'{r["words_with_vectors"]} of {r["vocabulary_words"]} ({r["coverage"]:.1%})',
                 '–' if norm is None else f'{norm:.2f}', str(r['recipe']['epochs']), f'{r["seconds"]:.0f}'])
  return rows


def recipe_name(recipe: dict) -> str:
  """'fastText skip-gram', 'fastText CBOW', 'word2vec CBOW', ..."""
  method = 'word2vec' if recipe.get('method') == 'word2vec' else 'fastText'
  return f'{method} {"skip-gram" if recipe.get("sg") else "CBOW"}'


def mean_norm(vec_path: str) -> float | None:
  """The mean L2 norm of the rows of a word2vec text file (None if it is not there)."""
  if not os.path.exists(vec_path):
    return None
  with open(vec_path) as f:
    next(f)  # the header: count, dimension
    norms = [float(np.linalg.norm(np.asarray(line.rstrip().split(' ')[1:], np.float64))) for line in f]
  return float(np.mean(norms)) if norms else None


def _vectors(parser, args, argv) -> None:
  del parser, argv
  here = root_of(args.readme)
  records = [read_record(p, 'a vectors record (<cache>/<name>.json)') for p in args.runs]
  for path, record in zip(args.runs, records):
    if 'mean_norm' not in record:  # the vectors file beside its record (the cache), if there
      record['mean_norm'] = mean_norm(path[:-len('.json')] + '.vec')
  paths = list(args.runs)
  if args.save:
    # CBOW records keep their first names (<target>.json); other recipes say theirs.
    paths = [os.path.join(args.save, r['recipe']['target']
                          + ('' if recipe_name(r['recipe']) == 'fastText CBOW' else
                             '_' + recipe_name(r['recipe']).split()[-1].replace('-', '')) + '.json')
             for r in records]
    for path, record in zip(paths, records):
      atomic_io.write_json(path, record)
  print(plain(vector_rows(records)))
  if args.readme:
    sources = [os.path.relpath(p, here) for p in paths]
    write_blocks(args.readme, 'vector-coverage', markdown(vector_rows(records)),
                 'python -m attn_jax.report vectors ' + ' '.join(sources), sources)


def vector_build_rows(reports: list[dict]) -> list[list[str]]:
  """Per host and gensim thread count: an epoch's seconds, tokens/s, and the
  speed-up over the host's first row (its fewest threads)."""
  rows = [['host', 'corpus tokens', 'threads', 'seconds per epoch', 'corpus tokens/s',
           'speed-up over 1 thread', 'besides training (s)', 'default 5 epochs (min)']]
  for bench in reports:
    host = f'{bench["cpus"]} CPUs' + (' (device host)' if 'device host' in bench.get('host', '') else '')
    one = next((r for r in bench['rows'] if r['workers'] == 1), None)
    for r in sorted(bench['rows'], key=lambda r: r['workers']):
      epoch = np.mean(r['epoch_seconds'])
      rows.append([host, f'{bench["corpus_tokens"]:,}', str(r['workers']), f'{epoch:.1f}',
                   f'{r["tokens_per_second"]:,}',
                   f'{r["tokens_per_second"] / one["tokens_per_second"]:.2f}x' if one else '–',
                   f'{r["other_seconds"]:.1f}', f'{(5 * epoch + r["other_seconds"]) / 60:.1f}'])
  return rows


# Where a first run's phases end: (pattern of the log line that ends one, its name).
FIRST_RUN_MILESTONES = (
    (r'^(\w+): train \d+, dev \d+', 'data: {0} (tfds preparation, tokens, vocabulary)'),
    (r'^vectors: ', "vectors' corpus (the other datasets' tfds preparation, tokens)"),
    (r'^vectors for \d+ of', 'vectors: training'),
    (r'^pretrained vectors: ', 'vectors: loading'),
    (r': test \(\d+\): accuracy', 'training (compiling, every epoch, selection) and test evaluation'),
    (r'^(\w+): \d+ documents in', 'stage {0}'),
    (r'^done in ', 'closing line'))


def first_run_phases(log: list) -> list[dict]:
  """[{phase, ends_at, seconds}] from a first run's log ([[seconds, line], ...]):
  each phase from the previous milestone's line to its own."""
  phases, last = [], 0.0
  for seconds, line in log:
    for pattern, name in FIRST_RUN_MILESTONES:
      match = re.search(pattern, line)
      if match:
        phases.append({'phase': name.format(*match.groups()), 'ends_at': seconds,
                       'seconds': round(seconds - last, 1)})
        last = seconds
        break
  return phases


def first_run_rows(reports: list[dict]) -> list[list[str]]:
  """Per cold run: each phase's seconds, and the time to the closing line."""
  rows = [['run', 'cores', 'phase', 'ends at (s)', 'seconds']]
  for bench in reports:
    config = re.search(r'--config=(?:configs/)?([\w:]+)', bench['run_command'])
    workers = re.search(r'vectors\.workers=(\w+)', bench['run_command'])
    run = (config.group(1) if config else bench['run_command']) + (f', workers={workers.group(1)}' if workers else '')
    for phase in first_run_phases(bench['log']):
      rows.append([run, str(bench['cores']), phase['phase'], f'{phase["ends_at"]:.0f}', f'{phase["seconds"]:.0f}'])
    total = bench['seconds_to_closing_line']
    rows.append([run, str(bench['cores']), '**to the closing line**', '',
                 f'**{total:.0f} ({total / 60:.1f} min)**' if total else 'not reached'])
  return rows


def register_benchmark(table: Table, block=None) -> Table:
  """Registers a benchmark's table and the report command that prints it.

  Args:
    table: a `Table` of kind 'benchmark': its `rows` take the benchmark's
      records (the JSON files its `--out` wrote), its name is its README block.
    block: records -> the README block, where the records name it (default:
      the table's name).

  Returns:
    `table`, registered in `TABLES`, with `python -m attn_jax.report <command>` in `COMMANDS`.
  """
  TABLES.register(table)
  COMMANDS.register(Command(table.command, table.order, table.usage, table.title,
                            lambda parser, args, argv: _tabulate(args, table.rows, block or table.name)))
  return table


# The benchmark tables; each makes its report command (`command`, `usage`, and `title` as its help line).
BENCHMARK_TABLES = (
    Table('analysis-benchmarks', 'benchmark', 60, benchmark_rows, command='benchmarks',
          usage='BENCHMARK.json ...', title='analysis throughput against the loops'),
    Table('model-axis-benchmarks', 'benchmark', 70, model_axis_rows, command='model-axis',
          usage='MODEL_AXIS.json ...', title='one program against separate runs'),
    Table('state-importance-benchmarks', 'benchmark', 80, state_importance_rows, command='state-importance',
          usage='STATE_IMPORTANCE.json ...', title="Meister's g_{h_p}(x): documents/s and FLOPs"),
    Table('training-benchmarks', 'benchmark', 85, training_rows, command='train-throughput',
          usage='TRAIN_THROUGHPUT.json ...', title='training tokens/s: host memory kept against system malloc'),
    Table('vector-build-benchmarks', 'benchmark', 95, vector_build_rows, command='vector-build',
          usage='VECTOR_BUILD.json ...', title='building the vectors: seconds per epoch by gensim threads'),
    Table('first-run-benchmarks', 'benchmark', 96, first_run_rows, command='first-run',
          usage='FIRST_RUN.json ...', title='a README command from cold caches, by phase'))
for _table in BENCHMARK_TABLES:
  register_benchmark(_table)

# A benchmark of its own: its record carries its table (`record_rows`), so a
# new benchmark is its script and its test, and this command prints it.
register_benchmark(
    Table('benchmark-record', 'benchmark', 97, record_rows, command='benchmark', usage='RECORD.json ...',
          title="a benchmark's own table, carried in its record ({'table': {'block', 'header', 'rows'}})"),
    block=lambda records: records[0]['table']['block'])
COMMANDS.register(Command('vectors', 90, 'VECTORS.json ... [--save results/vectors]',
                          'the in-domain vectors: corpus and coverage', _vectors))
