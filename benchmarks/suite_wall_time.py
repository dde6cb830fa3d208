"""Wall time of an analysis suite on a trained run, compilation included: once
with an empty persistent compilation cache (cold), then again with the cache
that run filled (warm), each into a fresh results folder.

    python benchmarks/suite_wall_time.py --config=configs/sst_bilstm.py --workdir=runs/sst_bilstm \\
        --out=results/benchmarks/suite_sst.json
    python benchmarks/suite_wall_time.py --config=configs/imdb_bilstm.py --workdir=runs/imdb_bilstm \\
        --passes=warm --analyses=gradient,loo,kendall,attention,permutation,adversarial,erasure \\
        --out=results/benchmarks/suite_imdb.json --config.train.epochs=2

Each pass is `run.py` end to end in a child process (interpreter start,
data, evaluation, every stage of --analyses), timed from outside, with the
child's peak RSS; the stage summaries give each stage's seconds and compile
seconds. --passes=warm alone runs once with attn-jax's own persistent cache
(as filled by earlier runs). Other `--config.*` flags go to run.py.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
JW_SUITE = 'gradient,loo,kendall,attention,permutation,adversarial'


def one_pass(args, cache, out_dir: str, overrides) -> dict:
  env = dict(os.environ)
  if cache is not None:
    env['ATTN_JAX_COMPILATION_CACHE'] = cache
  started = time.perf_counter()
  child = subprocess.Popen([sys.executable, 'run.py', f'--config={args.config}',
                            f'--workdir={args.workdir}', f'--output_dir={out_dir}',
                            f'--config.analyses={args.analyses}', '--config.experiments=',
                            '--config.train.progress=False', *overrides],
                           cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
  _, status, usage = os.wait4(child.pid, 0)
  wall = time.perf_counter() - started
  child.returncode = os.waitstatus_to_exitcode(status)
  if child.returncode:
    raise SystemExit(f'run.py exited with {child.returncode}')
  stages = {}
  for path in glob.glob(os.path.join(out_dir, 'analyses', '*', '*', 'summary.json')):
    with open(path) as f:
      summary = json.load(f)
    stages[summary['key']['stage']] = {'seconds': summary['seconds'],
                                       'compile_seconds': summary.get('compile_seconds')}
  return {'wall_seconds': round(wall, 1), 'stages': stages,
          'peak_rss_mb': round(usage.ru_maxrss / 1024)}  # KiB on Linux


def table(result: dict) -> str:
  """The README table: wall time and per-stage seconds, cold and warm."""
  passes = [name for name in ('cold', 'warm') if name in result]
  stages = sorted(result[passes[0]]['stages'])
  rows = ['| cache | wall s (run.py end to end) | peak RSS MB | stages s (compiling s) | ' +
          ' | '.join(stages) + ' |', '|---' * (4 + len(stages)) + '|']
  for name in passes:
    p = result[name]
    total = sum(s['seconds'] for s in p['stages'].values())
    compiling = sum(s['compile_seconds'] or 0 for s in p['stages'].values())
    cells = [f'{p["stages"][s]["seconds"]:.1f} ({p["stages"][s]["compile_seconds"]:.1f})' for s in stages]
    peak = f'{p["peak_rss_mb"]:,}' if 'peak_rss_mb' in p else 'not measured'
    rows.append(f'| {name} | {p["wall_seconds"]:.1f} | {peak} | {total:.1f} ({compiling:.1f}) | '
                + ' | '.join(cells) + ' |')
  return '\n'.join(rows)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--config')
  parser.add_argument('--workdir')
  parser.add_argument('--analyses', default=JW_SUITE)
  parser.add_argument('--out')
  parser.add_argument('--table', nargs='*', help='result files: print (and --readme) their tables')
  parser.add_argument('--readme')
  parser.add_argument('--passes', default='cold,warm')
  args, overrides = parser.parse_known_args()
  unknown = [o for o in overrides if not o.startswith('--config.')]
  if unknown:
    parser.error(f'unrecognized arguments: {" ".join(unknown)}')
  if args.table:
    from attn_jax.core import atomic_io
    from attn_jax.tables import common as report  # pylint: disable=g-import-not-at-top
    results = [atomic_io.read_json(path) for path in args.table]
    text = '\n\n'.join(f'`{r["config"]}`, analyses {r["analyses"]}:\n\n{table(r)}' for r in results)
    print(text)
    if args.readme:
      report.write_block(args.readme, 'suite-wall-time', text,
                          'python benchmarks/suite_wall_time.py --table ' + ' '.join(args.table),
                          args.table)
    return
  if not (args.config and args.workdir):
    parser.error('--config and --workdir (a trained run), or --table FILE')
  passes = args.passes.split(',')
  result = {'config': args.config, 'workdir': os.path.abspath(args.workdir),
            'analyses': args.analyses}
  with tempfile.TemporaryDirectory() as tmp:
    cache = None if passes == ['warm'] else os.path.join(tmp, 'cache')  # None: attn-jax's own
    for name in passes:
      result[name] = one_pass(args, cache, os.path.join(tmp, name), overrides)
  result['command'] = ' '.join(['python', 'benchmarks/suite_wall_time.py'] + sys.argv[1:])
  print(json.dumps(result, indent=1))
  if args.out:
    from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
    atomic_io.write_json(args.out, result)


if __name__ == '__main__':
  main()
