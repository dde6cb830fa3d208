"""Fault injection helpers: damage files, kill runs, fingerprint and judge results.

Shared by `tests/fault_tool/fault_injection.py` (the long suite) and
`tests/end_to_end/test_faults.py` (the fast CI cases). Nothing here knows the exact
layout of a workdir: results are found by walking it, so the same helpers
judge today's layout and the next one.

Run as a script it is a wrapper around `run.py` that injects a fault from
inside the process (what `kill -9` from outside cannot time exactly):

    python tests/fault_tool/faults.py [--save-every S] [--nan-at EPOCH:BATCH] \
        [--kill-in STAGE:N] -- --config=... --workdir=...

--save-every sets the analysis runner's partial-save interval (0: after every
batch, so a kill leaves `partial.npz`); --log-writes FILE appends a line
(time, path) to FILE for each commit that passed the lease fence (an atomic
file write or a checkpoint), to show who wrote what when; --nan-at makes the loss of that
training batch NaN (as tests/training/test_checkpoints.py does); --kill-in sends
SIGKILL to the run itself when STAGE starts its (N+1)-th batch.
"""

import argparse
import dataclasses
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACEBACK = 'Traceback (most recent call last)'
# Keys whose values change from run to run without the results changing:
# timings, where things are, and a record's hash of its own content (timings
# included: summary_sha256, progress_sha256).
VOLATILE = ('seconds', 'per_second', 'time', 'started', 'path', 'dir', 'file', '_sha256')
SKIPPED_DIRS = ('checkpoints',)  # compared through what they produce (eval, predictions)
SKIPPED_FILES = ('partial.npz',)  # a stage's unfinished state, removed when it finishes

# The run the suite's cases start from: a small synthetic model with every analysis.
CONFIG = 'configs/synthetic.py:smoke'
BASE = ['--config=' + CONFIG, '--config.train.progress=False']
# The real SST files the data cases copy and damage ($ATTN_JAX_DATA/sst); '' without
# the variable, and those cases are skipped saying `SST_MISSING`.
SST_DATA = os.path.join(os.environ['ATTN_JAX_DATA'], 'sst') if os.environ.get('ATTN_JAX_DATA') else ''
SST_MISSING = f'{SST_DATA or "$ATTN_JAX_DATA/sst"} not found (set ATTN_JAX_DATA to the data folder)'

OUTCOMES = ('survived', 'clear error', 'traceback', 'different results', 'data lost',
            'unclear failure')


@dataclasses.dataclass
class Case:
  """One attempt of the suite: `do(suite)` -> {'outcome', 'message', ...}."""
  kind: str  # the table row
  name: str  # this attempt
  do: Callable


def run_py(workdir, *extra) -> list:
  """The command of one run of the suite's small model in `workdir`."""
  return [sys.executable, os.path.join(ROOT, 'run.py'), *BASE, f'--workdir={workdir}', *extra]


# ---------------------------------------------------------------- fingerprints

def _digest(data: bytes) -> str:
  return hashlib.sha256(data).hexdigest()[:16]


def _normalise(value, roots):
  """JSON content without volatile keys; workdir paths replaced by a marker."""
  if isinstance(value, dict):
    return {k: _normalise(v, roots) for k, v in value.items()
            if not any(word in k.lower() for word in VOLATILE)}
  if isinstance(value, list):
    return [_normalise(v, roots) for v in value]
  if isinstance(value, str):
    for root in roots:
      value = value.replace(root, '<dir>')
  return value


def file_fingerprint(path: str, roots=()) -> str:
  """A digest of what the file says: exact arrays of an .npz, JSON without
  volatile keys, bytes of anything else; 'unreadable:...' if it cannot be read."""
  try:
    with open(path, 'rb') as f:
      data = f.read()
  except OSError as e:
    return f'unreadable: {type(e).__name__}'
  name = os.path.basename(path)
  try:
    if name.endswith('.npz'):
      import io  # pylint: disable=g-import-not-at-top
      import numpy as np  # pylint: disable=g-import-not-at-top
      with np.load(io.BytesIO(data)) as f:
        arrays = {k: f[k] for k in f.files}
      return _digest(json.dumps({k: [str(a.dtype), list(a.shape), _digest(a.tobytes())]
                                 for k, a in sorted(arrays.items())}).encode())
    if name.endswith('.json'):
      return _digest(json.dumps(_normalise(json.loads(data), roots), sort_keys=True).encode())
    if name.endswith('.jsonl'):
      rows = [_normalise(json.loads(line), roots) for line in data.decode().splitlines() if line.strip()]
      return _digest(json.dumps(rows, sort_keys=True).encode())
  except Exception as e:  # pylint: disable=broad-except  (damaged: any parse error)
    return f'unreadable: {type(e).__name__}'
  return _digest(data)


def canonical(relpath: str) -> str:
  """The comparison key of a result file: its path, except that a stage's
  results are named `analyses/<stage>/<file>` wherever below the stage
  folder they live (key-named subfolders compare by content)."""
  parts = relpath.split(os.sep)
  if 'analyses' in parts:
    i = parts.index('analyses')
    if len(parts) - i > 3:
      parts = parts[:i + 2] + parts[-1:]
  return '/'.join(parts)


def fingerprint(root: str) -> dict:
  """{canonical path: digest} of every result file under `root` (checkpoints
  and unfinished partial files excepted; a key several files share gets the
  sorted list of their digests)."""
  found: dict = {}
  roots = sorted({root, os.path.abspath(root), os.path.realpath(root)}, key=len, reverse=True)
  for directory, dirs, files in os.walk(root):
    dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith('.'))
    for name in sorted(files):
      if name.startswith('.') or name in SKIPPED_FILES:
        continue
      path = os.path.join(directory, name)
      found.setdefault(canonical(os.path.relpath(path, root)), []).append(
          file_fingerprint(path, roots))
  return {k: v[0] if len(v) == 1 else sorted(v) for k, v in found.items()}


def _unreadable(value) -> bool:
  values = value if isinstance(value, list) else [value]
  return any(str(v).startswith('unreadable') for v in values)


def compare(reference: dict, found: dict, keys=None) -> dict:
  """What differs from the reference: missing, unreadable, changed, extra keys."""
  keys = sorted(reference) if keys is None else sorted(keys)
  missing = [k for k in keys if k not in found]
  unreadable = [k for k in keys if k in found and _unreadable(found[k])]
  changed = [k for k in keys if k in found and found[k] != reference[k] and k not in unreadable]
  extra = sorted(set(found) - set(reference))
  return {'missing': missing, 'unreadable': unreadable, 'changed': changed, 'extra': extra}


# ---------------------------------------------------------------- running

@dataclasses.dataclass
class Result:
  """A finished (or killed) command."""
  command: list
  returncode: Optional[int]
  stdout: str
  stderr: str
  seconds: float
  killed_after: Optional[str] = None  # the last log line seen before a kill


def default_ctrl_c() -> None:
  """(In a child, before exec.) Ctrl-C as a terminal's: a suite started in the
  background (`nohup ... &`) has SIGINT ignored, and an ignored signal stays
  ignored across exec, so its children would never see the Ctrl-C under test."""
  signal.signal(signal.SIGINT, signal.SIG_DFL)


def env(extra: Optional[dict] = None) -> dict:
  """The environment of a child run: CPU, unbuffered logs, and `extra`."""
  e = dict(os.environ, JAX_PLATFORMS='cpu', PYTHONUNBUFFERED='1')
  e.update(extra or {})
  return e


def run(command, timeout: float = 900, extra_env: Optional[dict] = None) -> Result:
  started = time.time()
  try:
    p = subprocess.run(command, cwd=ROOT, env=env(extra_env), capture_output=True, text=True,
                       timeout=timeout, errors='replace')
    return Result(list(command), p.returncode, p.stdout, p.stderr, time.time() - started)
  except subprocess.TimeoutExpired as e:
    out = e.stdout.decode(errors='replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
    err = e.stderr.decode(errors='replace') if isinstance(e.stderr, bytes) else (e.stderr or '')
    return Result(list(command), None, out, err + f'\n[timed out after {timeout} s]',
                  time.time() - started)


def run_and_kill(command, after_lines: int, delay: float, timeout: float = 900,
                 extra_env: Optional[dict] = None) -> Result:
  """Starts `command`, waits for its `after_lines`-th stdout line, waits
  `delay` seconds more and sends SIGKILL to its process group.

  `returncode` is -9 when the kill landed, the run's own code when it ended
  first (then `killed_after` is None).
  """
  started = time.time()
  p = subprocess.Popen(command, cwd=ROOT, env=env(extra_env), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors='replace', start_new_session=True)
  lines, err = [], []
  seen = threading.Event()

  def read_out():
    for line in p.stdout:
      lines.append(line.rstrip('\n'))
      if len(lines) >= after_lines:
        seen.set()
    seen.set()  # the run ended: nothing more to wait for

  def read_err():
    err.extend(p.stderr)

  readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
  for r in readers:
    r.start()
  if after_lines > 0:
    seen.wait(timeout)
  time.sleep(delay)
  killed_after = None
  if p.poll() is None:
    killed_after = lines[-1] if lines else '(no output yet)'
    try:
      os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
      killed_after = None
  p.wait()
  for r in readers:
    r.join(10)
  return Result(list(command), p.returncode, '\n'.join(lines), ''.join(err), time.time() - started,
                killed_after)


def timed_lines(command, timeout: float = 900, extra_env: Optional[dict] = None):
  """Runs `command` to its end; (Result, [(seconds since start, stdout line)])."""
  started = time.time()
  p = subprocess.Popen(command, cwd=ROOT, env=env(extra_env), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors='replace')
  err = []
  reader = threading.Thread(target=lambda: err.extend(p.stderr), daemon=True)
  reader.start()
  timed = [(time.time() - started, line.rstrip('\n')) for line in p.stdout]
  p.wait(timeout)
  reader.join(10)
  return (Result(list(command), p.returncode, '\n'.join(l for _, l in timed), ''.join(err),
                 time.time() - started), timed)


# ---------------------------------------------------------------- judging

def error_lines(stderr: str) -> list[str]:
  return [line for line in stderr.splitlines() if line.startswith('error: ')]


def failure(result: Result) -> tuple[str, str]:
  """(outcome, message) of a run that did not succeed."""
  if TRACEBACK in result.stderr:
    last = [l for l in result.stderr.splitlines() if l.strip()]
    return 'traceback', (last[-1] if last else '')[:300]
  errors = error_lines(result.stderr)
  if result.returncode not in (0, None) and len(errors) == 1:
    return 'clear error', errors[0][:500]
  last = [l for l in result.stderr.splitlines() if l.strip()]
  return 'unclear failure', f'exit {result.returncode}: ' + (last[-1] if last else '(no stderr)')[:300]


def judge_bad_input(result: Result, expect: str = 'error') -> tuple[str, str]:
  """(outcome, message) of a command given bad input: `expect` 'error' wants
  one `error:` line and a non-zero exit (an exit 0 there is an 'unclear
  failure'); 'runs' also accepts exit 0 without a traceback ('survived')."""
  if result.returncode == 0 and TRACEBACK not in result.stderr:
    if expect == 'runs':
      return 'survived', ''
    return 'unclear failure', 'exit 0 on bad input: ' + (result.stdout.strip().splitlines() or [''])[-1][:200]
  return failure(result)


# A progress bar's line (tqdm: 'vectors:  40%|████      | 2/5 [...]'): what the user watched
# before the Ctrl-C, not something said about it.
_PROGRESS_BAR = re.compile(r'\d+%\|.*\|')


def judge_interrupt(returncode: Optional[int], stderr: str) -> tuple[str, str]:
  """(outcome, message) of a command stopped by Ctrl-C: one line on stderr
  besides its progress bars, a non-zero exit, no traceback ('survived', the line)."""
  lines = [l for l in re.split(r'[\r\n]', stderr) if l.strip() and not _PROGRESS_BAR.search(l)]
  if TRACEBACK in stderr:
    return 'traceback', (lines[-1] if lines else '')[:300]
  if returncode in (0, None) or len(lines) != 1:
    return 'unclear failure', f'exit {returncode}: ' + ' / '.join(lines[-3:])[:300]
  return 'survived', lines[0][:300]


def judge(result: Result, reference: dict, root: str, keys=None) -> tuple[str, str]:
  """(outcome, detail) of a rerun that should reproduce `reference` in `root`."""
  if result.returncode != 0 or TRACEBACK in result.stderr:
    return failure(result)
  diff = compare(reference, fingerprint(root), keys)
  if diff['missing'] or diff['unreadable']:
    return 'data lost', 'missing or unreadable: ' + ', '.join(diff['missing'] + diff['unreadable'])
  if diff['changed']:
    return 'different results', 'differ: ' + ', '.join(diff['changed'])
  return 'survived', ('extra files: ' + ', '.join(diff['extra'])) if diff['extra'] else ''


def lost_since(before: dict, root: str) -> list[str]:
  """Result files of `before` (finished before a fault) that are now gone or changed."""
  diff = compare(before, fingerprint(root))
  return diff['missing'] + diff['unreadable'] + diff['changed']


# ---------------------------------------------------------------- damage

DAMAGES = ('corrupted', 'truncated', 'deleted')


def damage(path: str, how: str) -> None:
  """Flips 16 bytes in the middle, cuts the file to half, or deletes it."""
  if how == 'deleted':
    os.remove(path)
    return
  with open(path, 'rb') as f:
    data = f.read()
  if how == 'truncated':
    data = data[:len(data) // 2]
  elif how == 'corrupted':
    middle = len(data) // 2
    flipped = bytes(b ^ 0xFF for b in data[middle:middle + 16]) or b'\xff'
    data = data[:middle] + flipped + data[middle + 16:]
  else:
    raise ValueError(how)
  with open(path, 'wb') as f:
    f.write(data)


# ---------------------------------------------------------------- the wrapper

def _poison_batches(epoch: int, batch: int) -> None:
  import numpy as np  # pylint: disable=g-import-not-at-top
  from attn_jax.training import trainer  # pylint: disable=g-import-not-at-top
  real = trainer.train_batches

  def poisoned(*args, **kwargs):
    batches = real(*args, **kwargs)
    if kwargs.get('epoch', args[-1]) == epoch and batch < len(batches):
      b = batches[batch]
      batches[batch] = b._replace(weights=np.full_like(b.weights, np.nan))
    return batches

  trainer.train_batches = poisoned


def _kill_in(stage_name: str, after: int) -> None:
  from attn_jax.stages import stage_runner as stages  # pylint: disable=g-import-not-at-top
  stage = stages.STAGES[stage_name]
  calls = [0]

  def compute(ctx, batch):
    if calls[0] >= after:
      os.kill(os.getpid(), signal.SIGKILL)
    calls[0] += 1
    return stage.compute(ctx, batch)

  stages.STAGES[stage_name] = dataclasses.replace(stage, compute=compute)


def _log_writes(path: str) -> None:
  from attn_jax.core import atomic_io, leases  # pylint: disable=g-import-not-at-top
  fence = leases.verify

  def logged(target: str) -> None:
    fence(target)  # raises when the lease is lost: nothing is logged, nothing written
    with open(path, 'a') as f:
      f.write(json.dumps({'time': time.time(), 'pid': os.getpid(), 'path': target}) + '\n')

  atomic_io.BEFORE_COMMIT[atomic_io.BEFORE_COMMIT.index(fence)] = logged
  leases.verify = logged  # the checkpoints' own call


# Where a holder can stop itself (SIGSTOP) in its Nth checkpoint save, for the
# paused-holder cases: each names a moment of `attn_jax.training.checkpoints`.
STOP_POINTS = {
    'save-start': 'before the save checks its lease',
    'inside-save': "inside orbax's write: the files written, not yet finalised",
    'before-commit': 'after the lease check, before the rename that commits',
    'after-commit': 'after the commit, before the older step is removed',
}


def _stop_at(point: str, nth: int, marker: Optional[str]) -> None:
  """Makes this process SIGSTOP itself at `point` of its `nth` checkpoint save,
  writing `marker` first (a process traced by strace is also in a tracing stop
  at each traced call, so its state alone does not say it paused)."""

  def stop():
    if marker:
      with open(marker, 'w') as f:
        f.write(point)
    os.kill(os.getpid(), signal.SIGSTOP)

  import orbax.checkpoint as ocp  # pylint: disable=g-import-not-at-top
  from attn_jax.training import checkpoints  # pylint: disable=g-import-not-at-top
  saves = [0]
  real_save = checkpoints.CheckpointStore._save

  def counted_save(self, *args, **kwargs):
    saves[0] += 1
    if point == 'save-start' and saves[0] == nth:
      stop()
    return real_save(self, *args, **kwargs)

  def stop_then(real):
    def stopped(*args, **kwargs):
      if saves[0] == nth:
        stop()
      return real(*args, **kwargs)
    return stopped

  checkpoints.CheckpointStore._save = counted_save
  if point == 'inside-save':
    ocp.CompositeCheckpointHandler.finalize = stop_then(ocp.CompositeCheckpointHandler.finalize)
  elif point == 'before-commit':
    checkpoints._commit_rename = stop_then(checkpoints._commit_rename)
  elif point == 'after-commit':
    checkpoints.CheckpointStore._remove_others = stop_then(checkpoints.CheckpointStore._remove_others)
  elif point != 'save-start':
    raise SystemExit(f'--stop-at: unknown point {point!r}; one of {", ".join(STOP_POINTS)}')


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--save-every', type=float, default=None)
  parser.add_argument('--log-writes', default=None, help='FILE')
  parser.add_argument('--nan-at', default=None, help='EPOCH:BATCH')
  parser.add_argument('--kill-in', default=None, help='STAGE:N')
  parser.add_argument('--stop-at', default=None, help='POINT:N (STOP_POINTS; the Nth checkpoint save)')
  parser.add_argument('--pidfile', default=None, help='write this process\'s pid here')
  parser.add_argument('run_args', nargs=argparse.REMAINDER)
  args = parser.parse_args(argv)
  sys.path.insert(0, ROOT)
  if args.save_every is not None:
    from attn_jax.stages import stage_runner as runner  # pylint: disable=g-import-not-at-top
    runner.SAVE_EVERY_SECONDS = args.save_every
  if args.log_writes:
    _log_writes(args.log_writes)
  if args.nan_at:
    _poison_batches(*(int(x) for x in args.nan_at.split(':')))
  if args.kill_in:
    name, _, after = args.kill_in.partition(':')
    _kill_in(name, int(after))
  if args.stop_at:
    point, _, nth = args.stop_at.partition(':')
    _stop_at(point, int(nth or 1), args.pidfile + '.stopped' if args.pidfile else None)
  if args.pidfile:
    with open(args.pidfile, 'w') as f:
      f.write(str(os.getpid()))
  import runpy  # pylint: disable=g-import-not-at-top
  run_args = [a for a in args.run_args if a != '--']
  sys.argv = [os.path.join(ROOT, 'run.py'), *run_args]
  runpy.run_path(sys.argv[0], run_name='__main__')


def wrapped(run_args, save_every=None, nan_at=None, kill_in=None, log_writes=None, stop_at=None,
            pidfile=None) -> list:
  """The command running `run.py run_args` through this wrapper."""
  command = [sys.executable, os.path.join(ROOT, 'tests', 'fault_tool', 'faults.py')]
  if stop_at:
    command += ['--stop-at', stop_at]
  if pidfile:
    command += ['--pidfile', pidfile]
  if save_every is not None:
    command += ['--save-every', str(save_every)]
  if log_writes:
    command += ['--log-writes', log_writes]
  if nan_at:
    command += ['--nan-at', nan_at]
  if kill_in:
    command += ['--kill-in', kill_in]
  return command + ['--', *run_args]


def line_label(line: str) -> str:
  """A short name for a log line: the stage, 'epoch N', 'test', ..."""
  if ': test (' in line:
    return 'evaluation'
  m = re.match(r'^([\w ]+?)(?: of \d+)?: ', line)
  return m.group(1) if m else line[:30]


if __name__ == '__main__':
  main()
