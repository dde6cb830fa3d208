"""Fault-suite cases of a paused lease holder, Ctrl-C and the odd inputs a probe found.

Used by `tests/fault_tool/fault_injection.py` (which runs and tabulates them):

  paused_holder_cases  pause a training run (SIGSTOP) at five points — between
                       saves, and at the start, inside, before the commit and
                       after the commit of a checkpoint save — past its lease's
                       takeover, let a second run take the lease over, SIGCONT
                       the first: it must write nothing more (its actual file
                       system calls, traced with strace) and say so in the
                       lease's one line; the second run's results equal an
                       undisturbed run's.
  interrupt_case       Ctrl-C (SIGINT) at a seeded moment of training: one line,
                       no traceback, and the rerun resumes to identical results.
  odd_input_cases      the ten cases of the 157-case probe (issue 53), each
                       the command a user ran: one line, or a run that goes on.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import Optional

import faults
import write_trace
from faults import Case, run_py

FORTY = ('--config.train.epochs=40',)  # long enough that a signal lands mid-training
STALE_AFTER = 4.0  # seconds without a heartbeat before a lease is taken over, in these cases


def _forty(workdir: str) -> list:
  return run_py(workdir, *FORTY)


def _start(command: list, log: str, extra_env=None) -> subprocess.Popen:
  """`command` with stdout and stderr into files (a paused process never blocks a pipe)."""
  return subprocess.Popen(command, cwd=faults.ROOT, env=faults.env(extra_env), stdout=open(log + '.out', 'w'),
                          stderr=open(log + '.err', 'w'), text=True, preexec_fn=faults.default_ctrl_c)


def _wait_for(log: str, text: str, proc: subprocess.Popen, timeout: float = 600) -> bool:
  """Whether `text` appears in `log`.out before `proc` ends or `timeout` passes."""
  deadline = time.time() + timeout
  while time.time() < deadline:
    with open(log + '.out', errors='replace') as f:
      if text in f.read():
        return True
    if proc.poll() is not None:
      return False
    time.sleep(0.05)
  return False


def _read(log: str, stream: str) -> str:
  with open(f'{log}.{stream}', errors='replace') as f:
    return f.read()


def _result(proc: subprocess.Popen, command: list, log: str) -> faults.Result:
  return faults.Result(command, proc.returncode, _read(log, 'out'), _read(log, 'err'), 0.0)


PAUSE_POINTS = {'between-saves': 'after epoch 2\'s line, between two saves (SIGSTOP from outside)',
                **faults.STOP_POINTS}


def _state(pid: int) -> str:
  """The process state letter of `pid` ('T'/'t': stopped), '' when it is gone."""
  try:
    with open(f'/proc/{pid}/stat') as f:
      return f.read().rpartition(')')[2].split()[0]
  except (OSError, IndexError):
    return ''


def _wait_stopped(pid_file: str, proc: subprocess.Popen, timeout: float = 600) -> Optional[int]:
  """The holder's pid once it has stopped itself (its marker file written and
  its state stopped); None if it ended first."""
  deadline = time.time() + timeout
  while time.time() < deadline and proc.poll() is None:
    with contextlib.suppress(OSError, ValueError):
      with open(pid_file) as f:
        pid = int(f.read())
      if os.path.exists(pid_file + '.stopped'):
        time.sleep(0.5)  # the SIGSTOP follows the marker
        if _state(pid) in ('T', 't'):
          return pid
    time.sleep(0.05)
  return None


def _fenced(workdir: str, old_token: str, timeout: float) -> bool:
  """Whether a new holder holds the training lease and has fenced off the old
  holder's staging folder (a tombstone, or never made), within `timeout`."""
  lock = os.path.join(workdir, 'training.lease')
  old = os.path.join(workdir, '.attn_jax-staging', 'training', old_token)
  deadline = time.time() + timeout
  while time.time() < deadline:
    with contextlib.suppress(OSError, ValueError):
      with open(lock) as f:
        token = json.load(f).get('token')
      if token not in (None, old_token) and not os.path.isdir(old):
        return True
    time.sleep(0.05)
  return False


def paused_holder_case(point: str = 'between-saves', stale_after: Optional[float] = STALE_AFTER,
                       trial: int = 0) -> Case:
  """One writer after a takeover. A training run pauses at `point` (of its
  (2 + trial)-th checkpoint save; or, between saves, after epoch 2) past its
  lease's takeover (`stale_after` seconds; None: the default 5 minutes); a
  second run takes the lease over; once it has fenced the first off, the first
  is woken. The woken holder's actual writes after that — file creations,
  renames, removals, from strace — must be none, its exit the lease's one
  line, and the second run's results the reference's."""
  nth = 2 + trial
  takeover = 'default takeover (300 s)' if stale_after is None else f'takeover {stale_after:g} s'

  def do(suite) -> dict:
    reference = suite.reference('forty epochs', _forty)
    workdir = suite.fresh(f'paused-{point}-{trial}' + ('-default' if stale_after is None else ''))
    os.makedirs(workdir)
    stale = {} if stale_after is None else {'ATTN_JAX_LEASE_STALE_AFTER': str(stale_after)}
    holder_log, waiter_log, pid_file = workdir + '-holder', workdir + '-waiter', workdir + '-holder.pid'
    trace = workdir + '-trace/t'
    stop_at = None if point == 'between-saves' else f'{point}:{nth}'
    command = faults.wrapped(_forty(workdir)[2:], stop_at=stop_at, pidfile=pid_file)
    traced = write_trace.available()
    holder = _start(write_trace.traced(command, trace) if traced else command, holder_log, stale)
    waiter = None
    try:
      if point == 'between-saves':
        if not _wait_for(holder_log, 'epoch 2 of 40: train loss', holder):
          return {'outcome': 'not paused', 'message': 'the holder ended before its second epoch'}
        with open(pid_file) as f:
          os.kill(int(f.read()), signal.SIGSTOP)  # a scheduler's suspend: no heartbeat from now on
        with open(pid_file + '.stopped', 'w') as f:
          f.write(point)
      pid = _wait_stopped(pid_file, holder)
      if pid is None:
        return {'outcome': 'not paused', 'message': f'the holder ended before {point} of save {nth}'}
      old_token = (leases_record(workdir) or {}).get('token')
      if not old_token:
        return {'outcome': 'not paused', 'message': 'the paused holder held no training lease'}
      waiter = _start(_forty(workdir), waiter_log, stale)
      fenced = _fenced(workdir, old_token, (stale_after or 300) + 600)
      woken = time.time()
      os.kill(pid, signal.SIGCONT)
      holder.wait(timeout=600)
      waiter.wait(timeout=1200)
    finally:
      with contextlib.suppress(OSError, ValueError):
        with open(pid_file) as f:
          inner = int(f.read())  # the traced python, which outlives a killed strace
        if holder.poll() is None:
          os.kill(inner, signal.SIGCONT)
          os.kill(inner, signal.SIGKILL)
      for proc in (holder, waiter):
        if proc is not None and proc.poll() is None:
          with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGCONT)
          proc.kill()
    took_over = 'taking it over' in _read(waiter_log, 'out')
    after = write_trace.writes(trace, workdir, since=woken) if traced else []
    held = _result(holder, command, holder_log)
    outcome, detail = faults.judge(_result(waiter, _forty(workdir), waiter_log), reference['fingerprint'], workdir)
    stopped = faults.failure(held)
    if outcome == 'survived' and after:
      outcome = 'different results'
      detail = (f'the woken holder wrote {len(after)} times after the takeover: '
                + '; '.join(f'{w["call"]} {w["paths"]}' for w in after[:3]))
    elif outcome == 'survived' and (stopped[0] != 'clear error' or 'was taken over by' not in stopped[1]
                                    or not stopped[1].rstrip().endswith('nothing more is written by this process')):
      outcome, detail = 'unclear failure', f'the woken holder did not stop with the lease\'s whole line: {stopped[1]}'
    elif outcome == 'survived' and not (took_over and fenced):
      outcome, detail = 'unclear failure', 'the second run did not take the lease over and fence the first'
    return {'outcome': outcome, 'message': detail, 'holder_line': stopped[1], 'point': point, 'save': nth,
            'stale_after': stale_after, 'writes_traced': traced, 'holder_writes_after_takeover': len(after),
            'took_over': took_over, 'fenced': fenced,
            'command': ' '.join(_forty('WORKDIR')[1:]) + f'  (twice; {takeover}; the first paused '
            f'{PAUSE_POINTS[point]}' + ('' if point == 'between-saves' else f' of save {nth}') +
            ', woken once the second had fenced it off; writes traced with strace)'}
  return Case('a lease holder paused past the takeover (SIGSTOP, SIGCONT)', f'pause {point}, {takeover}', do)


def leases_record(workdir: str) -> Optional[dict]:
  with contextlib.suppress(OSError, ValueError):
    with open(os.path.join(workdir, 'training.lease')) as f:
      return json.load(f)
  return None


def paused_holder_cases(trials: int = 4) -> list[Case]:
  """Every pause point `trials` times at a short takeover, and the two points
  inside a save once each at the default takeover."""
  return ([paused_holder_case(p, STALE_AFTER, t) for p in PAUSE_POINTS for t in range(trials)]
          + [paused_holder_case(p, None, 0) for p in ('inside-save', 'before-commit')])


def interrupt_case(epoch: int) -> Case:
  """Ctrl-C after `epoch` epochs and a seeded fraction of the next: one line,
  no traceback, then the rerun resumes to the reference's results."""
  def do(suite) -> dict:
    reference = suite.reference('forty epochs', _forty)
    workdir = suite.fresh(f'interrupt-{epoch}')
    log = workdir + '-first'
    first = _start(_forty(workdir), log)
    if not _wait_for(log, f'epoch {epoch} of 40: train loss', first):
      return {'outcome': 'not interrupted', 'message': f'the run ended before epoch {epoch}'}
    time.sleep(round(suite.rng.uniform(0, 0.3), 3))
    first.send_signal(signal.SIGINT)
    first.wait(timeout=300)
    outcome, line = faults.judge_interrupt(first.returncode, _read(log, 'err'))
    if outcome != 'survived' or first.returncode != 130 or not line.startswith('interrupted:'):
      return {'outcome': outcome if outcome != 'survived' else 'unclear failure',
              'message': f'exit {first.returncode}: {line}'}
    rerun = faults.run(_forty(workdir))
    outcome, detail = faults.judge(rerun, reference['fingerprint'], workdir)
    return {'outcome': outcome, 'message': detail, 'first_line': line, 'resumed': 'resuming' in rerun.stdout,
            'command': ' '.join(_forty('WORKDIR')[1:]) + f'  (Ctrl-C in epoch {epoch + 1}, then again)'}
  return Case('Ctrl-C during training (then the same command)', f'SIGINT in epoch {epoch + 1}', do)


# ---------------------------------------------------------------- the probe's ten cases

PROBE = 'odd input a 157-case probe found (issue 53)'
LONG_TEXT_WORDS = 100_000
CLI_TEXT_WORDS = 40_000  # one command-line argument holds at most 128 KiB
# The library call of case 6; its ValueError is the one line (a traceback of `python -c` is not).
EXPLAIN = '''import sys
import attn_jax as aj
try:
  aj.explain(sys.argv[1], [' '.join(['good'] * int(sys.argv[2]))])
except ValueError as e:
  sys.exit(f'error: {e}')
'''


def _report(*args) -> list:
  return [sys.executable, '-m', 'attn_jax.report', *args]


def _one_line(command: list, timeout: float = 300, extra_env=None) -> dict:
  """'clear error' when `command` exits non-zero with one `error:` line."""
  result = faults.run(command, timeout=timeout, extra_env=extra_env)
  outcome, message = faults.judge_bad_input(result)
  return {'outcome': outcome, 'message': message, 'seconds_to_answer': round(result.seconds, 1)}


def _rates_run(suite, rates) -> dict:
  """A run with a rates file holding `rates` for this machine (or, for
  'absurd', every rate a first run measured set to 1e-300): it goes on, with
  the reference's results and no absurd estimate."""
  from attn_jax.core import estimates  # pylint: disable=g-import-not-at-top
  workdir = suite.fresh('rates')
  os.makedirs(workdir)
  path = os.path.join(workdir, 'rates.json')
  env = {'ATTN_JAX_RATES': path}
  if rates == 'absurd':
    faults.run(run_py(os.path.join(workdir, 'measure')), extra_env=env)
    with open(path) as f:
      measured = json.load(f)
    rates = {k: {**v, 'rate': 1e-300} for k, v in measured.get(estimates.machine(), {}).items()}
    if not rates:
      return {'outcome': 'harness error', 'message': 'the first run measured no rates'}
  with open(path, 'w') as f:
    json.dump({estimates.machine(): rates}, f)
  run = os.path.join(workdir, 'run')
  result = faults.run(run_py(run), extra_env=env)
  outcome, detail = faults.judge(result, suite.reference('single', run_py)['fingerprint'], run)
  long_lines = [l for l in result.stdout.splitlines() if len(l) > 300]
  if outcome == 'survived' and long_lines:
    outcome, detail = 'unclear failure', f'a {len(long_lines[0])}-character line: {long_lines[0][:80]}…'
  return {'outcome': outcome, 'message': detail}


def _case(number: int, what: str, do) -> Case:
  return Case(PROBE, f'{number}: {what}', do)


def odd_input_cases() -> list:
  """The probe's ten cases, one attempt per command it ran (14)."""
  single = lambda suite: suite.reference('single', run_py)['dir']

  def scratch(suite, name) -> str:
    path = suite.fresh(name)
    os.makedirs(path)
    return path

  def file_at(suite, name) -> str:
    path = os.path.join(scratch(suite, name), 'a-file')
    with open(path, 'w') as f:
      f.write('x')
    return path

  def trained_only(suite) -> str:
    return suite.reference('trained only', lambda w: run_py(w, '--config.analyses='))['dir']

  def config_file(suite, text) -> str:
    path = os.path.join(scratch(suite, 'config'), 'my_config.py')
    with open(path, 'w') as f:
      f.write(text)
    return path

  def sst_tfds_file(suite) -> dict:
    if not faults.SST_DATA or not os.path.isdir(faults.SST_DATA):
      return {'outcome': 'skipped', 'message': faults.SST_MISSING}
    return _one_line([sys.executable, 'run.py', '--config=configs/sst_bilstm.py:smoke', '--config.analyses=',
                      f'--workdir={scratch(suite, "tfds-file")}/run'],
                     extra_env={'TFDS_DATA_DIR': file_at(suite, 'tfds'),
                                'ATTN_JAX_DATA': os.path.dirname(faults.SST_DATA)})

  cli_text = ' '.join(['ok'] * CLI_TEXT_WORDS)
  return [
      _case(1, 'report data on a missing path', lambda s: _one_line(_report('data', os.path.join(scratch(s, 'd'), 'missing.json')))),
      _case(1, 'report data on a workdir', lambda s: _one_line(_report('data', single(s)))),
      _case(2, 'report ss-data on a run without its statistics', lambda s: _one_line(_report('ss-data', single(s)))),
      _case(3, 'report wp on a run without W&P results', lambda s: _one_line(_report('wp', trained_only(s)))),
      _case(3, 'studies report jw_grid on a root that is not there', lambda s: _one_line(
          [sys.executable, '-m', 'attn_jax.studies', 'report', 'jw_grid', f'--root={scratch(s, "root")}/typo'])),
      _case(4, "a rates file whose machine entry is a list", lambda s: _rates_run(s, ['a list'])),
      _case(4, "a rates file whose machine entry is a string", lambda s: _rates_run(s, 'a string')),
      _case(4, 'every measured rate 1e-300', lambda s: _rates_run(s, 'absurd')),
      _case(5, 'a config file with a syntax error', lambda s: _one_line(
          [sys.executable, 'run.py', f'--config={config_file(s, "def get_config(:")}'])),
      _case(5, 'a config file whose get_config returns None', lambda s: _one_line(
          [sys.executable, 'run.py', f'--config={config_file(s, "def get_config():  return None")}'])),
      _case(6, f'aj.explain(run, [a {LONG_TEXT_WORDS:,}-word text])', lambda s: _one_line(
          [sys.executable, '-c', EXPLAIN, single(s), str(LONG_TEXT_WORDS)])),
      _case(6, f'report reproduce --text <{CLI_TEXT_WORDS:,} words>', lambda s: _one_line(
          _report('reproduce', single(s), '--out', os.path.join(scratch(s, 'out'), 'r'), '--text', cli_text))),
      _case(7, 'TFDS_DATA_DIR is a file', sst_tfds_file),
      _case(9, 'report reproduce --out FILE', lambda s: _one_line(
          _report('reproduce', single(s), '--out', file_at(s, 'out')))),
      _case(10, '--workdir is a file', lambda s: _one_line(run_py(file_at(s, 'workdir')))),
      _case(10, 'the compilation cache is a file', lambda s: _one_line(
          run_py(os.path.join(scratch(s, 'cache'), 'run'), f'--config.compilation_cache={file_at(s, "cache")}'))),
  ]  # case 8, Ctrl-C during training, is `interrupt_case`
