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
line with its time since the start (`python -m attn_jax.report first-run`
reads the phases from it: tfds preparations, the vectors, training, each
analysis stage), what was said before training (the estimates), any of
tfds's own lines that reached the log (there should be none), and the rates
the run measured (a later run on a machine with as many cores reads them when
it has measured none of its own: `attn_jax.core.estimates`).
"""

import argparse
import os
import platform
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


def result(command_line: str, run_command: list, lines: list, status: int, wall: float, folder: str) -> dict:
  """The run's record: its log with times, what it said before training,
  tfds's own lines that reached it, and the rates it measured (its
  ATTN_JAX_RATES file: what a later run on a machine like this one reads).
  The phases are read from the log by `python -m attn_jax.report first-run`."""
  done = [s for s, line in lines if line.startswith('done in ')]
  training = next((s for s, line in lines if line.startswith('training: about')), None)
  return {
      'command': command_line, 'run_command': ' '.join(run_command[1:3] + run_command[4:]),
      'exit_status': status, 'cores': estimates.available_cores(),
      'processor': platform.processor() or platform.machine(),
      'seconds_to_closing_line': round(done[0], 1) if done else None, 'wall_seconds': round(wall, 1),
      'said_before_training': [line for s, line in lines if training is None or s <= training],
      'tfds_noise': [line for _, line in lines if any(n in line for n in TFDS_NOISE)],
      'rates': atomic_io.read_json_object(os.path.join(folder, 'rates.json')) or {},
      'log': [[round(s, 1), line] for s, line in lines]}


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
  record = result('python benchmarks/first_run.py ' + ' '.join(sys.argv[1:]), command, lines, status, wall,
                  folder)
  if args.out:
    atomic_io.write_json(args.out, record)
  print(f'closing line after {record["seconds_to_closing_line"]} s; exit status {status}; '
        f'{len(record["tfds_noise"])} tfds lines')


if __name__ == '__main__':
  main()
