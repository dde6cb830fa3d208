"""The fault-injection suite: faults a run can meet, and what the user gets.

    python tests/fault_tool/fault_injection.py run --out results/fault_injection/faults.json [--quick]
    python tests/fault_tool/fault_injection.py report results/fault_injection/faults.json [--readme docs/reliability.md]

`run` trains and analyses a small synthetic model once (the reference) and
records a fingerprint of its results: the exact arrays of every .npz, every
JSON/JSONL file without timings and paths, the bytes of every figure
(analysis results compare per stage by content, whatever key-named folder
they sit in). Then it injects faults, each at several points: kill -9 at
random moments (seeded) of training, evaluation, each analysis stage and a
model-axis sweep; corrupted (16 bytes flipped), truncated (cut to half) and
deleted files of every kind in a finished workdir; a NaN loss; malformed
SST data files; a full disk (a small tmpfs, then enlarged); a read-only
workdir (and `--output_dir`). After each fault it reruns the same command
and classifies the outcome:

  survived           the rerun succeeded and every result equals the reference
  clear error        non-zero exit with one `error: ...` line, no traceback
  traceback          a Python traceback reached the user
  different results  the rerun succeeded but some result differs
  data lost          a finished result file is missing or unreadable afterwards
  unclear failure    non-zero exit without a one-line error (e.g. a crash)

Checkpoints are not fingerprinted (they are compared through the evaluation
and analyses made from them); after a damaged checkpoint file, a rerun
counts as survived only if the selected model still loads afterwards.

Results are written (atomically, after every case) to --out; `report` prints
the table and rewrites the README block between
`<!-- fault-injection:start -->` and `<!-- fault-injection:end -->`.

Runs share a persistent JAX compilation cache (a speed-up only: the cached
executables are the ones a fresh compile makes), so each run takes seconds.
Mounting (disk full, read-only) needs root; those cases are skipped with a
note otherwise. The full run takes about 45 minutes on 2 CPU cores;
--quick does a handful of cases in about 5. The cases of a paused lease
holder, Ctrl-C and the probe's odd inputs are in `fault_cases.py`; the
entry point × bad input matrix in `fault_matrix.py`.
"""

import argparse
import contextlib
import fnmatch
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(os.path.dirname(HERE)))

import fault_cases  # noqa: E402
import fault_matrix  # noqa: E402
import faults  # noqa: E402
from faults import BASE, Case, SST_DATA, SST_MISSING, run_py  # noqa: E402  (shared with the case modules)

SWEEP = ['--config.sweep=seed=0,1']
SST = ['--config=configs/sst_bilstm.py:smoke', '--config.train.progress=False', '--config.analyses=']
DESCRIPTION = ('config.json', 'vocab.json', 'data.json', 'checksums.json', 'embeddings.json')
GROUPS = {'workdir description': 'config, vocab, data, checksums .json',
          'training results': 'eval.json, metrics.jsonl, predictions, training.json, curves',
          'analysis results': "each stage's results.npz, summary.json, figure"}
# What the next use of a workdir does first: load its selected model.
RESTORE = 'import sys; import attn_jax; attn_jax.restore(sys.argv[1])'
COLUMNS = ('tried', 'survived', 'clear error', 'traceback', 'different results', 'data lost',
           'unclear failure')


class Suite:
  """The scratch folder, the references and the record being written."""

  def __init__(self, scratch: str, seed: int):
    self.scratch, self.rng = scratch, random.Random(seed)
    self.references: dict = {}
    self.mounts: list[str] = []
    self.counter = 0

  def fresh(self, name: str) -> str:
    self.counter += 1
    path = os.path.join(self.scratch, f'{self.counter:03d}-{name}'.replace('/', '_').replace(' ', '_'))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path

  def reference(self, name: str, command_of: Callable[[str], list]) -> dict:
    """{'dir', 'fingerprint', 'lines', 'result'} of one uninterrupted run (made once)."""
    if name not in self.references:
      workdir = os.path.join(self.scratch, 'reference-' + name)
      result, timed = faults.timed_lines(command_of(workdir))
      if result.returncode != 0:
        raise SystemExit(f'the reference run {name} failed (exit {result.returncode}):\n'
                         f'{result.stderr[-3000:]}')
      self.references[name] = {'dir': workdir, 'fingerprint': faults.fingerprint(workdir),
                               'lines': timed, 'result': result}
    return self.references[name]

  def timing(self, name: str, command_of) -> list:
    """(seconds, line) of a second uninterrupted run, compiled code cached:
    the moments the kills aim at (the first run's include compiling)."""
    key = name + ':timing'
    if key not in self.references:
      self.reference(name, command_of)
      workdir = os.path.join(self.scratch, 'timing-' + name)
      result, timed = faults.timed_lines(command_of(workdir))
      outcome, detail = faults.judge(result, self.references[name]['fingerprint'], workdir)
      self.references[key] = {'lines': timed, 'outcome': outcome, 'detail': detail}
    return self.references[key]['lines']

  @contextlib.contextmanager
  def mount(self, *args, target: str):
    subprocess.run(['mount', *args, target], check=True, capture_output=True)
    self.mounts.append(target)
    try:
      yield target
    finally:
      self.unmount(target)

  def unmount(self, target: str) -> None:
    if target in self.mounts:
      if subprocess.run(['umount', target], capture_output=True).returncode != 0:
        subprocess.run(['umount', '-l', target], capture_output=True)
      self.mounts.remove(target)


def can_mount() -> bool:
  return hasattr(os, 'geteuid') and os.geteuid() == 0 and shutil.which('mount') is not None


# ---------------------------------------------------------------- kill -9

AFTER_THE_WORK = ('report', 'contents', 'after the last line')


def phase_label(line: str) -> str:
  """The stretch of a run that ends with this log line."""
  label = faults.line_label(line)
  if label.startswith('epoch') or label.startswith('seed') and 'epoch' in line:
    return 'training'
  if label == 'synthetic':
    return 'start-up and data'
  return label if label in ('workdir', 'evaluation', *AFTER_THE_WORK) or ' ' not in label else 'other'


def phases(timed: list) -> list[tuple[str, int, float]]:
  """(label, lines before it, seconds) of each stretch between two log lines
  in which the run computes something."""
  out, previous = [], 0.0
  for i, (t, line) in enumerate(timed):
    out.append((phase_label(line), i, t - previous))
    previous = t
  return [p for p in out if p[0] not in ('workdir', 'other', *AFTER_THE_WORK)]


def kill_case(kind, name, ref_name, command_of, phase, extra=(), save_every=None) -> Case:
  label, after, _ = phase

  def do(suite: Suite) -> dict:
    duration = next(p[2] for p in phases(suite.timing(ref_name, command_of)) if p[:2] == phase[:2])
    delay = round(suite.rng.uniform(0, 0.9 * duration), 3)
    workdir = suite.fresh(name)
    args = command_of(workdir) + list(extra)
    command = faults.wrapped(args[2:], save_every=save_every) if save_every is not None else args
    killed = faults.run_and_kill(command, after, delay)
    point = f'{label}: {delay:.2f} s after log line {after}'
    timed = suite.timing(ref_name, command_of)
    seen = len(killed.stdout.splitlines())
    landed = phase_label(timed[seen][1]) if seen < len(timed) else 'after the last line'
    if killed.killed_after is None or landed in AFTER_THE_WORK:
      return {'outcome': 'not killed', 'point': point,
              'message': f'aimed at {label}; the run had finished its work before the kill'}
    partial = [os.path.relpath(os.path.join(d, f), workdir)
               for d, _, fs in os.walk(workdir) for f in fs if f == 'partial.npz']
    rerun = faults.run(args)
    outcome, detail = faults.judge(rerun, suite.references[ref_name]['fingerprint'], workdir)
    return {'outcome': outcome, 'message': detail, 'point': point, 'killed_in': landed,
            'killed_after': killed.killed_after, 'partial_files_at_kill': partial,
            'resumed': 'resuming' in rerun.stdout, 'command': ' '.join(args[1:])}

  return Case(kind, name, do)


def kill_cases(suite: Suite, quick: bool) -> list[Case]:
  single = lambda w: run_py(w)
  sweep = lambda w: run_py(w, *SWEEP)
  by_label: dict = {}
  for p in phases(suite.timing('single', single)):
    by_label.setdefault(p[0], []).append(p)
  from attn_jax.stages import stage_runner as stages_lib  # pylint: disable=g-import-not-at-top
  stages = [l for l in by_label if l in stages_lib.STAGES]
  computing = [s for s in stages if s in stages_lib.STAGES and stages_lib.STAGES[s].compute]
  rng = suite.rng
  cases = []
  training = by_label.get('training', [])
  plan = ([('training', rng.choice(training))] if quick else
          [('training', training[i % len(training)]) for i in range(5)]
          + [('evaluation', p) for p in by_label.get('evaluation', [])]
          + [('start-up', p) for p in by_label.get('start-up and data', [])])
  for i, (what, p) in enumerate(plan):
    cases.append(kill_case('kill -9: training and evaluation', f'kill {what} #{i}', 'single', single, p))
  for s in ([rng.choice(stages)] if quick else stages):
    cases.append(kill_case('kill -9: analysis stages', f'kill {s}', 'single', single, by_label[s][0]))
  for s in ([rng.choice(computing)] if quick else rng.sample(computing, min(3, len(computing)))):
    cases.append(kill_case('kill -9: analysis stages, partial results saved every batch',
                           f'kill {s} (partial saves)', 'single', single, by_label[s][0], save_every=0))
  if not quick:
    sweep_phases: dict = {}
    for p in phases(suite.timing('sweep', sweep)):
      sweep_phases.setdefault('training' if p[0] == 'training' else 'analyses' if p[0] in stages
                              else 'other', []).append(p)
    picks = rng.sample(sweep_phases['training'], min(2, len(sweep_phases['training'])))
    picks += rng.sample(sweep_phases['analyses'], min(2, len(sweep_phases['analyses'])))
    for p in picks:
      cases.append(kill_case('kill -9: model-axis sweep (seed=0,1)', f'kill sweep {p[0]}@{p[1]}',
                             'sweep', sweep, p))
  return cases


# ---------------------------------------------------------------- damaged files

def damage_targets(workdir: str) -> list[tuple[str, str]]:
  """(group, relative path) of one file of each kind in a finished workdir."""
  targets = []
  for name in sorted(os.listdir(workdir)):
    if os.path.isfile(os.path.join(workdir, name)) and not name.endswith('.svg'):
      targets.append(('workdir description' if name in DESCRIPTION else 'training results', name))
  analyses = os.path.join(workdir, 'analyses')
  for stage in sorted(os.listdir(analyses)) if os.path.isdir(analyses) else []:
    files = sorted(os.path.relpath(os.path.join(d, f), workdir)
                   for d, _, fs in os.walk(os.path.join(analyses, stage)) for f in fs)
    kinds = {}
    for f in files:
      kind = 'figure' if f.endswith('.png') else os.path.basename(f)
      if not f.endswith('.svg'):
        kinds.setdefault(kind, f)
    targets += [('analysis results', f) for f in kinds.values()]
  for kind in ('best', 'latest'):
    folder = os.path.join(workdir, 'checkpoints', kind)
    files = sorted(os.path.relpath(os.path.join(d, f), workdir)
                   for d, _, fs in os.walk(folder) for f in fs)
    data = [f for f in files if f'{os.sep}d{os.sep}' in f]
    meta = [f for f in files if f not in data and 'commit_success' not in f]
    by_folder: dict = {}  # orbax keeps data in several `d` folders: the largest file of each
    for f in sorted(data, key=lambda f: (len(os.path.dirname(f)), -os.path.getsize(os.path.join(workdir, f)))):
      by_folder.setdefault(os.path.dirname(f), f)
    targets += [(f'checkpoints/{kind}', f) for f in by_folder.values()]
    if meta:
      targets.append((f'checkpoints/{kind}', next((f for f in meta if f.endswith('_CHECKPOINT_METADATA')), meta[0])))
  return targets


def damage_case(group, relpath, how) -> Case:
  def do(suite: Suite) -> dict:
    ref = suite.references['single']
    workdir = suite.fresh(f'{how}-{relpath}')
    shutil.copytree(ref['dir'], workdir)
    faults.damage(os.path.join(workdir, relpath), how)
    result = faults.run(run_py(workdir))
    outcome, detail = faults.judge(result, ref['fingerprint'], workdir)
    if outcome == 'survived' and group.startswith('checkpoints'):
      # Checkpoints are not in the fingerprint: the next use must still load them.
      probe = faults.run([sys.executable, '-c', RESTORE, workdir])
      if probe.returncode != 0:
        outcome, detail = 'data lost', 'the rerun succeeded but left the checkpoint unusable: ' + \
            faults.failure(probe)[1]
    return {'outcome': outcome, 'message': detail, 'file': relpath,
            'command': ' '.join(run_py(workdir)[1:])}
  return Case(f'damaged file (corrupted, truncated, deleted): {GROUPS.get(group, group)}',
              f'{how} {relpath}', do)


def damage_cases(suite: Suite, quick: bool) -> list[Case]:
  ref = suite.reference('single', run_py)
  targets = damage_targets(ref['dir'])
  cases = []
  if quick:
    wanted = {'vocab.json': 'truncated', 'results.npz': 'corrupted', 'summary.json': 'truncated'}
    done = set()
    for group, path in targets:
      base = os.path.basename(path)
      if base in wanted and base not in done:
        done.add(base)
        cases.append(damage_case(group, path, wanted[base]))
    best = [t for t in targets if t[0] == 'checkpoints/best']
    cases += [damage_case(*best[0], 'deleted')] if best else []
    return cases
  rotation = 0
  for group, path in targets:
    if group == 'analysis results':  # many: one damage each, in turn, so each kind meets each damage
      cases.append(damage_case(group, path, faults.DAMAGES[rotation % 3]))
      rotation += 1
    else:
      cases += [damage_case(group, path, how) for how in faults.DAMAGES]
  return cases


def partial_cases(quick: bool) -> list[Case]:
  """partial.npz of a stage killed mid-way (the in-process hook), damaged."""
  def make(how):
    def do(suite: Suite) -> dict:
      ref = suite.references['single']
      from attn_jax.stages import stage_runner as stages_lib  # pylint: disable=g-import-not-at-top
      stage = 'loo' if 'loo' in stages_lib.STAGES else next(iter(stages_lib.STAGES))
      workdir = suite.fresh(f'partial-{how}')
      args = run_py(workdir)
      faults.run(faults.wrapped(args[2:], save_every=0, kill_in=f'{stage}:2'))
      partial = [os.path.join(d, f) for d, _, fs in os.walk(workdir) for f in fs if f == 'partial.npz']
      if not partial:
        return {'outcome': 'not killed', 'message': f'no partial.npz after killing {stage} mid-way'}
      faults.damage(partial[0], how)
      result = faults.run(args)
      outcome, detail = faults.judge(result, ref['fingerprint'], workdir)
      return {'outcome': outcome, 'message': detail, 'file': os.path.relpath(partial[0], workdir),
              'command': ' '.join(args[1:])}
    return Case('damaged file (corrupted, truncated, deleted): partial.npz of a killed stage',
                f'{how} partial.npz', do)
  return [make(how) for how in (('corrupted',) if quick else faults.DAMAGES)]


# ---------------------------------------------------------------- NaN, disk, read-only, data

def nan_case(epoch: int, batch: int) -> Case:
  def do(suite: Suite) -> dict:
    ref = suite.references['single']
    workdir = suite.fresh(f'nan-{epoch}-{batch}')
    args = run_py(workdir)
    first = faults.run(faults.wrapped(args[2:], nan_at=f'{epoch}:{batch}'))
    first_outcome, message = faults.failure(first) if first.returncode else ('no error', '')
    rerun = faults.run(args)
    outcome, detail = faults.judge(rerun, ref['fingerprint'], workdir)
    if first_outcome != 'clear error':  # the NaN run itself must end in one line
      outcome, detail = first_outcome, f'NaN run: {message or "ended without an error"}'
    return {'outcome': outcome, 'message': detail, 'first_error': message,
            'command': ' '.join(args[1:]) + f'  (loss NaN at epoch {epoch}, batch {batch})'}
  return Case('NaN loss in a training step (then rerun)', f'NaN at epoch {epoch} batch {batch}', do)


def _du(path: str) -> int:
  return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def disk_full_case(fraction: float) -> Case:
  def do(suite: Suite) -> dict:
    if not can_mount():
      return {'outcome': 'skipped', 'message': 'mounting a tmpfs needs root'}
    ref = suite.references['single']
    size = max(64, int(_du(ref['dir']) * fraction / 1024))
    mountpoint = suite.fresh(f'disk-full-{fraction}')
    os.makedirs(mountpoint)
    with suite.mount('-t', 'tmpfs', '-o', f'size={size}k', 'tmpfs', target=mountpoint):
      workdir = os.path.join(mountpoint, 'run')
      args = run_py(workdir)
      first = faults.run(args)
      if first.returncode == 0:
        return {'outcome': 'not full', 'message': f'{size} KiB was enough'}
      first_outcome, message = faults.failure(first)
      subprocess.run(['mount', '-o', 'remount,size=512m', mountpoint], check=True, capture_output=True)
      rerun = faults.run(args)
      outcome, detail = faults.judge(rerun, ref['fingerprint'], workdir)
    if first_outcome != 'clear error':
      outcome, detail = first_outcome, f'full disk: {message}'
    return {'outcome': outcome, 'message': detail, 'first_error': message,
            'command': ' '.join(args[1:]) + f'  (tmpfs of {size} KiB, then 512 MiB)'}
  return Case('disk full (tmpfs workdir, then enlarged)', f'disk full at {fraction:.0%}', do)


def read_only_case(variant: str) -> Case:
  """'rerun': a finished workdir read-only, the same command again;
  'output_dir': its analyses missing, analysed into --output_dir elsewhere;
  'no output_dir': the same without --output_dir (should be a clear error)."""
  def do(suite: Suite) -> dict:
    if not can_mount():
      return {'outcome': 'skipped', 'message': 'bind mounts need root'}
    ref = suite.references['single']
    base = suite.fresh(f'read-only-{variant}')
    source, target, out = (os.path.join(base, n) for n in ('source', 'ro', 'out'))
    shutil.copytree(ref['dir'], source)
    if variant != 'rerun':
      shutil.rmtree(os.path.join(source, 'analyses'))
    os.makedirs(target)
    with suite.mount('--bind', source, target=target):
      subprocess.run(['mount', '-o', 'remount,ro,bind', target], check=True, capture_output=True)
      extra = [f'--output_dir={out}'] if variant == 'output_dir' else []
      args = run_py(target, *extra)
      result = faults.run(args)
      if variant == 'output_dir':
        analyses = [k for k in ref['fingerprint'] if k.startswith('analyses/')]
        outcome, detail = faults.judge(result, ref['fingerprint'], out, keys=analyses)
      else:
        outcome, detail = faults.judge(result, ref['fingerprint'], target)
    return {'outcome': outcome, 'message': detail, 'command': ' '.join(args[1:])}
  return Case('read-only workdir', f'read-only workdir: {variant}', do)


def _sst_run(workdir, data_dir, tfds_dir) -> list:
  return [sys.executable, os.path.join(faults.ROOT, 'run.py'), *SST, f'--workdir={workdir}',
          f'--config.data.manual_dir={data_dir}', f'--config.data.tfds_data_dir={tfds_dir}']


def _sst_copy(directory: str) -> str:
  shutil.copytree(SST_DATA, os.path.join(directory, 'sst'))
  return directory


def _malform(path: str, how: str) -> None:
  with open(path, 'rb') as f:
    data = f.read()
  middle = data.index(b'\n', len(data) // 2) + 40  # inside a line, past its start
  if how == 'truncated mid-line':
    data = data[:middle]
  elif how == 'invalid UTF-8':
    data = data[:middle] + b'\xff\xfe\xc3' + data[middle:]
  elif how == 'empty':
    data = b''
  with open(path, 'wb') as f:
    f.write(data)


def data_case(how: str) -> Case:
  def do(suite: Suite) -> dict:
    if not SST_DATA or not os.path.isdir(SST_DATA):
      return {'outcome': 'skipped', 'message': SST_MISSING}

    def reference_command(workdir):
      data = _sst_copy(os.path.join(suite.scratch, 'sst-reference-data'))
      return _sst_run(workdir, data, os.path.join(suite.scratch, 'sst-reference-tfds'))

    ref = suite.reference('sst', reference_command)
    base = suite.fresh(f'data-{how}')
    data = _sst_copy(os.path.join(base, 'data'))
    _malform(os.path.join(data, 'sst', 'train.txt'), how)
    args = _sst_run(os.path.join(base, 'workdir'), data, os.path.join(base, 'tfds'))
    first = faults.run(args)
    if first.returncode == 0 and faults.TRACEBACK not in first.stderr:
      keys = [k for k in ref['fingerprint'] if k != 'checksums.json']
      outcome, detail = faults.judge(first, ref['fingerprint'], os.path.join(base, 'workdir'), keys)
      return {'outcome': outcome, 'message': 'accepted: ' + (detail or 'identical results'),
              'command': ' '.join(args[1:])}
    outcome, message = faults.failure(first)
    shutil.rmtree(os.path.join(data, 'sst'))
    _sst_copy(data)  # the user restores the file and reruns
    rerun = faults.run(args)
    # checksums.json hashes config.json, which names the (other) data folders.
    keys = [k for k in ref['fingerprint'] if k != 'checksums.json']
    after, detail = faults.judge(rerun, ref['fingerprint'], os.path.join(base, 'workdir'), keys)
    return {'outcome': outcome, 'message': message, 'after_fixing_the_file': f'{after} {detail}'.strip(),
            'command': ' '.join(args[1:])}
  return Case('malformed data file (SST train.txt)', f'train.txt {how}', do)


def control_case(name: str, command_of) -> Case:
  def do(suite: Suite) -> dict:
    suite.timing(name, command_of)
    record = suite.references[name + ':timing']
    return {'outcome': record['outcome'], 'message': record['detail'],
            'command': ' '.join(command_of('WORKDIR')[1:])}
  return Case('no fault (a second run in a fresh workdir)', f'control {name}', do)


# ---------------------------------------------------------------- runs that meet

def _together(commands: list, stagger: float = 1.0) -> list:
  """Starts `commands` `stagger` seconds apart; their `faults.Result`s."""
  procs, started = [], time.time()
  for i, command in enumerate(commands):
    if i:
      time.sleep(stagger)
    procs.append(subprocess.Popen(command, cwd=faults.ROOT, env=faults.env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, errors='replace'))
  results = []
  for proc, command in zip(procs, commands):
    out, err = proc.communicate(timeout=1200)
    results.append(faults.Result(list(command), proc.returncode, out, err, time.time() - started))
  return results


def _judge_all(results: list, reference: dict, workdir: str, keys=None) -> tuple[str, str]:
  """The worst outcome of several runs on one workdir, then its results against the reference."""
  for r in results:
    if r.returncode != 0 or faults.TRACEBACK in r.stderr:
      return faults.failure(r)
  return faults.judge(results[-1], reference, workdir, keys)


def _trained_copy(suite: 'Suite', name: str) -> str:
  """A fresh workdir holding the reference's trained model and nothing analysed."""
  workdir = suite.fresh(name)
  trained = suite.reference('trained only', lambda w: run_py(w, '--config.analyses='))['dir']
  shutil.copytree(trained, workdir)
  return workdir


def meeting_case(what: str) -> Case:
  """Two identical runs at once (training, a stage, an experiment, a study
  arm): both finish, one computing and the other reusing; results equal the
  reference's."""
  def do(suite: Suite) -> dict:
    reference = suite.reference('single', run_py)
    if what == 'training':
      workdir = suite.fresh('meet-training')
      results = _together([run_py(workdir), run_py(workdir)])
      keys = None
    elif what == 'a stage':
      workdir = _trained_copy(suite, 'meet-stage')
      results = _together([run_py(workdir, '--config.analyses=loo')] * 2)
      keys = [k for k in reference['fingerprint'] if '/loo/' in k or k.startswith('analyses/loo')]
    elif what == 'an experiment':
      workdir = _trained_copy(suite, 'meet-experiment')
      command = run_py(workdir, '--config.analyses=', '--config.experiments=uniform')
      ref = suite.reference('uniform', lambda w: run_py(w, '--config.analyses=', '--config.experiments=uniform'))
      results = _together([command, command])
      # The copy's description files are the trained-only run's: compare the experiment's results.
      keys = [k for k in ref['fingerprint'] if k.startswith('experiments/')]
      outcome, detail = _judge_all(results, ref['fingerprint'], workdir, keys)
      return {'outcome': outcome, 'message': detail, 'command': ' '.join(command[1:]),
              'waited': any('waiting for' in r.stdout for r in results)}
    else:  # a study arm
      root = suite.fresh('meet-study')
      command = [sys.executable, '-m', 'attn_jax.studies', 'run', 'jw_grid', f'--root={root}',
                 '--only=sst_average_dot', '--seeds=1', '--variant=smoke', '--no-progress']
      results = _together([command, command])
      for r in results:
        if r.returncode != 0 or faults.TRACEBACK in r.stderr:
          outcome, detail = faults.failure(r)
          break
      else:
        trained = sum('already finished' in r.stdout for r in results)
        outcome = 'survived' if trained == 1 else 'different results'
        detail = '' if trained == 1 else f'{2 - trained} of the two runs trained the arm'
      return {'outcome': outcome, 'message': detail, 'command': ' '.join(command[1:])}
    outcome, detail = _judge_all(results, reference['fingerprint'], workdir, keys)
    return {'outcome': outcome, 'message': detail, 'command': ' '.join(results[0].command[1:]),
            'waited': any('waiting for' in r.stdout for r in results)}
  return Case('two identical runs at once (one workdir)', f'both at once: {what}', do)


def killed_holder_case() -> Case:
  """The holder of a training is killed with -9 while a second run waits for
  it: the waiter takes the lease over and resumes from the holder's last
  checkpoint (40 epochs, so the kill lands mid-training, not in a stage)."""
  def do(suite: Suite) -> dict:
    command_of = lambda w: run_py(w, '--config.train.epochs=40')
    reference = suite.reference('forty epochs', command_of)
    workdir = suite.fresh('killed-holder')
    holder = subprocess.Popen(command_of(workdir), cwd=faults.ROOT, env=faults.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace')
    for line in holder.stdout:
      if line.startswith('epoch 1 of 40: train loss'):  # a checkpoint exists: the epoch's end saved it
        break
    waiter = subprocess.Popen(command_of(workdir), cwd=faults.ROOT, env=faults.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, errors='replace')
    seen = []
    for line in waiter.stdout:
      seen.append(line)
      if 'waiting for' in line:
        break
    holder.kill()
    holder.wait()
    out, err = waiter.communicate(timeout=1200)
    out = ''.join(seen) + out
    result = faults.Result(command_of(workdir), waiter.returncode, out, err, 0.0)
    outcome, detail = faults.judge(result, reference['fingerprint'], workdir)
    return {'outcome': outcome, 'message': detail, 'waited': any('waiting for' in l for l in seen),
            'took_over': 'taking it over' in out, 'resumed': 'resuming' in out}
  return Case('a lease holder killed with -9 while another run waits', 'kill -9 the training holder', do)


def stale_lock_case(fresh: bool) -> Case:
  """A lock file left by another host: taken over once silent; while fresh,
  `wait_for_lock=False` refuses in one line."""
  def do(suite: Suite) -> dict:
    reference = suite.reference('single', run_py)
    workdir = suite.fresh('foreign-lock')
    os.makedirs(workdir, exist_ok=True)
    lock = os.path.join(workdir, 'training.lease')
    with open(lock, 'w') as f:
      json.dump({'what': 'training', 'host': 'lost-host.example', 'pid': 4242,
                 'started': time.time() - 3600, 'token': 'foreign'}, f)
    if fresh:
      result = faults.run(run_py(workdir, '--config.wait_for_lock=False'))
      if result.returncode == 0:
        return {'outcome': 'different results', 'message': 'ran although another host holds the lease'}
      outcome, detail = faults.failure(result)
      return {'outcome': outcome, 'message': detail}
    old = time.time() - 3600
    os.utime(lock, (old, old))  # no heartbeat for an hour: a lost host
    result = faults.run(run_py(workdir))
    outcome, detail = faults.judge(result, reference['fingerprint'], workdir)
    return {'outcome': outcome, 'message': detail, 'took_over': 'taking it over' in result.stdout}
  return Case('a lock file left by another host', 'lock of another host, ' +
              ('fresh, run with wait_for_lock=False' if fresh else 'silent for an hour'), do)


def parallel_stages_case() -> Case:
  """Two different stages of one trained model at once: both finish, and
  their results equal the reference's (a sequential run)."""
  def do(suite: Suite) -> dict:
    reference = suite.reference('single', run_py)
    workdir = _trained_copy(suite, 'parallel-stages')
    results = _together([run_py(workdir, '--config.analyses=loo'),
                         run_py(workdir, '--config.analyses=permutation')])
    keys = [k for k in reference['fingerprint'] if any(f'/{s}/' in k or k.startswith(f'analyses/{s}')
                                                       for s in ('loo', 'permutation'))]
    outcome, detail = _judge_all(results, reference['fingerprint'], workdir, keys)
    return {'outcome': outcome, 'message': detail}
  return Case('two different stages of one model at once', 'loo and permutation at once', do)


# ---------------------------------------------------------------- edges of leases, reports, repairs

def _sst_keys(ref: dict) -> list:
  # checksums.json hashes config.json, which names the (other) data folders.
  return [k for k in ref['fingerprint'] if k != 'checksums.json']


def concurrent_preparation_case() -> Case:
  """Two first runs with an empty tfds data dir, one second apart: one
  prepares SST, the other waits for its lease and reads that copy."""
  def do(suite: Suite) -> dict:
    if not SST_DATA or not os.path.isdir(SST_DATA):
      return {'outcome': 'skipped', 'message': SST_MISSING}
    ref = suite.reference('sst', lambda w: _sst_run(w, _sst_copy(os.path.join(suite.scratch, 'sst-reference-data')),
                                                     os.path.join(suite.scratch, 'sst-reference-tfds')))
    base = suite.fresh('prepare-at-once')
    data, tfds = _sst_copy(os.path.join(base, 'data')), os.path.join(base, 'tfds')
    workdirs = [os.path.join(base, f'workdir{i}') for i in (1, 2)]
    results = _together([_sst_run(w, data, tfds) for w in workdirs])
    for result, workdir in zip(results, workdirs):
      outcome, detail = _judge_all([result], ref['fingerprint'], workdir, _sst_keys(ref))
      if outcome != 'survived':
        break
    leftovers = [n for n in os.listdir(tfds) if n.startswith('.attn_jax-preparing-')]
    if outcome == 'survived' and leftovers:
      outcome, detail = 'different results', f'left in the tfds data dir: {leftovers}'
    return {'outcome': outcome, 'message': detail, 'command': ' '.join(results[0].command[1:]) + '  (twice)',
            'waited': any('waiting for' in r.stdout for r in results)}
  return Case('two first runs preparing one dataset (fresh tfds data dir)', 'SST prepared by two runs at once', do)


def _odd_lock(path: str, what: str) -> None:
  """Writes lock file `path` as `what` says, aged as such a file would be."""
  here = {'what': 'training', 'host': socket.gethostname(), 'started': time.time(), 'token': 'odd'}
  records = {'empty': ('', 60), 'garbage': ('\x00garbage{', 60),
             'pid abc': (json.dumps({**here, 'pid': 'abc'}), 600),
             'no pid': (json.dumps(here), 600),
             'a reused pid (pid 1, lease older than it)': (json.dumps({**here, 'pid': 1, 'started': 1000.0}), 0),
             'a live pid, no heartbeat for an hour': (json.dumps({**here, 'pid': os.getpid()}), 3600)}
  text, age = records[what]
  with open(path, 'w') as f:
    f.write(text)
  old = time.time() - age
  os.utime(path, (old, old))


ODD_LOCKS = ('empty', 'garbage', 'pid abc', 'no pid', 'a reused pid (pid 1, lease older than it)',
             'a live pid, no heartbeat for an hour')


def odd_lock_case(what: str) -> Case:
  """A training lease that holds something odd: `contents` reads it without
  a traceback, and a run takes it over (never waits forever)."""
  def do(suite: Suite) -> dict:
    reference = suite.reference('single', run_py)
    workdir = suite.fresh('odd-lock')
    os.makedirs(workdir)
    _odd_lock(os.path.join(workdir, 'training.lease'), what)
    contents = faults.run([sys.executable, '-m', 'attn_jax.contents', workdir], timeout=120)
    if faults.TRACEBACK in contents.stderr:
      return {'outcome': 'traceback', 'message': 'contents: ' + faults.failure(contents)[1]}
    result = faults.run(run_py(workdir), timeout=240)  # the run itself takes about 10 s
    outcome, detail = faults.judge(result, reference['fingerprint'], workdir)
    return {'outcome': outcome, 'message': detail, 'took_over': 'taking it over' in result.stdout,
            'contents': next((l.strip() for l in contents.stdout.splitlines() if 'in progress' in l), '')}
  return Case('a lock file with odd contents', f'training lease: {what}', do)


def full_disk_lease_case() -> Case:
  """A full disk when a rerun creates its training lease: one line, no
  empty lease left; once space is freed the next run goes on at once."""
  def do(suite: Suite) -> dict:
    if not can_mount():
      return {'outcome': 'skipped', 'message': 'mounting a tmpfs needs root'}
    ref = suite.references['single']
    mountpoint = suite.fresh('lease-disk-full')
    os.makedirs(mountpoint)
    size = _du(ref['dir']) // 1024 + 1024
    with suite.mount('-t', 'tmpfs', '-o', f'size={size}k', 'tmpfs', target=mountpoint):
      workdir = os.path.join(mountpoint, 'run')
      shutil.copytree(ref['dir'], workdir)
      shutil.rmtree(os.path.join(workdir, 'analyses'))  # the rerun has work to do
      filler = os.path.join(mountpoint, 'filler')
      fd = os.open(filler, os.O_CREAT | os.O_WRONLY)
      with contextlib.suppress(OSError):
        while True:  # unbuffered: every byte that fits is written, the rest fails here
          os.write(fd, b'\0' * 4096)
      os.close(fd)
      args = run_py(workdir, '--config.wait_for_lock=False')  # a left lease would refuse at once
      first = faults.run(args)
      first_outcome, message = faults.failure(first) if first.returncode else ('not full', '')
      left = [p for p, _ in _leases_under(workdir)]
      os.remove(filler)  # the user frees space
      rerun = faults.run(args, timeout=240)
      outcome, detail = faults.judge(rerun, ref['fingerprint'], workdir)
    if first_outcome != 'clear error':
      outcome, detail = first_outcome, f'full disk: {message}'
    elif left and outcome == 'survived':
      outcome, detail = 'different results', f'the failed run left {left}'
    return {'outcome': outcome, 'message': detail, 'first_error': message,
            'command': ' '.join(args[1:]) + f'  (tmpfs of {size} KiB filled, then the filler removed)'}
  return Case('disk full when a lease is created', 'full disk at the training lease', do)


def _leases_under(root: str) -> list:
  return [(os.path.join(d, n), None) for d, _, names in os.walk(root) for n in names if n.endswith('.lease')]


REPORTS = ('training', 'analyses', 'meister')


def report_case(state: str) -> Case:
  """`report training|analyses|meister` on a run with nothing to report:
  one line each; after the fix (the run finished), the report works."""
  def do(suite: Suite) -> dict:
    ref = suite.references['single']
    workdir = suite.fresh(f'report-{state}')
    if state != 'a path that does not exist':
      shutil.copytree(ref['dir'], workdir)
      if state == 'eval.json deleted':
        os.remove(os.path.join(workdir, 'eval.json'))
      else:  # still training: a live holder of its training lease
        with open(os.path.join(workdir, 'training.lease'), 'w') as f:
          json.dump({'what': 'training', 'host': socket.gethostname(), 'pid': os.getpid(),
                     'started': time.time(), 'token': 'live'}, f)
        os.remove(os.path.join(workdir, 'eval.json'))
    outcomes = []
    for command in REPORTS:
      result = faults.run([sys.executable, '-m', 'attn_jax.report', command, workdir], timeout=300)
      outcomes.append(faults.failure(result) if result.returncode else ('no error', result.stdout[-200:]))
    worst = next((o for o in outcomes if o[0] != 'clear error'), outcomes[0])
    after = ''
    if state != 'a path that does not exist' and worst[0] == 'clear error':
      with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(workdir, 'training.lease'))  # the holder finished
      rerun = faults.run(run_py(workdir))
      outcome, detail = faults.judge(rerun, ref['fingerprint'], workdir)
      reports = [faults.run([sys.executable, '-m', 'attn_jax.report', c, workdir], timeout=300) for c in REPORTS]
      bad = [r for r in reports if r.returncode or faults.TRACEBACK in r.stderr]
      after = f'{outcome} {detail}'.strip() + ('; reports work' if not bad else f'; {len(bad)} reports still fail')
      if outcome != 'survived' or bad:
        worst = (outcome if outcome != 'survived' else 'unclear failure', after)
    return {'outcome': worst[0], 'message': worst[1], 'after_the_fix': after,
            'command': f'python -m attn_jax.report {{{",".join(REPORTS)}}} WORKDIR'}
  return Case('a report on a run with nothing to report', f'report on {state}', do)


def config_repair_case(name: str) -> Case:
  """A damaged config.json (or checksums.json) and a rerun with other
  analysis settings: repaired, since the training part matches."""
  def do(suite: Suite) -> dict:
    ref = suite.references['single']
    workdir = suite.fresh(f'repair-{name}')
    shutil.copytree(ref['dir'], workdir)
    with open(os.path.join(workdir, name), 'r+b') as f:
      f.truncate(30)
    args = run_py(workdir, '--config.analysis.max_docs=20')
    result = faults.run(args)
    trained = [k for k in ref['fingerprint'] if not k.startswith('analyses/')
               and k not in ('config.json', 'checksums.json')]
    outcome, detail = faults.judge(result, ref['fingerprint'], workdir, trained)
    if outcome == 'survived' and 'was damaged' not in result.stdout:
      outcome, detail = 'unclear failure', f'{name} was not said to be repaired'
    return {'outcome': outcome, 'message': detail, 'command': f'truncate -s 30 WORKDIR/{name}; ' + ' '.join(args[1:])}
  return Case('a damaged config.json or checksums.json, rerun with other analysis settings',
              f'{name} truncated, rerun with analysis.max_docs=20', do)


def edge_cases(quick: bool) -> list[Case]:
  if quick:
    return [odd_lock_case('empty'), report_case('eval.json deleted'), config_repair_case('config.json')]
  return ([concurrent_preparation_case(), full_disk_lease_case()] + [odd_lock_case(w) for w in ODD_LOCKS]
          + [report_case(s) for s in ('a path that does not exist', 'eval.json deleted', 'a run still training')]
          + [config_repair_case(n) for n in ('config.json', 'checksums.json')])


def meeting_cases(quick: bool) -> list[Case]:
  if quick:
    return [meeting_case('training'), parallel_stages_case()]
  return [meeting_case(w) for w in ('training', 'a stage', 'an experiment', 'a study arm')] + [
      killed_holder_case(), *fault_cases.paused_holder_cases(), stale_lock_case(False), stale_lock_case(True),
      parallel_stages_case()]


def all_cases(suite: Suite, quick: bool) -> list[Case]:
  cases = [control_case('single', run_py)]
  if not quick:
    cases.append(control_case('sweep', lambda w: run_py(w, *SWEEP)))
  cases += kill_cases(suite, quick)
  cases += damage_cases(suite, quick)
  cases += partial_cases(quick)
  cases += [nan_case(1, 6)] if quick else [nan_case(0, 1), nan_case(0, 5), nan_case(1, 2), nan_case(1, 7)]
  cases += [disk_full_case(f) for f in ((0.5,) if quick else (0.1, 0.3, 0.6, 0.9))]
  cases += [read_only_case(v) for v in (('rerun', 'output_dir') if quick else
                                       ('rerun', 'output_dir', 'no output_dir'))]
  cases += [data_case(h) for h in (('empty',) if quick else ('truncated mid-line', 'invalid UTF-8', 'empty'))]
  cases += meeting_cases(quick)
  cases += edge_cases(quick)
  cases += [fault_cases.interrupt_case(e) for e in ((3,) if quick else (1, 12, 30))]
  if not quick:
    cases += fault_cases.odd_input_cases() + fault_matrix.matrix_cases()
  return cases


# ---------------------------------------------------------------- record

def _minutes(seconds: float) -> str:
  return f'{int(seconds // 60)}m{int(seconds % 60):02d}s'


def tally(attempts: list[dict]) -> list[dict]:
  """Per fault kind, in the order first tried: the count of each outcome,
  the distinct one-line errors, and every attempt."""
  kinds: dict = {}
  for a in attempts:
    k = kinds.setdefault(a['kind'], {'fault': a['kind'], **{c: 0 for c in COLUMNS}, 'seconds': 0.0,
                                     'messages': [], 'first errors': [], 'not counted': [],
                                     'attempts': []})
    k['attempts'].append(a)
    k['seconds'] = round(k['seconds'] + a['seconds'], 1)
    if a['outcome'] in faults.OUTCOMES:
      k['tried'] += 1
      k[a['outcome']] += 1
      if a['outcome'] == 'clear error' and a['message'] not in k['messages']:
        k['messages'].append(a['message'])
      if a.get('first_error') and a['first_error'] not in k['first errors']:
        k['first errors'].append(a['first_error'])
    else:
      k['not counted'].append(f'{a["name"]}: {a["outcome"]} ({a.get("message", "")})')
  return list(kinds.values())


def _scrub(value, scratch: str):
  """Scratch paths shortened to <tmp> (they differ per run and say nothing)."""
  if isinstance(value, dict):
    return {k: _scrub(v, scratch) for k, v in value.items()}
  if isinstance(value, list):
    return [_scrub(v, scratch) for v in value]
  return value.replace(scratch, '<tmp>') if isinstance(value, str) else value


def write(path: str, record: dict) -> None:
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  record = {**record, 'faults': tally(record['attempts'])}
  atomic_io.write_json(path, {k: v for k, v in record.items() if k != 'attempts'})


def run(args) -> None:
  started = time.time()
  scratch = tempfile.mkdtemp(prefix='fault-injection-', dir=args.scratch)
  cache = os.path.join(scratch, 'jax-cache')
  os.environ.update(JAX_COMPILATION_CACHE_DIR=cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS='0',
                    JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES='0')
  suite = Suite(scratch, args.seed)
  command = 'python tests/fault_tool/fault_injection.py run' + (' --quick' if args.quick else '') + f' --seed {args.seed}'
  record = {'command': command, 'config': f'python run.py {" ".join(BASE)} (synthetic smoke: train '
            f'64, test 48 documents, all analyses); sweeps add {" ".join(SWEEP)}; data faults use '
            f'{" ".join(SST)}', 'quick': args.quick, 'seed': args.seed,
            'studies': 'not run: the studies train real-data arms (SST, 5 seeds, full splits); the '
            'experiment killed here is a model-axis sweep of the synthetic config',
            'started': time.strftime('%Y-%m-%d %H:%M:%S'), 'attempts': []}
  try:
    print('fault injection: reference run (compiles, then cached)...', file=sys.stderr)
    suite.reference('single', run_py)
    record['reference_seconds'] = round(suite.references['single']['result'].seconds, 1)
    cases = all_cases(suite, args.quick)
    if args.only:  # these cases again; the record keeps the other cases' last outcomes
      patterns = [p.strip() for p in args.only.split(',') if p.strip()]
      # a pattern names a kind, or one case as 'kind | name' (e.g. '*| *Ctrl-C')
      chosen = lambda kind, name: any(fnmatch.fnmatch(kind, p) or fnmatch.fnmatch(f'{kind} | {name}', p)
                                      for p in patterns)
      cases = [c for c in cases if chosen(c.kind, c.name)]
      if os.path.exists(args.out):
        earlier = json_of(args.out)
        record['attempts'] = [a for f in earlier['faults'] for a in f['attempts']
                              if not chosen(a['kind'], a.get('name', ''))]
        record['command'] = f'{earlier["command"]}; then {command} --only=\'{args.only}\''
        record['earlier_wall_seconds'] = earlier.get('wall_seconds', 0) + earlier.get('earlier_wall_seconds', 0)
    budget = args.budget_minutes * 60
    cases_started = time.time()
    for n, case in enumerate(cases, 1):
      elapsed = time.time() - started
      done = n - 1
      left = (time.time() - cases_started) / done * (len(cases) - done) if done else 0
      print(f'[{n}/{len(cases)}] {case.kind} | {case.name} (elapsed {_minutes(elapsed)}'
            + (f', ~{_minutes(left)} left)' if done else ')'), file=sys.stderr)
      t = time.time()
      if elapsed > budget:
        outcome = {'outcome': 'not run', 'message': f'time budget of {args.budget_minutes} min spent'}
      else:
        try:
          outcome = case.do(suite)
        except Exception as e:  # pylint: disable=broad-except  (a harness bug must not lose the record)
          outcome = {'outcome': 'harness error', 'message': f'{type(e).__name__}: {e}'}
      attempt = _scrub({'kind': case.kind, 'name': case.name, 'seconds': round(time.time() - t, 1),
                        **outcome}, scratch)
      record['attempts'].append(attempt)
      print(f'    -> {attempt["outcome"]}' + (f': {attempt["message"][:160]}' if attempt.get('message') else ''),
            file=sys.stderr)
      record['wall_seconds'] = round(time.time() - started, 1)
      write(args.out, record)
  finally:
    for target in list(reversed(suite.mounts)):
      suite.unmount(target)
    if not args.keep:
      shutil.rmtree(scratch, ignore_errors=True)
  print(plain_table(table_rows(json_of(args.out))))


# ---------------------------------------------------------------- report

def json_of(path: str) -> dict:
  """A suite's record; one line when `path` is not one."""
  try:
    with open(path) as f:
      record = json.load(f)
  except (OSError, ValueError) as e:
    sys.exit(f'error: cannot read {path} ({type(e).__name__}: {e.strerror if isinstance(e, OSError) else e}): '
             'give the .json that `fault_injection.py run --out` wrote')
  if not isinstance(record, dict) or 'faults' not in record:
    sys.exit(f'error: {path} is not a fault-injection record (no "faults"): give the .json that '
             '`fault_injection.py run --out` wrote')
  return record


def _short(text: str, n: int = 110) -> str:
  text = text.replace('|', '/').replace('\n', ' ')
  return text if len(text) <= n else text[:n - 1] + '…'


def table_rows(record: dict) -> list[list[str]]:
  rows = [['fault', 'tried', 'survived, identical results', 'clear one-line error', 'data lost', 'notes']]
  for k in record['faults']:
    kind = k['fault']
    notes = []
    for outcome in ('traceback', 'different results', 'unclear failure'):
      if k[outcome]:
        names = [a['name'] for a in k['attempts'] if a['outcome'] == outcome]
        notes.append(f'{k[outcome]} {outcome}: ' + ', '.join(names[:3]) + (' …' if len(names) > 3 else ''))
    notes += [f'"{_short(m)}"' for m in k['messages'][:2]]
    notes += [f'first run: "{_short(m)}"' for m in k['first errors'][:1]]
    if len(k['messages']) > 2:
      notes.append(f'+{len(k["messages"]) - 2} other messages')
    if k['data lost']:
      notes.append('lost: ' + ', '.join(a['name'] for a in k['attempts'] if a['outcome'] == 'data lost'))
    if k['not counted']:
      notes.append(f'{len(k["not counted"])} not counted ({_short(k["not counted"][0], 60)})')
    rows.append([kind, str(k['tried']), str(k['survived']), str(k['clear error']), str(k['data lost']),
                 '; '.join(notes)])
  return rows


def plain_table(rows) -> str:
  from attn_jax.tables import common as report  # pylint: disable=g-import-not-at-top
  return report.plain(rows)


def report_command(args) -> None:
  from attn_jax.tables import common as report  # pylint: disable=g-import-not-at-top
  record = json_of(args.json)
  rows = table_rows(record)
  print(report.plain(rows))
  if len(fault_matrix.table_rows(record)) > 1:
    print('\n' + report.plain(fault_matrix.table_rows(record)))
  total = record.get('wall_seconds', 0) + record.get('earlier_wall_seconds', 0)
  print(f'\n{record["command"]}: {_minutes(total)} wall time in all')
  if args.readme:
    try:
      report.write_block(args.readme, 'fault-injection', report.markdown(rows),
                          f'python tests/fault_tool/fault_injection.py report {args.json}', [args.json])
      matrix = fault_matrix.table_rows(record)
      if len(matrix) > 1:
        report.write_block(args.readme, 'fault-matrix', report.markdown(matrix),
                            f'python tests/fault_tool/fault_injection.py report {args.json}', [args.json])
    except ValueError:  # str.index: a marker is missing
      sys.exit(f'error: {args.readme} lacks the <!-- fault-injection:start/end --> or '
               '<!-- fault-matrix:start/end --> markers; add them where the tables should go')


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description='Fault injection (see the module docstring).')
  sub = parser.add_subparsers(dest='action', required=True)
  r = sub.add_parser('run', help='inject the faults and record the outcomes')
  r.add_argument('--out', default='results/fault_injection/faults.json')
  r.add_argument('--quick', action='store_true', help='a handful of cases (a smoke check)')
  r.add_argument('--seed', type=int, default=0, help='seed of the kill points and damaged files')
  r.add_argument('--budget-minutes', type=float, default=40,
                 help='cases left when this is spent are recorded as not run')
  r.add_argument('--scratch', default=None, help='where the workdirs go (default: the temp folder)')
  r.add_argument('--keep', action='store_true', help='keep the scratch workdirs')
  r.add_argument('--only', default=None,
                 help="comma-separated glob patterns of fault kinds, or of one case as 'kind | name' "
                 "(e.g. 'entry point*| *Ctrl-C'), to run again; the others keep their outcomes from --out")
  p = sub.add_parser('report', help='print the table; --readme rewrites its README block')
  p.add_argument('json')
  p.add_argument('--readme', default=None)
  args = parser.parse_args(argv)
  os.chdir(faults.ROOT)
  if args.action == 'run':
    run(args)
  else:
    report_command(args)


if __name__ == '__main__':
  main()
