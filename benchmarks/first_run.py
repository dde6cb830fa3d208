"""A first run from cold caches: how long a README command takes when nothing
is cached yet, and what its log says before training.

    python benchmarks/first_run.py [--config=configs/sst_bilstm.py] [--workers=auto]
        [--out=results/benchmarks/first_run_sst.json] [--keep=DIR]

Runs `python run.py --config=CONFIG --config.vectors.workers=WORKERS` (progress
bars off, so the log is lines) in a child whose tfds data dir, word-vector
cache, compiled-program cache and measured rates (TFDS_DATA_DIR,
ATTN_JAX_VECTORS, ATTN_JAX_COMPILATION_CACHE, ATTN_JAX_RATES) are empty
folders, with the data read from $ATTN_JAX_DATA as a user's first run reads
them. Records the wall time to the closing line (`done in ...`), each log
line with its time since the start, the time each phase took (tfds
preparations, the vectors, training, each analysis stage: from one phase's
first line to the next's), the estimates said before training, and any of
tfds's own lines that reached the log (there should be none).
"""

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from attn_jax.core import atomic_io, estimates  # pylint: disable=wrong-import-position

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tfds's lines that say nothing to a user of local files (issue 38).
TFDS_NOISE = ('Variant folder', 'dataset_info.json', 'Downloading and preparing', 'Generating splits',
              'Shuffling', 'Subsequent calls will reuse')
# The first line of each phase of a run's log.
PHASES = ((r'^preparing (\S+) for tfds', 'prepare {0}'),
          (r'^building in-domain word vectors', 'vectors'),
          (r'^pretrained vectors: ', 'model set-up'),
          (r'^training: about', 'training (after its first steps)'),
          (r'^epoch 1 of', 'training (after epoch 1)'),
          (r'^test: ', 'evaluation'),
          (r'^(\w+): about .* more', 'stage {0}'),
          (r'^done in ', 'done'))


def phases(lines: list[tuple[float, str]]) -> list[dict]:
  """Where each phase starts, and how long until the next one starts."""
  starts = []
  for seconds, line in lines:
    for pattern, name in PHASES:
      match = re.match(pattern, line)
      if match and not (name.startswith('stage') and match.group(1) == 'training'):
        starts.append({'phase': name.format(*match.groups()), 'starts_at': round(seconds, 1)})
        break
  for here, after in zip(starts, starts[1:]):
    here['seconds_until_next'] = round(after['starts_at'] - here['starts_at'], 1)
  return starts


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--config', default='configs/sst_bilstm.py')
  parser.add_argument('--workers', default='auto', help="vectors.workers: a number or 'auto'")
  parser.add_argument('--out', help='JSON file for the measurements')
  parser.add_argument('--keep', help='keep the caches and workdir here (default: a temporary folder)')
  args = parser.parse_args(argv)
  folder = args.keep or tempfile.mkdtemp(prefix='attn_jax_first_run_')
  env = dict(os.environ, TFDS_DATA_DIR=os.path.join(folder, 'tensorflow_datasets'),
             ATTN_JAX_VECTORS=os.path.join(folder, 'vectors'),
             ATTN_JAX_COMPILATION_CACHE=os.path.join(folder, 'jax'),
             ATTN_JAX_RATES=os.path.join(folder, 'rates.json'), PYTHONUNBUFFERED='1')
  command = [sys.executable, 'run.py', f'--config={args.config}', f'--workdir={folder}/workdir',
             f'--config.vectors.workers={args.workers}', '--config.train.progress=False']
  print(' '.join(command[1:]), f'(caches in {folder})', flush=True)
  started = time.time()
  lines = []
  with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True) as child:
    for line in child.stdout:
      lines.append((time.time() - started, line.rstrip('\n')))
      print(f'{lines[-1][0]:7.1f}  {lines[-1][1]}', flush=True)
    status = child.wait()
  wall = time.time() - started
  done = [s for s, line in lines if line.startswith('done in ')]
  training = next((s for s, line in lines if line.startswith('training: about')), None)
  result = {
      'command': 'python benchmarks/first_run.py ' + ' '.join(sys.argv[1:]),
      'run_command': ' '.join(command[1:3] + command[4:]), 'exit_status': status,
      'cores': estimates.available_cores(), 'processor': platform.processor() or platform.machine(),
      'seconds_to_closing_line': round(done[0], 1) if done else None, 'wall_seconds': round(wall, 1),
      'phases': phases(lines),
      'said_before_training': [line for s, line in lines if training is None or s <= training],
      'tfds_noise': [line for _, line in lines if any(n in line for n in TFDS_NOISE)],
      'log': [[round(s, 1), line] for s, line in lines]}
  if args.out:
    atomic_io.write_json(args.out, result)
  print(f'closing line after {result["seconds_to_closing_line"]} s; exit status {status}; '
        f'{len(result["tfds_noise"])} tfds lines')


if __name__ == '__main__':
  main()
