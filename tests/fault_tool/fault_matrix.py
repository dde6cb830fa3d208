"""Every command-line entry point × the bad inputs it can meet (a fault-suite kind).

Each cell runs one command a user runs, with one bad input where its path
goes — the path missing, a file where a folder belongs (or a folder where a
file belongs), an empty input, a damaged one, an output folder on a read-only
mount or on a full disk (both need root: a bind mount, a 1 MiB tmpfs; skipped
otherwise) — or Ctrl-C while it works. It
passes when the command ends in one `error:` line with a non-zero exit, or,
where the input is legitimate (an empty folder to start a workdir in), when it
does its work without a traceback; Ctrl-C passes with one line and no
traceback. A traceback, an exit 0 on input that cannot be right, or an exit
without one line fails.

`python tests/fault_tool/fault_injection.py run --only='entry point*'` runs the
cells; `report` writes the matrix into docs/reliability.md.
"""

import contextlib
import errno
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

import faults
from faults import Case, run_py

KIND = 'entry point × bad input (the matrix below; survived: did its work, or one line on Ctrl-C)'
COLUMNS = ('missing path', 'file ↔ folder', 'empty', 'damaged', 'read-only', 'disk full', 'Ctrl-C')
NEEDS_ROOT = 'mounting (a read-only bind mount, a tmpfs) needs root'
GARBAGE = '\x00garbage{'


def _python(*args) -> list:
  return [sys.executable, *args]


def _interrupt(command: list, after: float, log: str) -> tuple[str, str]:
  """Ctrl-C `after` seconds into `command`: one line and no traceback passes."""
  proc = subprocess.Popen(command, cwd=faults.ROOT, env=faults.env(), stdout=open(log + '.out', 'w'),
                          stderr=open(log + '.err', 'w'), start_new_session=True,
                          preexec_fn=faults.default_ctrl_c)
  time.sleep(after)
  if proc.poll() is not None:
    return 'not interrupted', f'it ended (exit {proc.returncode}) within {after} s'
  os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
  try:
    proc.wait(timeout=120)
  except subprocess.TimeoutExpired:
    proc.kill()
    return 'unclear failure', 'still running 120 s after Ctrl-C'
  with open(log + '.err', errors='replace') as f:
    return faults.judge_interrupt(proc.returncode, f.read())


class Skip(Exception):
  """A cell that cannot be made here (its message says why)."""


def can_mount() -> bool:
  return hasattr(os, 'geteuid') and os.geteuid() == 0 and shutil.which('mount') is not None


class Inputs:
  """Bad inputs made in a fresh scratch folder of the suite; `mounts` undoes
  the mounts they made once the cell's command has run."""

  def __init__(self, suite, name: str):
    self.suite, self.dir = suite, suite.fresh(name)
    self.mounts = contextlib.ExitStack()
    os.makedirs(self.dir)

  def read_only(self, name: str = 'read-only') -> str:
    """A new folder to write into, inside a folder bind-mounted read-only."""
    if not can_mount():
      raise Skip(NEEDS_ROOT)
    path = self.folder(name)
    self.mounts.enter_context(self.suite.mount('--bind', path, target=path))
    subprocess.run(['mount', '-o', 'remount,ro,bind', path], check=True, capture_output=True)
    return os.path.join(path, 'out')

  def full(self, name: str = 'full') -> str:
    """A new folder to write into, on a 1 MiB tmpfs filled to the last byte."""
    if not can_mount():
      raise Skip(NEEDS_ROOT)
    path = self.folder(name)
    self.mounts.enter_context(self.suite.mount('-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', target=path))
    os.makedirs(os.path.join(path, 'out'))  # made while there is room: the writes inside find it full
    fd = os.open(os.path.join(path, 'filler'), os.O_WRONLY | os.O_CREAT)
    try:
      while True:
        os.write(fd, bytes(4096))
    except OSError as e:
      if e.errno != errno.ENOSPC:
        raise
    finally:
      os.close(fd)
    return os.path.join(path, 'out')

  def missing(self) -> str:
    return os.path.join(self.dir, 'missing')

  def file(self, text: str = 'x', name: str = 'a-file') -> str:
    path = os.path.join(self.dir, name)
    with open(path, 'w') as f:
      f.write(text)
    return path

  def folder(self, name: str = 'a-folder') -> str:
    path = os.path.join(self.dir, name)
    os.makedirs(path, exist_ok=True)
    return path

  def run(self, damaged=(), name: str = 'run') -> str:
    """A copy of the suite's finished reference run, `damaged` files holding garbage."""
    path = os.path.join(self.dir, name)
    shutil.copytree(self.suite.reference('single', run_py)['dir'], path)
    for relpath in damaged:
      with open(os.path.join(path, relpath), 'w') as f:
        f.write(GARBAGE)
    return path


def _cell(entry: str, bad: str, command_of, expect: str = 'error', interrupt_after: float = 0.0,
          says: str = '') -> Case:
  """`command_of(inputs)` -> argv with the bad input in place; `says`: text
  its output must hold where it runs (expect='runs'), e.g. what it left out."""
  def do(suite) -> dict:
    inputs = Inputs(suite, f'matrix-{entry.split()[0]}-{bad}')
    with inputs.mounts:
      try:
        command = command_of(inputs)
      except Skip as e:
        return {'outcome': 'skipped', 'message': str(e)}
      if command is None:
        return {'outcome': 'skipped', 'message': faults.SST_MISSING}
      if bad == 'Ctrl-C':
        outcome, message = _interrupt(command, interrupt_after, os.path.join(inputs.dir, 'log'))
      else:
        result = faults.run(command, timeout=600)
        outcome, message = faults.judge_bad_input(result, expect)
        if outcome == 'survived' and says and says not in result.stdout + result.stderr:
          outcome, message = 'unclear failure', f'ran without saying {says!r}'
    return {'outcome': outcome, 'message': message, 'entry': entry, 'bad': bad,
            'command': ' '.join(command[1:])[:300]}
  return Case(KIND, f'{entry} | {bad}', do)


def _unwritable_row(entry: str, command_of) -> list[Case]:
  """`command_of(folder)`, the folder an output goes to, read-only and on a full disk."""
  return [_cell(entry, 'read-only', lambda i: command_of(i.read_only())),
          _cell(entry, 'disk full', lambda i: command_of(i.full()))]


def _empty_summary(i: Inputs) -> str:
  """A copy of the reference run whose kendall summary.json is `{}` (parses; records nothing)."""
  path = i.run()
  for summary in glob.glob(os.path.join(path, 'analyses', 'kendall', '*', 'summary.json')):
    with open(summary, 'w') as f:
      f.write('{}')
  return path


def _sst(*args) -> list | None:
  return [*args] if faults.SST_DATA and os.path.isdir(faults.SST_DATA) else None


def _report_row(table: str, damaged: tuple) -> list[Case]:
  entry = f'report {table} RUN'
  r = lambda *a: _python('-m', 'attn_jax.report', table, *a)
  return [_cell(entry, 'missing path', lambda i: r(i.missing())),
          _cell(entry, 'file ↔ folder', lambda i: r(i.file())),
          _cell(entry, 'empty', lambda i: r(i.folder())),
          _cell(entry, 'damaged', lambda i: r(i.run(damaged)))]


def _folder_row(entry: str, command_of, damaged_of=None, expect_empty='error') -> list[Case]:
  cells = [_cell(entry, 'missing path', lambda i: command_of(i.missing())),
           _cell(entry, 'file ↔ folder', lambda i: command_of(i.file())),
           _cell(entry, 'empty', lambda i: command_of(i.folder()), expect=expect_empty)]
  if damaged_of:
    cells.append(_cell(entry, 'damaged', lambda i: command_of(damaged_of(i))))
  return cells


def _file_row(entry: str, command_of, damaged_text: str = GARBAGE) -> list[Case]:
  return [_cell(entry, 'missing path', lambda i: command_of(i.missing())),
          _cell(entry, 'file ↔ folder', lambda i: command_of(i.folder())),
          _cell(entry, 'empty', lambda i: command_of(i.file(''))),
          _cell(entry, 'damaged', lambda i: command_of(i.file(damaged_text)))]


def _study_root(i: Inputs, damaged=('eval.json',)) -> str:
  """A study root whose one arm member is a finished run with a damaged eval.json (or `damaged`)."""
  root = i.folder('root')
  i.run(damaged, name=os.path.join('root', 'sst_average_dot', 'seed0'))
  return root


def _damaged_record(i: Inputs) -> str:
  """A study root whose record of wall times (study.json) is garbage."""
  root = i.folder('root')
  i.file(GARBAGE, os.path.join('root', 'study.json'))
  return root


def matrix_cases() -> list[Case]:
  """The cells, row by row (about 90; a few minutes)."""
  run = lambda *a: _python('run.py', *a)
  config = lambda p: run(f'--config={p}')
  workdir = lambda p: run_py(p)
  studies = lambda verb, p, *a: _python('-m', 'attn_jax.studies', verb, 'jw_grid', f'--root={p}', *a)
  study_arm = ('--only=sst_average_dot', '--seeds=1', '--variant=smoke', '--no-progress')
  sst = lambda *a: _sst(*run('--config=configs/sst_bilstm.py:smoke', '--config.train.progress=False',
                             '--config.analyses=', *a))
  script = lambda path, *a: _python(path, *a)
  cells = []
  cells += _file_row('run.py --config=FILE', config, damaged_text='def get_config(:\n')
  cells += _folder_row('run.py --workdir=DIR', workdir, lambda i: i.run(('config.json', 'eval.json')),
                       expect_empty='runs')
  cells[-4] = _cell('run.py --workdir=DIR', 'missing path', lambda i: workdir(i.missing()), expect='runs')
  cells[-1] = _cell('run.py --workdir=DIR', 'damaged', lambda i: workdir(i.run(('config.json', 'eval.json'))),
                    expect='runs')
  cells.append(_cell('run.py --workdir=DIR', 'Ctrl-C', lambda i: run_py(i.missing(), '--config.train.epochs=40'),
                     interrupt_after=20))
  cells += _unwritable_row('run.py --workdir=DIR', workdir)
  cells.append(_cell('run.py --output_dir=DIR', 'file ↔ folder', lambda i: run_py(i.run(), f'--output_dir={i.file()}',
                                                                                 '--config.analysis.max_docs=20')))
  cells.append(_cell('run.py --config.compilation_cache=DIR', 'file ↔ folder',
                     lambda i: run_py(i.missing(), f'--config.compilation_cache={i.file()}')))
  manual = lambda p, i: sst(f'--config.data.manual_dir={p}', f'--config.data.tfds_data_dir={i.folder("tfds")}',
                            f'--workdir={i.missing()}')
  cells += [_cell('run.py --config.data.manual_dir=DIR (SST)', 'missing path', lambda i: manual(i.missing(), i)),
            _cell('run.py --config.data.manual_dir=DIR (SST)', 'file ↔ folder', lambda i: manual(i.file(), i)),
            _cell('run.py --config.data.manual_dir=DIR (SST)', 'empty', lambda i: manual(i.folder(), i))]
  cells.append(_cell('run.py --config.data.tfds_data_dir=DIR (SST)', 'file ↔ folder', lambda i: sst(
      f'--config.data.tfds_data_dir={i.file()}', f'--workdir={i.missing()}')))
  for table, damaged in (('training', ('eval.json',)), ('analyses', ('config.json',)), ('wp', ('eval.json',)),
                         ('meister', ('eval.json',)), ('ss', ('eval.json',)), ('reproduce', ('eval.json',))):
    cells += _report_row(table, damaged)
  cells.append(_cell("report analyses RUN (a stage's summary.json {})", 'damaged', lambda i: _python(
      '-m', 'attn_jax.report', 'analyses', _empty_summary(i)), expect='runs', says='damaged'))
  cells.append(_cell('report reproduce RUN --out DIR', 'file ↔ folder',
                     lambda i: _python('-m', 'attn_jax.report', 'reproduce', i.run(), '--out', i.file())))
  for table, option in (('reproduce', '--out'), ('training', '--save')):
    cells += [_cell(f'report {table} RUN {option} DIR', bad, lambda i, t=table, o=option, where=where: _python(
        '-m', 'attn_jax.report', t, i.run(), o, where(i))) for bad, where in (('read-only', Inputs.read_only),
                                                                             ('disk full', Inputs.full))]
  cells += _file_row('report data FILE', lambda p: _python('-m', 'attn_jax.report', 'data', p))
  cells += _folder_row('report ss-data DIR', lambda p: _python('-m', 'attn_jax.report', 'ss-data', p),
                       lambda i: i.file(GARBAGE, 'statistics.json') and i.dir)
  cells += _folder_row('report study jw_grid --root=DIR', lambda p: _python(
      '-m', 'attn_jax.report', 'study', 'jw_grid', f'--root={p}'), _study_root, expect_empty='runs')
  cells += _folder_row('studies report jw_grid --root=DIR', lambda p: studies('report', p), _study_root,
                       expect_empty='runs')
  cells += [_cell('studies report jw_grid --save DIR', bad, lambda i, where=where: studies(
      'report', _study_root(i, damaged=()), f'--save={where(i)}'))
            for bad, where in (('read-only', Inputs.read_only), ('disk full', Inputs.full))]
  cells += [_cell('studies run jw_grid --root=DIR', 'file ↔ folder', lambda i: _sst(*studies('run', i.file(), *study_arm))),
            _cell('studies run jw_grid --root=DIR', 'damaged', lambda i: _sst(*studies('run', _damaged_record(i), *study_arm)),
                  expect='runs'),
            _cell('studies run jw_grid --root=DIR', 'Ctrl-C', lambda i: _sst(*studies(
                'run', i.missing(), '--only=sst_average_dot', '--seeds=1', '--no-progress')), interrupt_after=25)]
  cells += _folder_row('contents DIR', lambda p: _python('-m', 'attn_jax.contents', p),
                       lambda i: i.run(('config.json', 'eval.json')), expect_empty='runs')
  cells[-1] = _cell('contents DIR', 'damaged', lambda i: _python('-m', 'attn_jax.contents', i.run(('config.json',))),
                    expect='runs')
  vectors = lambda i, *a: _sst(*_python('-m', 'attn_jax.vectors', 'sst', *a))
  cells += [_cell('vectors sst --directory=DIR', 'file ↔ folder', lambda i: vectors(i, f'--directory={i.file()}')),
            _cell('vectors sst --manual_dir=DIR', 'missing path', lambda i: vectors(
                i, f'--manual_dir={i.missing()}', f'--directory={i.folder()}')),
            _cell('vectors sst --manual_dir=DIR', 'empty', lambda i: vectors(
                i, f'--manual_dir={i.folder("data")}', f'--directory={i.folder()}')),
            _cell('vectors sst --directory=DIR', 'Ctrl-C', lambda i: vectors(i, f'--directory={i.folder()}'),
                  interrupt_after=15)]
  cells += _unwritable_row('vectors sst --directory=DIR', lambda p: _sst(*_python(
      '-m', 'attn_jax.vectors', 'sst', f'--directory={p}')))
  cells += _file_row('tests/fault_tool/fault_injection.py report FILE', lambda p: script('tests/fault_tool/fault_injection.py', 'report', p))
  for name, flag in (('jain_wallace_reference', '--jw-repo'), ('wiegreffe_pinter_reference', '--wp-repo'),
                     ('jain_wallace_published_check', '--jw-repo')):
    path = f'benchmarks/original_code/{name}.py'
    cells += _folder_row(f'{path} {flag}=DIR', lambda p, s=path, f=flag: script(s, f'{f}={p}'))
  return cells


CELL_TEXT = {'clear error': 'one line', 'traceback': 'TRACEBACK', 'unclear failure': 'unclear',
             'different results': 'DIFFERENT', 'data lost': 'LOST'}


def table_rows(record: dict) -> list[list[str]]:
  """The matrix of a suite's record: a row per entry point, a column per bad
  input; 'one line' (refused in one line), 'ran' (legitimate input, did its
  work), or what went wrong; '·' where the input does not apply."""
  cells: dict = {}
  for fault in record['faults']:
    for a in fault['attempts']:
      if a['kind'] == KIND and a.get('entry'):
        text = CELL_TEXT.get(a['outcome'], a['outcome'])
        if a['outcome'] == 'survived':
          text = 'one line' if a['bad'] == 'Ctrl-C' else 'ran'
        cells.setdefault(a['entry'], {})[a['bad']] = text
  return [['entry point', *COLUMNS]] + [[f'`{entry}`', *(row.get(c, '·') for c in COLUMNS)]
                                         for entry, row in cells.items()]
