"""Leases: one process at a time writes a thing (a training, a stage's
results, an experiment's), the others wait for it or refuse.

A lease is a lock file created with `O_CREAT | O_EXCL` — atomic on local
file systems and on NFS (v3 and later) — holding its holder's host, pid,
start time and a random token. `filelock` would do the same job but is not
among attn-jax's dependencies, and its stale-lock handling is the part that
matters here:

* Every holder touches its lock file every `HEARTBEAT` seconds; a file
  untouched for `STALE_AFTER` seconds is taken over, whatever it holds (a
  lost host, a killed batch job, a pid reused by another process).
* A holder on this host whose pid is gone (killed with -9, crashed) or now
  belongs to a process younger than the lease is stale at once.
* A file with no readable record (empty, garbage) is stale after
  `UNREADABLE_AFTER` seconds; a failed write removes the file it created.

Taking over is serialised by a second, short-lived lock (`<lock>.break`), so
two waiters that both find a holder dead never remove each other's fresh
lease. On GCS-fuse and other object-store mounts `O_EXCL` is not atomic:
two jobs may both believe they hold a lease; keep workdirs of concurrent
jobs on a POSIX or NFS file system there.

Fencing: a holder paused past `STALE_AFTER` (a suspended job, a paused VM)
is taken over like a dead one; when it wakes it must not write beside the new
holder. Two fences stop it:

* Each holder has a private staging folder, `<folder>/.attn_jax-staging/
  <lease>/<token>/`; every atomic file write (`atomic_io`) and every
  checkpoint (`training.checkpoints`) into the leased folder is written there
  first and committed by one rename out of it, and every removal is a rename
  into it. A new holder, before anything else, renames the staging folders of
  the holders before it away and leaves a file (a tombstone) in their place:
  a woken holder's commit then finds no source to rename (nor can it
  re-create the folder), so it cannot land, whatever moment the pause hit —
  in the middle of a save included. This is the fence a lock file alone
  cannot give (a check of the lock followed by a write leaves a moment
  between them).
* Before each commit the holder also checks that the lock file still holds
  its token (`verify`), so the woken holder stops at its next commit with one
  line (`LeaseLost`), not with the failed rename's error.

A waiter says whom it waits for (one line, again every `REPORT_EVERY`
seconds), then, when the holder is done, goes on — and finds the holder's
finished results, which it reuses. With `wait=False` it refuses at once,
naming the holder (`LeaseHeld`).
"""

import contextlib
import errno
import json
import math
import os
import secrets
import shutil
import socket
import threading
import time
from typing import Callable, Iterator, Optional

from attn_jax.core import atomic_io
from attn_jax.core.errors import AttnJaxError, ConfigError

SUFFIX = '.lease'
STAGING = '.attn_jax-staging'  # holders' private folders, beside their lock files
HEARTBEAT = 30.0
STALE_AFTER = 300.0
POLL = 0.5
REPORT_EVERY = 300.0
UNREADABLE_AFTER = 10.0  # a record is written right after its file is created
# /proc's boot time follows the wall clock, so a clock step moves a process's
# computed start: only a start this much later than the lease means a new process.
CLOCK_SLACK = 60.0


class LeaseHeld(AttnJaxError):
  """Another process holds the lease and this one was told not to wait."""


class LeaseLost(AttnJaxError):
  """This process's lease was taken over (it was paused past `STALE_AFTER`)."""


# The leases this process holds: lock file -> (the folder it guards, our record).
_HELD: dict[str, tuple[str, dict]] = {}
_HELD_LOCK = threading.Lock()


# The shortest takeover time accepted: a holder's heartbeat is a quarter of it,
# and below a second the heartbeat would spin and a live holder's slow write
# could look like silence.
SHORTEST_STALE_AFTER = 1.0


def stale_after_seconds() -> float:
  """`STALE_AFTER`, or $ATTN_JAX_LEASE_STALE_AFTER seconds (a scheduler that
  pauses jobs for longer, or a test of takeovers).

  Raises:
    ConfigError: the variable is not a number of seconds >= 1 (0 or a
      negative value would evict every live holder; a word would be ignored).
  """
  text = os.environ.get('ATTN_JAX_LEASE_STALE_AFTER')
  if text is None:
    return STALE_AFTER
  try:
    value = float(text)
  except ValueError:
    value = math.nan
  if not math.isfinite(value) or value < SHORTEST_STALE_AFTER:
    raise ConfigError(f'ATTN_JAX_LEASE_STALE_AFTER={text!r}: a lease is taken over after this many seconds without '
                      f'a heartbeat, so it must be a number >= {SHORTEST_STALE_AFTER:g} (default {STALE_AFTER:g}); '
                      'set it so, or unset it')
  return value


def verify(target: str) -> None:
  """Raises `LeaseLost` if `target` lies in the folder of a lease this process
  held and the lock file no longer holds our token (taken over while this
  process was paused). Paths outside every held lease pass."""
  target = os.path.abspath(target)
  with _HELD_LOCK:
    held_now = list(_HELD.items())
  for path, (folder, record) in held_now:
    if target != folder and not target.startswith(folder + os.sep):
      continue
    current = read_holder(path)
    if (current or {}).get('token') != record['token']:
      silent = time.time() - record.get('beat', record['started'])
      raise LeaseLost(f'this run\'s lease on {folder} ({record["what"]}) was taken over by '
                      f'{describe(current) if current else "another process (it has finished since)"} '
                      f'after {silent:.0f} s without a heartbeat from this process (paused?); its work so far '
                      'is kept, and nothing more is written by this process')


atomic_io.BEFORE_COMMIT.append(verify)


def _staging_root(lock_path: str) -> str:
  """The folder of the private staging folders of lease `lock_path`'s holders."""
  name = os.path.basename(lock_path)
  name = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name
  return os.path.join(os.path.dirname(lock_path), STAGING, name)


def staging_dir(target: str) -> Optional[str]:
  """This process's private staging folder for a write to `target`: that of
  the innermost lease it holds over `target` (created on demand), or None when
  it holds none there (then a write goes beside its target).

  Raises:
    LeaseLost: the lease was taken over (its staging folder is fenced off).
  """
  target = os.path.abspath(target)
  with _HELD_LOCK:
    covering = [(folder, path, record) for path, (folder, record) in _HELD.items()
                if target == folder or target.startswith(folder + os.sep)]
  if not covering:
    return None
  _, path, record = max(covering, key=lambda c: len(c[0]))
  private = os.path.join(_staging_root(path), record['token'])
  try:
    os.makedirs(private, exist_ok=True)
  except (FileExistsError, NotADirectoryError):
    verify(target)  # a tombstone stands there: the lease was taken over
    raise
  return private


def lost_or(target: str, error: BaseException) -> BaseException:
  """`LeaseLost` when `error` (a failed commit into `target`) came from the
  lease being taken over — its staging folder fenced off — else `error`."""
  try:
    verify(target)
  except LeaseLost as lost:
    return lost
  return error


def remove(path: str) -> None:
  """Removes file or folder `path` inside a leased folder: a rename into this
  holder's staging folder (fenced like a commit), then a removal there; a
  plain removal outside every lease. Nothing happens if `path` is gone."""
  verify(path)
  private = staging_dir(path)
  if private is None:
    _remove_tree(path)
    return
  aside = os.path.join(private, 'removed-' + secrets.token_hex(4))
  try:
    os.rename(path, aside)
  except FileNotFoundError:
    if os.path.lexists(path):
      raise lost_or(path, FileNotFoundError(errno.ENOENT, 'staging folder fenced off', private)) from None
    return
  except NotADirectoryError as e:
    raise lost_or(path, e) from None
  _remove_tree(aside)


atomic_io.STAGING_FOR.append(staging_dir)


def _remove_tree(path: str) -> None:
  if os.path.isdir(path) and not os.path.islink(path):
    shutil.rmtree(path, ignore_errors=True)
  else:
    with contextlib.suppress(FileNotFoundError):
      os.remove(path)


def _fence_earlier_holders(lock_path: str, token: str) -> None:
  """Fences off the staging folders of every earlier holder of `lock_path`
  (this process holds it now, so none of them may commit any more): each is
  renamed away and a tombstone file put in its place — a woken holder's
  rename out of it finds no source, and its makedirs a file — then removed."""
  root = _staging_root(lock_path)
  try:
    names = os.listdir(root)
  except (FileNotFoundError, NotADirectoryError):
    return
  for name in names:
    here = os.path.join(root, name)
    if name == token or '.' in name:
      if '.fenced-' in name:
        shutil.rmtree(here, ignore_errors=True)  # one a fence before this one could not remove
      continue
    for _ in range(10):  # the earlier holder may re-create its folder between our two steps
      if not os.path.isdir(here) or os.path.islink(here):
        break
      aside = f'{here}.fenced-{secrets.token_hex(4)}'
      with contextlib.suppress(FileNotFoundError):
        os.rename(here, aside)
      with contextlib.suppress(FileExistsError):
        _create(here, {'fenced_by': token, 'at': time.time()})
      shutil.rmtree(aside, ignore_errors=True)


def _drop_own_staging(lock_path: str, token: str) -> None:
  """Removes this holder's staging folder, and the staging folders above it
  when empty (they are left only where a tombstone stands)."""
  root = _staging_root(lock_path)
  shutil.rmtree(os.path.join(root, token), ignore_errors=True)
  for folder in (root, os.path.dirname(root)):
    try:
      os.rmdir(folder)
    except OSError:
      break


def _holder_record(what: str) -> dict:
  return {'what': what, 'host': socket.gethostname(), 'pid': os.getpid(),
          'started': time.time(), 'token': secrets.token_hex(8)}


def read_holder(path: str) -> Optional[dict]:
  """The record in lock file `path`, or None (no lock, one being written, or
  one that holds no JSON object: empty, garbage)."""
  try:
    with open(path) as f:
      record = json.load(f)
    return record if isinstance(record, dict) else None
  except (OSError, ValueError):
    return None


def _pid(record: dict) -> Optional[int]:
  """The holder's pid, or None when the record has none usable (missing,
  not a positive integer: `os.kill(-1, 0)` would ask about every process)."""
  pid = record.get('pid')
  return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None


def _pid_alive(pid: int) -> bool:
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True  # alive, someone else's
  except OSError:
    return False  # e.g. a pid beyond the system's range
  return True


def _process_started(pid: int) -> Optional[float]:
  """When process `pid` started (seconds since the epoch), from Linux's /proc;
  None where that cannot be read (another OS, a hidden /proc)."""
  try:
    with open(f'/proc/{pid}/stat') as f:
      fields = f.read().rpartition(')')[2].split()  # the name may hold spaces
    with open('/proc/stat') as f:
      boot = next(float(line.split()[1]) for line in f if line.startswith('btime '))
    return boot + int(fields[19]) / os.sysconf('SC_CLK_TCK')  # field 22: starttime, in ticks
  except (OSError, ValueError, IndexError, StopIteration):
    return None


def stale_reason(path: str, record: Optional[dict], stale_after: float = STALE_AFTER) -> Optional[str]:
  """Why the holder of `path` is gone, or None while it may live.

  A live holder writes its record at once and touches the file every
  `HEARTBEAT` seconds, so whatever the file holds, a lease is stale when
  its heartbeat is older than `stale_after`; on this host also at once when
  its pid is dead or now belongs to a process younger than the lease (a pid
  reused after a reboot or a container restart), and an unreadable record
  (empty, garbage) after `UNREADABLE_AFTER` seconds.
  """
  try:
    age = time.time() - os.path.getmtime(path)
  except OSError:
    return None  # gone already: nothing to take over
  if record is None:
    if age > min(stale_after, UNREADABLE_AFTER):
      return f'its lock file holds no readable record ({age:.0f} s old)'
    return None  # a writer between creating the file and writing its record
  if age > stale_after:
    return f'no heartbeat for {age:.0f} s'
  pid = _pid(record)
  if record.get('host') != socket.gethostname() or pid is None:
    return None
  if not _pid_alive(pid):
    return 'its process is gone'
  started, since = _process_started(pid), record.get('started')
  if started is not None and isinstance(since, (int, float)) and started > since + CLOCK_SLACK:
    return f'its pid {pid} now belongs to a younger process'
  return None


def is_stale(path: str, record: Optional[dict], stale_after: float = STALE_AFTER) -> bool:
  """Whether the holder of `path` is gone (`stale_reason`)."""
  return stale_reason(path, record, stale_after) is not None


def describe(record: Optional[dict]) -> str:
  """'host H, pid P, since T' of a holder record, whatever it holds."""
  if not record:
    return 'another process'
  started = record.get('started')
  if isinstance(started, (int, float)) and not isinstance(started, bool):
    with contextlib.suppress(OverflowError, OSError, ValueError):
      started = time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(started))
  return f'host {record.get("host")}, pid {record.get("pid")}, since {started}'


def _create(path: str, record: dict) -> bool:
  """Creates lock file `path` holding `record`; False if it exists. A write
  that fails (a full disk) removes the file it created before raising, so no
  empty lease is left to block the next run."""
  try:
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
  except FileExistsError:
    return False
  try:
    with os.fdopen(fd, 'w') as f:
      json.dump(record, f)
      f.flush()
      os.fsync(f.fileno())
  except BaseException:
    with contextlib.suppress(OSError):
      os.remove(path)
    raise
  return True


def _take_over(path: str, stale: Optional[dict], stale_after: float, silent_mtime: Optional[float] = None) -> None:
  """Removes the stale lock `path` if it still is the one judged stale: the
  same token, and still stale (`is_stale`) — or, where it was judged by its
  heartbeat's silence as this host watched it (`silent_mtime`: the lock file's
  time then, which a clock ahead of this host's puts in the future), still
  that silent time."""
  breaker = path + '.break'
  if not _create(breaker, _holder_record('takeover')):
    if is_stale(breaker, read_holder(breaker), min(stale_after, 60.0)):
      with contextlib.suppress(FileNotFoundError):
        os.remove(breaker)  # a breaker that died mid-takeover
    return
  try:
    current = read_holder(path)
    same = (current or {}).get('token') == (stale or {}).get('token')
    still = False
    if silent_mtime is not None:
      with contextlib.suppress(OSError):
        still = os.path.getmtime(path) == silent_mtime
    else:
      still = is_stale(path, current, stale_after)
    if same and still:
      with contextlib.suppress(FileNotFoundError):
        os.remove(path)
  finally:
    with contextlib.suppress(FileNotFoundError):
      os.remove(breaker)


class _Silence:
  """How long this process has watched a lock file's time stand still, by its
  own monotonic clock: a heartbeat is a change of that time, whatever clock
  wrote it, so a holder whose clock runs ahead of this host's (another host's,
  or this one's set back) is judged by its silence, never waited for forever."""

  def __init__(self):
    self.mtime, self.since = None, None

  def seconds(self, path: str) -> tuple[Optional[float], float]:
    """(the lock file's time, seconds it has stood still as this process watched)."""
    try:
      mtime = os.path.getmtime(path)
    except OSError:
      mtime = None
    now = time.monotonic()
    if mtime != self.mtime or self.since is None:
      self.mtime, self.since = mtime, now
    return mtime, now - self.since


def _heartbeat(path: str, record: dict, stop: threading.Event, every: float) -> None:
  while not stop.wait(every):
    if (read_holder(path) or {}).get('token') != record['token']:
      return  # taken over (we were judged stale): nothing of ours to touch
    with contextlib.suppress(OSError):
      os.utime(path)
      record['beat'] = time.time()


@contextlib.contextmanager
def lease(path: str, what: str, wait: bool = True, log: Callable[[str], None] = print,
          stale_after: Optional[float] = None, heartbeat: float = HEARTBEAT,
          poll: float = POLL) -> Iterator[dict]:
  """Holds the lock file `path` for the block; yields the holder record.

  Args:
    what: what it guards, for the messages ('training of W', 'stage loo ...').
    wait: wait for a live holder (True), or raise `LeaseHeld` at once.
    log: where the waiting lines go.

  Raises:
    LeaseHeld: held by a live process and `wait` is False.
  """
  os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
  stale_after = stale_after_seconds() if stale_after is None else stale_after
  heartbeat = min(heartbeat, stale_after / 4)  # a live holder never looks stale
  record = _holder_record(what)
  waited, last_report, holder, took_over = 0.0, None, None, False
  silence, skew_said = _Silence(), False
  try:
    created = _create(path, record)
  except OSError as e:
    if e.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
      raise
    # A folder this process cannot write (a read-only mount, someone else's
    # results): it can only read what is finished there, which needs no
    # lease; anything it tried to write would fail with its own clear error.
    yield {}
    return
  while not created and not _create(path, record):
    current = read_holder(path)
    reason = stale_reason(path, current, stale_after)
    mtime, silent = silence.seconds(path)
    ahead = (mtime - time.time()) if mtime is not None else 0.0
    silent_mtime = None
    if reason is None and silent > stale_after:
      reason, silent_mtime = f'no heartbeat for {silent:.0f} s as this host watched it', mtime
      if ahead > CLOCK_SLACK:
        reason += f'; its time was {ahead:.0f} s ahead of this host\'s clock'
    if reason is not None:
      log(f'{what}: the lease of {describe(current)} is stale ({reason}); taking it over')
      _take_over(path, current, stale_after, silent_mtime)
      took_over = True
      continue
    if ahead > CLOCK_SLACK and not skew_said:
      log(f'{what}: the lease of {describe(current)} was touched {ahead:.0f} s in this host\'s future (another '
          'host\'s clock runs ahead, or this one was set back); its heartbeat is judged by this host\'s watch: '
          f'taken over if it stays silent for {stale_after:.0f} s')
      skew_said = True
    if not wait:
      raise LeaseHeld(f'{what} is being written by {describe(current)} (lease {path}); rerun later, '
                      'or with --config.wait_for_lock=True to wait for it and reuse its results')
    changed = current is not None and (holder or {}).get('token') != current.get('token')
    if last_report is None or waited - last_report >= REPORT_EVERY or changed:
      # A new holder (another waiter went first) gets its own line, so the
      # line that ends the wait names the holder the last line named.
      log(f'{what}: waiting for {describe(current)}, which holds it (lease {path})')
      last_report = waited
    holder = current if current is not None else holder
    time.sleep(poll)
    waited += poll
  if waited and not took_over:
    log(f'{what}: {describe(holder)} is done after {waited:.0f} s of waiting; going on')
  # Before anything is read or written under the new lease: earlier holders
  # (one taken over may wake) can commit nothing more.
  _fence_earlier_holders(path, record['token'])
  stop = threading.Event()
  beat = threading.Thread(target=_heartbeat, args=(path, record, stop, heartbeat), daemon=True)
  beat.start()
  key = os.path.abspath(path)
  with _HELD_LOCK:
    _HELD[key] = (os.path.dirname(key), record)
  try:
    yield record
  finally:
    stop.set()
    with _HELD_LOCK:
      _HELD.pop(key, None)
    if (read_holder(path) or {}).get('token') == record['token']:
      _drop_own_staging(path, record['token'])
      with contextlib.suppress(FileNotFoundError):
        os.remove(path)



def clear_stale(path: str, what: str, log: Callable[[str], None] = print) -> None:
  """Removes lock file `path` where its holder is gone (`stale_reason`).

  For work found finished and verified without taking its lease: a process
  killed after its last write and before its release leaves the lock file,
  and a reader of `held` would take the work for one in progress. A live
  holder's lease is left as it is.

  Args:
    path: the lease file (absent: nothing to do).
    what: the work it guards, for the line said when it is removed.
    log: where that line goes.
  """
  record, stale_after = read_holder(path), stale_after_seconds()
  reason = stale_reason(path, record, stale_after)
  if reason is None:
    return
  _take_over(path, record, stale_after)
  if not os.path.exists(path):
    log(f'{what}: removed the lease left by {describe(record)} ({reason}); its work is finished')

def guarded(path: str, what: str, wait: bool, log: Callable[[str], None] = print):
  """`lease(path, what, wait=wait)` on one host; nothing with several hosts,
  whose processes meet at barriers instead (one job).

  Args:
    path: the lease file.
    what: the work it guards, as a waiting process names it.
    wait: wait for another holder (a run's `wait_for_lock`), or refuse at once.
    log: where waiting and takeovers are said.
  """
  from attn_jax.core import hosts  # pylint: disable=g-import-not-at-top
  if hosts.count() > 1:
    return contextlib.nullcontext({})
  return lease(path, what, wait=wait, log=log)


def held(root: str) -> list[tuple[str, Optional[dict]]]:
  """(lock file, holder) of every lease under `root`, for readers that say
  what is still being computed; never blocks."""
  found = []
  for folder, _, files in os.walk(root):
    for name in files:
      if name.endswith(SUFFIX):
        path = os.path.join(folder, name)
        found.append((path, read_holder(path)))
  return sorted(found, key=lambda x: x[0])
