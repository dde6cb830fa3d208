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


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--config', required=True)
  parser.add_argument('--workdir', required=True)
  parser.add_argument('--analyses', default=JW_SUITE)
  parser.add_argument('--out')
  args = parser.parse_args()
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
