"""Write result files so that a killed run never leaves a half-written one.

Every file attn-jax writes goes through `atomic_write`:
- it is written to a temporary file beside the target, then renamed over it,
  so readers see either the old file or the complete new one;
- it gets the permissions any new file gets under the process's umask (as
  orbax's files do), not `tempfile`'s private 0600, so colleagues sharing a
  workdir can read it;
- it is not rewritten when its bytes would not change, so re-reporting or
  re-analysing a workdir on a read-only mount works when nothing changed;
- a full disk, a read-only path or a permission problem is a `StorageError`
  naming the path and the fix, never a raw traceback.
"""

import errno
import hashlib
import io
import json
import os
import tempfile
from typing import Any, Callable, IO, Optional

from attn_jax.core.errors import StorageError

_STORAGE_ERRNOS = {errno.ENOSPC: 'the disk is full', errno.EDQUOT: 'the disk quota is exceeded',
                   errno.EROFS: 'the file system is read-only', errno.EACCES: 'permission denied',
                   errno.EPERM: 'permission denied'}


def storage_error(path: str, error: OSError) -> StorageError:
  """A one-line error for an OSError met writing `path`."""
  why = _STORAGE_ERRNOS.get(error.errno, error.strerror or str(error))
  return StorageError(
      f'cannot write {path}: {why} ({type(error).__name__} errno {error.errno}). Nothing was '
      'half-written; free space, fix the permissions or choose another directory (run.py: --workdir, '
      '--output_dir; report: --out, --save), then rerun: only what is missing is computed.')


def is_storage_error(error: BaseException) -> bool:
  return isinstance(error, OSError) and error.errno in _STORAGE_ERRNOS


def _umask() -> int:
  """The process's umask, read without setting it where Linux allows (setting
  it, even briefly, would race with other threads creating files)."""
  try:
    with open('/proc/self/status') as f:
      for line in f:
        if line.startswith('Umask:'):
          return int(line.split()[1], 8)
  except (OSError, ValueError, IndexError):
    pass
  mask = os.umask(0)
  os.umask(mask)
  return mask


def file_mode() -> int:
  """The mode a new regular file gets under the current umask."""
  return 0o666 & ~_umask()


def atomic_write(path: str, write: Callable[[IO], None], mode: str = 'w') -> bool:
  """Calls `write(file)` into memory, then puts the bytes at `path` atomically.

  Returns:
    whether the file was written (False: it already held these bytes).

  Raises:
    StorageError: the disk is full, the path read-only or not permitted.
  """
  buffer = io.BytesIO() if 'b' in mode else io.StringIO()
  write(buffer)
  data = buffer.getvalue()
  return write_bytes(path, data if isinstance(data, bytes) else data.encode('utf-8'))


def require_folder(path: str, what: str, fix: str) -> None:
  """Raises StorageError in one line when `path`, or the nearest of its
  parents that exists, is not a folder (a file where a folder belongs),
  before any work is done there."""
  here = os.path.abspath(path)
  while not os.path.exists(here) and os.path.dirname(here) != here:
    here = os.path.dirname(here)
  if os.path.exists(here) and not os.path.isdir(here):
    where = path if here == os.path.abspath(path) else f'{path} (its parent {here})'
    raise StorageError(f'{what} {where} is a file, not a folder: {fix}')


# Called with the path before each write commits (`os.replace`); one raises
# to stop it. `attn_jax.core.leases` adds its fence: a process that lost the
# lease of the folder it writes into writes nothing more there.
BEFORE_COMMIT: list[Callable[[str], None]] = []

# Called with the path; the first folder one returns is where its temporary
# file is written (None: beside it). `attn_jax.core.leases` returns the
# holder's private staging folder inside a leased folder, so the commit is a
# rename out of a folder that a new holder fences off.
STAGING_FOR: list[Callable[[str], Optional[str]]] = []


def _staging(path: str, directory: str) -> str:
  for find in STAGING_FOR:
    found = find(path)
    if found is not None:
      return found
  return directory


def _lost_or(path: str, error: OSError) -> BaseException:
  """What a failed commit into `path` means: the lease's own error when the
  writer lost its lease (its staging folder fenced off), else the storage error."""
  try:
    for check in BEFORE_COMMIT:
      check(path)
  except Exception as lost:  # pylint: disable=broad-except
    return lost
  return storage_error(path, error)


def write_bytes(path: str, data: bytes) -> bool:
  """`atomic_write` of ready bytes; see there."""
  if holds(path, data):
    return False
  for check in BEFORE_COMMIT:
    check(path)
  directory = os.path.dirname(os.path.abspath(path))
  tmp = None
  try:
    os.makedirs(directory, exist_ok=True)
    tmp = _temporary(_staging(path, directory), path, data)
    try:
      os.replace(tmp, path)
    except OSError as e:
      if e.errno != errno.EXDEV:
        raise
      _remove_quietly(tmp)  # a folder mounted inside the leased one: write beside the target
      tmp = None
      tmp = _temporary(directory, path, data)
      os.replace(tmp, path)
  except OSError as e:  # a path that cannot be a file (ENOTDIR, ENAMETOOLONG, ...) too
    _remove_quietly(tmp)
    raise _lost_or(path, e) from e
  except BaseException:
    _remove_quietly(tmp)
    raise
  return True


def _temporary(folder: str, path: str, data: bytes) -> str:
  """A new file in `folder` holding `data`, synced, with the umask's mode; its path."""
  fd, tmp = tempfile.mkstemp(dir=folder, prefix='.' + os.path.basename(path) + '.')
  try:
    with os.fdopen(fd, 'wb') as f:
      f.write(data)
      f.flush()
      os.fsync(f.fileno())
    os.chmod(tmp, file_mode())
  except BaseException:
    _remove_quietly(tmp)
    raise
  return tmp


def copy_file(source: str, target: str) -> bool:
  """Copies `source` to `target` atomically (`write_bytes`)."""
  with open(source, 'rb') as f:
    return write_bytes(target, f.read())


def holds(path: str, data: bytes) -> bool:
  """Whether the file at `path` has exactly these bytes."""
  try:
    if os.path.getsize(path) != len(data):
      return False
    with open(path, 'rb') as f:
      return f.read() == data
  except OSError:
    return False


def _remove_quietly(path) -> None:
  if path is not None:
    try:
      os.remove(path)
    except OSError:
      pass


def json_bytes(obj: Any) -> bytes:
  return json.dumps(obj, indent=2, sort_keys=True).encode('utf-8')


def write_json(path: str, obj: Any) -> bool:
  return write_bytes(path, json_bytes(obj))


def write_jsonl(path: str, records: list[dict]) -> bool:
  return write_bytes(path, ''.join(json.dumps(r, sort_keys=True) + '\n' for r in records).encode())


def read_json(path: str) -> Any:
  with open(path) as f:
    return json.load(f)


def read_json_object(path: str):
  """A JSON object (dict) from `path`; None when the file is missing, does
  not parse or holds something else — for records that can be rebuilt."""
  try:
    value = read_json(path)
  except (OSError, ValueError):
    return None
  return value if isinstance(value, dict) else None


def sha256_file(path: str) -> str:
  digest = hashlib.sha256()
  with open(path, 'rb') as f:
    for block in iter(lambda: f.read(1 << 20), b''):
      digest.update(block)
  return digest.hexdigest()
