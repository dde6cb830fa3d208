"""Wall time of an analysis suite on a trained run, compilation included: once
with an empty persistent compilation cache (cold), then again with the cache
that run filled (warm), each into a fresh results folder.

    python benchmarks/suite_wall_time.py --config=configs/sst_bilstm.py --workdir=runs/sst_bilstm \\
        --out=results/benchmarks/suite_sst.json

Each pass is `run.py` end to end in a child process (interpreter start,
data, evaluation, every stage of --analyses), timed from outside; the stage
summaries give each stage's seconds and compile seconds.
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


def one_pass(args, cache: str, out_dir: str) -> dict:
  env = {**os.environ, 'ATTN_JAX_COMPILATION_CACHE': cache}
  started = time.perf_counter()
  subprocess.run([sys.executable, 'run.py', f'--config={args.config}', f'--workdir={args.workdir}',
                  f'--output_dir={out_dir}', f'--config.analyses={args.analyses}',
                  '--config.experiments=', '--config.train.progress=False'],
                 cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
  wall = time.perf_counter() - started
  stages = {}
  for path in glob.glob(os.path.join(out_dir, 'analyses', '*', '*', 'summary.json')):
    with open(path) as f:
      summary = json.load(f)
    stages[summary['key']['stage']] = {'seconds': summary['seconds'],
                                       'compile_seconds': summary.get('compile_seconds')}
  return {'wall_seconds': round(wall, 1), 'stages': stages}


def table(result: dict) -> str:
  """The README table: wall time and per-stage seconds, cold and warm."""
  stages = sorted(result['cold']['stages'])
  rows = ['| cache | wall s (run.py end to end) | stages s (compiling s) | ' +
          ' | '.join(stages) + ' |', '|---' * (3 + len(stages)) + '|']
  for name in ('cold', 'warm'):
    p = result[name]
    total = sum(s['seconds'] for s in p['stages'].values())
    compiling = sum(s['compile_seconds'] or 0 for s in p['stages'].values())
    cells = [f'{p["stages"][s]["seconds"]:.1f} ({p["stages"][s]["compile_seconds"]:.1f})' for s in stages]
    rows.append(f'| {name} | {p["wall_seconds"]:.1f} | {total:.1f} ({compiling:.1f}) | ' + ' | '.join(cells) + ' |')
  return '\n'.join(rows)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--config')
  parser.add_argument('--workdir')
  parser.add_argument('--analyses', default=JW_SUITE)
  parser.add_argument('--out')
  parser.add_argument('--table', help='a result file: print (and --readme) its table')
  parser.add_argument('--readme')
  args = parser.parse_args()
  if args.table:
    from attn_jax import atomic_io, report  # pylint: disable=g-import-not-at-top
    text = table(atomic_io.read_json(args.table))
    print(text)
    if args.readme:
      report.write_readme(args.readme, 'suite-wall-time', text,
                          f'python benchmarks/suite_wall_time.py --table {args.table}', [args.table])
    return
  if not (args.config and args.workdir):
    parser.error('--config and --workdir (a trained run), or --table FILE')
  with tempfile.TemporaryDirectory() as tmp:
    cache = os.path.join(tmp, 'cache')
    cold = one_pass(args, cache, os.path.join(tmp, 'cold'))
    warm = one_pass(args, cache, os.path.join(tmp, 'warm'))
  result = {'config': args.config, 'workdir': os.path.abspath(args.workdir),
            'analyses': args.analyses, 'cold': cold, 'warm': warm,
            'command': ' '.join(['python', 'benchmarks/suite_wall_time.py'] + sys.argv[1:])}
  print(json.dumps(result, indent=1))
  if args.out:
    from attn_jax import atomic_io  # pylint: disable=g-import-not-at-top
    atomic_io.write_json(args.out, result)


if __name__ == '__main__':
  main()
