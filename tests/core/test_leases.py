"""Leases on what a run writes: acquisition, waiting, refusing, stale-holder
takeover, with real processes; and two runs on one workdir at once."""

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import helpers

from attn_jax.core import leases

pytestmark = pytest.mark.slow  # a minute or more: scheduled first (conftest)

ROOT = helpers.ROOT


def hold_in_another_process(path: str, seconds: float) -> subprocess.Popen:
  """A python process that takes the lease at `path`, says so, holds it `seconds`."""
  code = textwrap.dedent(f'''
      import sys, time
      from attn_jax.core import leases
      with leases.lease({path!r}, 'a test', log=lambda _: None):
        print('held', flush=True)
        time.sleep({seconds})
  ''')
  proc = subprocess.Popen([sys.executable, '-c', code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
  assert proc.stdout.readline().strip() == 'held'
  return proc


def test_a_lease_is_held_then_released(tmp_path):
  path = str(tmp_path / 'x' / 'training.lease')
  with leases.lease(path, 'training', log=lambda _: None) as record:
    holder = leases.read_holder(path)
    assert holder['pid'] == os.getpid() and holder['token'] == record['token']
    assert holder['host'] == socket.gethostname()
    assert leases.held(str(tmp_path)) == [(path, holder)]
  assert not os.path.exists(path) and leases.held(str(tmp_path)) == []


def test_a_second_process_waits_for_the_holder(tmp_path):
  path = str(tmp_path / 'stage.lease')
  holder = hold_in_another_process(path, 1.5)
  said = []
  started = time.time()
  with leases.lease(path, 'stage loo', log=said.append, poll=0.05):
    waited = time.time() - started
  holder.wait(timeout=30)
  assert waited >= 0.5
  assert said[0].startswith(f'stage loo: waiting for host {socket.gethostname()}, pid {holder.pid}')
  assert 'is done after' in said[-1]


def test_without_waiting_it_refuses_naming_the_holder(tmp_path):
  path = str(tmp_path / 'training.lease')
  holder = hold_in_another_process(path, 5)
  try:
    with pytest.raises(leases.LeaseHeld, match=f'pid {holder.pid}.*wait_for_lock=True'):
      with leases.lease(path, 'training in W', wait=False):
        pass
  finally:
    holder.kill()
    holder.wait()


def test_a_holder_killed_with_sigkill_is_taken_over(tmp_path):
  path = str(tmp_path / 'training.lease')
  holder = hold_in_another_process(path, 60)
  holder.kill()  # SIGKILL: no cleanup, the lock file stays
  holder.wait()
  assert os.path.exists(path)
  said = []
  with leases.lease(path, 'training', log=said.append, poll=0.05) as record:
    assert leases.read_holder(path)['token'] == record['token']
  assert 'stale' in said[0] and f'pid {holder.pid}' in said[0]



def test_clear_stale_removes_a_dead_holders_lock_and_leaves_a_live_ones(tmp_path):
  dead, live = str(tmp_path / 'dead.lease'), str(tmp_path / 'live.lease')
  holder = hold_in_another_process(dead, 60)
  holder.kill()
  holder.wait()
  said = []
  leases.clear_stale(dead, 'stage kendall (w)', said.append)
  assert not os.path.exists(dead)
  assert said == [f'stage kendall (w): removed the lease left by {said[0].split("left by ")[1].split(" (")[0]} '
                  '(its process is gone); its work is finished'] and f'pid {holder.pid}' in said[0]
  with leases.lease(live, 'a live one', log=lambda _: None):
    leases.clear_stale(live, 'a live one', said.append)
    assert os.path.exists(live) and len(said) == 1
  leases.clear_stale(str(tmp_path / 'absent.lease'), 'nothing', said.append)  # no file: nothing said
  assert len(said) == 1


@pytest.mark.heavy
def test_a_finished_stage_drops_the_lease_a_killed_holder_left(tmp_path):
  """kill -9 after a stage's summary and before its release leaves its lock
  file; the rerun finds the results verified and removes it, so nothing reads
  the stage as in progress (the fault suite found one such file)."""
  workdir = tmp_path / 'w'
  first = _run_py(workdir, '--config.analyses=loo', '--config.analysis.max_docs=4')
  assert first.wait(timeout=600) == 0, first.stderr.read()[-2000:]
  folder, = (workdir / 'analyses' / 'loo').glob('*/summary.json')
  holder = hold_in_another_process(str(folder.parent / 'stage.lease'), 60)
  holder.kill()
  holder.wait()
  again = _run_py(workdir, '--config.analyses=loo', '--config.analysis.max_docs=4')
  out, err = again.communicate(timeout=600)
  assert again.returncode == 0, err[-2000:]
  assert 'removed the lease left by' in out + err and 'its process is gone' in out + err
  assert not list(workdir.glob('**/*.lease'))

def test_another_hosts_lock_is_stale_only_once_silent(tmp_path):
  path = str(tmp_path / 'training.lease')
  with open(path, 'w') as f:
    json.dump({'what': 'x', 'host': 'elsewhere.example', 'pid': 1, 'started': time.time(), 'token': 't'}, f)
  assert not leases.is_stale(path, leases.read_holder(path), stale_after=60)  # it may still run
  with pytest.raises(leases.LeaseHeld, match='host elsewhere.example'):
    with leases.lease(path, 'training', wait=False, stale_after=60):
      pass
  old = time.time() - 120
  os.utime(path, (old, old))  # no heartbeat for 2 minutes: a lost host
  said = []
  with leases.lease(path, 'training', log=said.append, stale_after=60):
    assert leases.read_holder(path)['host'] == socket.gethostname()
  assert 'stale' in said[0]



@pytest.mark.parametrize('touched', [3600.0, 120.0])
def test_a_lock_touched_in_this_hosts_future_is_judged_by_its_silence_not_waited_for_forever(tmp_path, touched):
  """A holder whose clock runs ahead (another host; this one set back) writes
  heartbeats in this host's future: its age never grows past the takeover
  time, so it is judged by how long its time stands still as this host
  watches it."""
  path = str(tmp_path / 'training.lease')
  with open(path, 'w') as f:
    json.dump({'what': 'x', 'host': 'elsewhere.example', 'pid': 1, 'started': time.time(), 'token': 't'}, f)
  ahead = time.time() + touched
  os.utime(path, (ahead, ahead))
  said, done = [], []

  def take():
    with leases.lease(path, 'training', log=said.append, stale_after=1.5, poll=0.05):
      done.append(leases.read_holder(path)['host'])

  waiter = threading.Thread(target=take, daemon=True)
  waiter.start()
  waiter.join(timeout=60)  # bounded: the silence decides, not the clocks
  assert done == [socket.gethostname()]
  assert 'in this host\'s future' in said[0] and 'taken over if it stays silent for 2 s' in said[0]
  assert any('stale (no heartbeat for 2 s as this host watched it; its time was' in line for line in said), said


def test_a_lock_in_the_future_that_keeps_beating_is_not_taken_over(tmp_path):
  path = str(tmp_path / 'training.lease')
  with open(path, 'w') as f:
    json.dump({'what': 'x', 'host': 'elsewhere.example', 'pid': 1, 'started': time.time(), 'token': 't'}, f)
  stop = threading.Event()

  def beat():  # a live holder with a clock an hour ahead
    while not stop.is_set():
      ahead = time.time() + 3600
      os.utime(path, (ahead, ahead))
      stop.wait(0.2)

  beater = threading.Thread(target=beat, daemon=True)
  beater.start()
  try:
    with pytest.raises(leases.LeaseHeld):
      with leases.lease(path, 'training', wait=False, stale_after=1.5):
        pass
    said = []
    waiter = threading.Thread(target=lambda: leases.lease(path, 'training', log=said.append, stale_after=1.5,
                                                          poll=0.05).__enter__(), daemon=True)
    waiter.start()
    waiter.join(timeout=4)  # more than twice the takeover time of beats: still waiting
    assert waiter.is_alive() and leases.read_holder(path)['host'] == 'elsewhere.example'
  finally:
    stop.set()
    os.remove(path)  # the holder is done: the waiter takes the lease and its thread ends
    waiter.join(timeout=10)


@pytest.mark.parametrize('value', ['0', '-5', '0.5', 'nan', 'inf', 'soon'])
def test_a_takeover_time_that_would_evict_live_holders_is_refused_in_one_line(monkeypatch, value):
  monkeypatch.setenv('ATTN_JAX_LEASE_STALE_AFTER', value)
  with pytest.raises(leases.ConfigError) as raised:
    leases.stale_after_seconds()
  message = str(raised.value)
  assert '\n' not in message and f'ATTN_JAX_LEASE_STALE_AFTER={value!r}' in message and '>= 1' in message
  from attn_jax import pipeline  # pylint: disable=g-import-not-at-top
  with pytest.raises(leases.ConfigError):  # a run refuses before any work
    pipeline.check(helpers.synthetic_config())
  monkeypatch.setenv('ATTN_JAX_LEASE_STALE_AFTER', '2')
  assert leases.stale_after_seconds() == 2.0
  monkeypatch.delenv('ATTN_JAX_LEASE_STALE_AFTER')
  assert leases.stale_after_seconds() == leases.STALE_AFTER

def _lock(path, text: str, age: float = 0.0) -> None:
  with open(path, 'w') as f:
    f.write(text)
  then = time.time() - age
  os.utime(path, (then, then))


@pytest.mark.parametrize('text', ['', '{"host": "x"', 'garbage', '[1, 2]', 'null'])
def test_a_lock_file_without_a_readable_record_is_stale_after_seconds_not_minutes(tmp_path, text):
  path = str(tmp_path / 'training.lease')
  _lock(path, text)
  assert not leases.is_stale(path, leases.read_holder(path))  # a writer may be between create and write
  _lock(path, text, age=leases.UNREADABLE_AFTER + 1)
  assert 'no readable record' in leases.stale_reason(path, leases.read_holder(path))
  said = []
  with leases.lease(path, 'training', log=said.append, poll=0.01):
    pass
  assert len(said) == 1 and 'taking it over' in said[0]


def this_host(**fields) -> str:
  return json.dumps({'what': 'x', 'host': socket.gethostname(), 'started': time.time(), 'token': 't', **fields})


@pytest.mark.parametrize('pid', [None, 'abc', -1, 0, 1.5, True])
def test_a_same_host_lock_without_a_usable_pid_goes_stale_with_its_heartbeat(tmp_path, pid):
  path = str(tmp_path / 'training.lease')
  fields = {} if pid is None else {'pid': pid}
  _lock(path, this_host(**fields))
  assert leases.stale_reason(path, leases.read_holder(path)) is None  # fresh: it may be alive
  assert f'pid {pid}' in leases.describe(leases.read_holder(path))
  _lock(path, this_host(**fields), age=leases.STALE_AFTER + 5)
  assert leases.stale_reason(path, leases.read_holder(path)).startswith('no heartbeat for')


def test_a_reused_pid_does_not_keep_a_lease_forever(tmp_path):
  path = str(tmp_path / 'training.lease')
  # pid 1 lives, but a lease older than it (written before a reboot or a
  # container restart) is not its lease.
  _lock(path, this_host(pid=1, started=1000.0))
  assert 'younger process' in leases.stale_reason(path, leases.read_holder(path))
  # A live pid older than its lease is still the holder until its heartbeat stops.
  _lock(path, this_host(pid=os.getpid()))
  assert leases.stale_reason(path, leases.read_holder(path)) is None
  _lock(path, this_host(pid=os.getpid()), age=leases.STALE_AFTER + 5)
  assert 'no heartbeat' in leases.stale_reason(path, leases.read_holder(path))


def test_odd_records_are_described_without_a_traceback():
  assert leases.describe({'pid': 'abc', 'started': 'yesterday'}) == 'host None, pid abc, since yesterday'
  assert leases.describe({'started': 1e300}).startswith('host None, pid None, since ')
  assert leases.describe(None) == 'another process'


def test_a_failed_write_leaves_no_lock_file(tmp_path, monkeypatch):
  path = str(tmp_path / 'training.lease')
  def full(*_, **__):
    raise OSError(28, os.strerror(28))
  monkeypatch.setattr(leases.os, 'fsync', full)  # the write reaches the disk only at fsync
  with pytest.raises(OSError, match='No space left'):
    with leases.lease(path, 'training'):
      pass
  assert not os.path.exists(path)


def test_waiters_name_each_new_holder(tmp_path):
  path = str(tmp_path / 'stage.lease')
  # Holder A ends and holder B (another waiter that went first) takes the
  # lease: the waiter's last waiting line and its done line both name B.
  _lock(path, this_host(pid=os.getpid(), token='a', host='A'))
  said = []
  waiter = threading.Thread(target=lambda: leases.lease(path, 'stage', log=said.append, poll=0.01).__enter__())
  waiter.start()
  time.sleep(0.3)
  _lock(path, this_host(pid=os.getpid(), token='b', host='B'))
  time.sleep(0.3)
  os.remove(path)
  waiter.join(timeout=30)
  assert [line.split(',')[0] for line in said] == ['stage: waiting for host A', 'stage: waiting for host B',
                                                   'stage: host B'], said
  assert 'is done after' in said[-1]


def test_the_holder_keeps_its_lease_fresh(tmp_path):
  path = str(tmp_path / 'training.lease')
  with leases.lease(path, 'training', heartbeat=0.05):
    old = time.time() - 1000
    os.utime(path, (old, old))
    time.sleep(0.3)
    assert time.time() - os.path.getmtime(path) < 5


def _run_py(workdir, *extra):
  return subprocess.Popen(
      [sys.executable, 'run.py', '--config=configs/synthetic.py:smoke', f'--workdir={workdir}',
       '--config.train.progress=False', '--config.analyses=', *extra],
      cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.heavy
def test_two_runs_on_one_workdir_train_once(tmp_path):
  """The issue's case: two identical runs started a second apart on a fresh
  workdir. One trains; the other waits, then restores its model."""
  workdir = tmp_path / 'w'
  first = _run_py(workdir)
  time.sleep(1.0)
  second = _run_py(workdir)
  outs = [p.communicate(timeout=600) for p in (first, second)]
  assert [p.returncode for p in (first, second)] == [0, 0], [o[1][-2000:] for o in outs]
  text = ''.join(o[0] + o[1] for o in outs)
  assert 'waiting for host' in text
  assert 'training already finished' in text  # the waiter restored what the holder trained
  assert not list(workdir.glob('**/*.lease'))


def test_refusing_run_names_the_holder_in_one_line(tmp_path):
  workdir = tmp_path / 'w'
  os.makedirs(workdir)
  holder = hold_in_another_process(str(workdir / 'training.lease'), 120)
  try:
    refused = _run_py(workdir, '--config.wait_for_lock=False')
    out, err = refused.communicate(timeout=600)
  finally:
    holder.kill()
    holder.wait()
  assert refused.returncode != 0 and 'Traceback' not in err
  lines = [line for line in err.splitlines() if line.startswith('error:')]
  assert len(lines) == 1 and f'pid {holder.pid}' in lines[0] and 'training in' in lines[0]


@pytest.mark.heavy
def test_different_stages_of_one_model_run_at_once(tmp_path):
  """Two jobs asking for different stages of one trained model both finish,
  and a third asking for kendall takes the loo the first computes (its input)
  rather than computing it again. The arrays equal a sequential run's."""
  workdir = tmp_path / 'w'
  first = _run_py(workdir)
  assert first.wait(timeout=600) == 0
  sequential = tmp_path / 'sequential'
  shutil.copytree(workdir, sequential)
  docs = '--config.analysis.max_docs=4'
  jobs = [_run_py(workdir, f'--config.analyses={a}', docs) for a in ('loo', 'permutation', 'kendall')]
  outs = [p.communicate(timeout=600) for p in jobs]
  assert [p.returncode for p in jobs] == [0, 0, 0], [o[1][-2000:] for o in outs]
  reference = _run_py(sequential, '--config.analyses=loo,permutation,kendall', docs)
  assert reference.wait(timeout=600) == 0
  for stage in ('gradient', 'loo', 'permutation', 'kendall'):
    found = sorted((workdir / 'analyses' / stage).glob('*/results.npz'))
    expected = sorted((sequential / 'analyses' / stage).glob('*/results.npz'))
    assert len(found) == len(expected) == 1, stage
    with np.load(found[0]) as a, np.load(expected[0]) as b:
      assert sorted(a.files) == sorted(b.files)
      for name in a.files:
        np.testing.assert_array_equal(a[name], b[name], err_msg=f'{stage}/{name}')
  assert not list(workdir.glob('**/*.lease'))


def test_contents_says_what_is_being_computed_without_waiting(tmp_path):
  from attn_jax import contents  # pylint: disable=g-import-not-at-top
  workdir = tmp_path / 'w'
  os.makedirs(workdir / 'analyses' / 'loo' / 'test-8docs-abc')
  path = str(workdir / 'analyses' / 'loo' / 'test-8docs-abc' / 'stage.lease')
  with leases.lease(path, 'stage loo (somewhere)', log=lambda _: None):
    text = contents.describe(str(workdir))
  assert 'in progress: stage loo (somewhere) — being computed' in text and f'pid {os.getpid()}' in text


def test_reports_never_wait_and_say_what_is_still_being_computed(tmp_path):
  from attn_jax.tables import report_command_line as cli  # pylint: disable=g-import-not-at-top
  path = str(tmp_path / 'w' / 'analyses' / 'loo' / 'k' / 'stage.lease')
  with leases.lease(path, 'stage loo (w)', log=lambda _: None):
    lines = cli.still_computing([str(tmp_path / 'w')])
  assert lines == [f'note: still being computed, not shown: stage loo (w) (host {socket.gethostname()}, '
                   f'pid {os.getpid()}, since {lines[0].split("since ")[1]}']
  assert cli.still_computing([str(tmp_path / 'w')]) == []


def test_a_holder_that_lost_its_lease_writes_nothing_more_in_its_folder(tmp_path):
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  path = tmp_path / 'w' / 'training.lease'
  with leases.lease(str(path), 'training of w', log=lambda _: None) as record:
    atomic_io.write_json(str(tmp_path / 'w' / 'a.json'), {'k': 1})
    other = {**record, 'pid': record['pid'] + 1, 'token': 'someone-else', 'host': 'other-host'}
    path.write_text(json.dumps(other))  # what a takeover leaves
    with pytest.raises(leases.LeaseLost, match=r"this run's lease on .*w \(training of w\) was taken over by "
                                               r'host other-host, pid \d+'):
      atomic_io.write_json(str(tmp_path / 'w' / 'sub' / 'b.json'), {'k': 2})
    assert not (tmp_path / 'w' / 'sub' / 'b.json').exists()
    atomic_io.write_json(str(tmp_path / 'elsewhere.json'), {'k': 3})  # outside the folder: not fenced
  assert json.loads(path.read_text())['token'] == 'someone-else'  # the new holder's lease is left alone
  atomic_io.write_json(str(tmp_path / 'w' / 'c.json'), {'k': 4})  # no lease held any more


def test_a_paused_holder_taken_over_stops_at_its_next_write(tmp_path):
  """SIGSTOP a holder past the takeover, take the lease, SIGCONT it: it writes
  nothing more and says why in one line; one writer at a time."""
  path, folder = str(tmp_path / 'w' / 'run.lease'), tmp_path / 'w'
  code = textwrap.dedent(f'''
      import os, sys, time
      from attn_jax.core import atomic_io, errors, leases
      try:
        with leases.lease({path!r}, 'a test', log=lambda _: None):
          for i in range(400):
            atomic_io.write_json(os.path.join({str(folder)!r}, 'holder.json'), {{'i': i, 't': time.time()}})
            print('wrote', i, flush=True)
            time.sleep(0.05)
      except errors.AttnJaxError as e:
        print('error:', e, flush=True)
        sys.exit(3)
  ''')
  env = {**os.environ, 'ATTN_JAX_LEASE_STALE_AFTER': '2'}
  proc = subprocess.Popen([sys.executable, '-c', code], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
  assert proc.stdout.readline().startswith('wrote 0')
  os.kill(proc.pid, 19)  # SIGSTOP: no heartbeat from now on
  time.sleep(3)
  try:
    with leases.lease(path, 'the new holder', log=lambda _: None, stale_after=2.0):
      taken = time.time()
      os.kill(proc.pid, 18)  # SIGCONT while the new holder holds the lease
      out, _ = proc.communicate(timeout=60)
      last = json.loads((folder / 'holder.json').read_text())
  finally:
    if proc.poll() is None:
      proc.kill()
  assert proc.returncode == 3
  assert "error: this run's lease on" in out and f'was taken over by host {socket.gethostname()}, pid {os.getpid()}' in out
  assert 'nothing more is written by this process' in out
  assert last['t'] < taken  # nothing written by the paused holder after the takeover


def _fake_takeover(path, record) -> dict:
  """What a new holder leaves: its own record in the lock file, and the earlier
  holders' staging folders fenced off."""
  new = {**record, 'token': 'f' * 16, 'pid': record['pid'] + 1}
  path.write_text(json.dumps(new))
  leases._fence_earlier_holders(str(path), new['token'])  # pylint: disable=protected-access
  return new


def test_a_new_holder_fences_off_the_staging_folder_of_the_one_before(tmp_path, monkeypatch):
  """The check of the lock and the commit are two steps; a holder paused
  between them and woken after a takeover must still land nothing: its
  commit is a rename out of its staging folder, which the new holder fenced."""
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  path = tmp_path / 'w' / 'training.lease'
  with leases.lease(str(path), 'training of w', log=lambda _: None) as record:
    atomic_io.write_json(str(tmp_path / 'w' / 'a.json'), {'k': 1})
    private = leases.staging_dir(str(tmp_path / 'w' / 'a.json'))
    assert private.startswith(str(tmp_path / 'w' / leases.STAGING)) and os.path.isdir(private)
    _fake_takeover(path, record)
    assert os.path.isfile(private)  # a tombstone where the folder was: it cannot be made again
    monkeypatch.setattr(leases, 'verify', lambda target: None)  # as if the lock was checked before the pause
    monkeypatch.setattr(atomic_io, 'BEFORE_COMMIT', [])
    with pytest.raises(Exception):
      atomic_io.write_json(str(tmp_path / 'w' / 'b.json'), {'k': 2})
    assert not (tmp_path / 'w' / 'b.json').exists()
    with pytest.raises(Exception):
      leases.remove(str(tmp_path / 'w' / 'a.json'))
    assert (tmp_path / 'w' / 'a.json').exists()  # nor removed


def test_a_write_already_staged_when_the_lease_is_lost_cannot_be_committed(tmp_path, monkeypatch):
  """Paused after its temporary file was written, before the rename: the
  rename finds no source once the new holder has fenced the folder off, and
  the error is the lease's own line."""
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  path = tmp_path / 'w' / 'training.lease'
  real_replace = os.replace
  with leases.lease(str(path), 'training of w', log=lambda _: None) as record:
    def takeover_then_replace(source, target):
      _fake_takeover(path, record)  # the pause: a takeover happens here
      return real_replace(source, target)
    monkeypatch.setattr(os, 'replace', takeover_then_replace)
    with pytest.raises(leases.LeaseLost, match='was taken over by'):
      atomic_io.write_json(str(tmp_path / 'w' / 'b.json'), {'k': 2})
  assert not (tmp_path / 'w' / 'b.json').exists()


def test_a_released_lease_leaves_no_staging_folder(tmp_path):
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  with leases.lease(str(tmp_path / 'training.lease'), 'w', log=lambda _: None):
    atomic_io.write_json(str(tmp_path / 'a.json'), {'k': 1})
    assert (tmp_path / leases.STAGING).is_dir()
  assert sorted(os.listdir(tmp_path)) == ['a.json']


def test_two_leases_in_one_folder_never_fence_each_other(tmp_path):
  """Vectors files share a cache folder, each with its own lease: taking one
  must not fence off the live holder of another."""
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  with leases.lease(str(tmp_path / 'a.lease'), 'a', log=lambda _: None):
    atomic_io.write_json(str(tmp_path / 'a.json'), {'k': 1})
    a_private = leases.staging_dir(str(tmp_path / 'a.json'))
    proc = hold_in_another_process(str(tmp_path / 'b.lease'), 1)
    proc.wait(timeout=60)
    assert os.path.isdir(a_private)
    atomic_io.write_json(str(tmp_path / 'a.json'), {'k': 2})
