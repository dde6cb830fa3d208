"""The folder a command writes its output into (`--save`, `--out`, `--directory`):
what it says when that folder cannot be written.

A read-only mount, a folder without write permission or a full disk met
anywhere under the folder the user named — by `atomic_io`'s writes (a
`StorageError`), or by an `os.makedirs` or a temporary file of the command's
own (an `OSError`) — ends in one line naming that folder, the reason, and the
option that chooses another:

    cannot write /mnt/ro/save: the file system is read-only (errno 30); give another folder with --save

    with output_folders.writing_into(args.save, '--save'):
      ...  # the command's work
"""

import contextlib
import errno
import os
import re
import shutil
from typing import Optional

from attn_jax.core import atomic_io
from attn_jax.core.errors import StorageError

_FULL = (errno.ENOSPC, errno.EDQUOT)


def size(n: float) -> str:
  """Bytes in a unit a reader takes in: '812 KB', '3.4 GB'."""
  for unit in ('bytes', 'KB', 'MB', 'GB', 'TB'):
    if n < 1000 or unit == 'TB':
      return f'{n:.0f} {unit}' if unit in ('bytes', 'KB') else f'{n:.1f} {unit}'
    n /= 1000
  return f'{n:.1f} TB'


def free_bytes(path: str) -> Optional[int]:
  """The free space of the file system `path` (or its nearest existing parent) is on."""
  here = os.path.abspath(path)
  while not os.path.exists(here) and os.path.dirname(here) != here:
    here = os.path.dirname(here)
  try:
    return shutil.disk_usage(here).free
  except OSError:
    return None


def folder_error(folder: str, error: OSError, option: str, needed: Optional[str] = None,
                 free: Optional[int] = None, why: Optional[str] = None) -> StorageError:
  """The one-line error of `error` (a storage OSError) met writing under `folder`.

  Args:
    folder: the folder the user named.
    error: the OSError (ENOSPC, EDQUOT, EROFS, EACCES, EPERM).
    option: the command-line option that names another folder ('--save').
    needed: for a full disk, what the write needs where known, as words
      ('about 40.2 MB more needed').
    free: for a full disk, the free bytes when it was found (default: now).
    why: the problem in words (default: the errno's, 'the disk is full').

  Returns:
    A StorageError; its `folder`, `os_error`, `needed`, `free` and `why`
    keep the parts, so a caller can name its own option (`writing_into`).
  """
  why = why or atomic_io._STORAGE_ERRNOS.get(error.errno, error.strerror or str(error))  # pylint: disable=protected-access
  if error.errno in _FULL:
    free = free_bytes(folder) if free is None else free
    space = '; '.join(part for part in (f'{size(free)} free' if free is not None else '', needed or '') if part)
    made = StorageError(f'cannot write {folder}: {why} (errno {error.errno}{"; " + space if space else ""}); '
                        f'free space there or give another folder with {option}')
  else:
    made = StorageError(f'cannot write {folder}: {why} (errno {error.errno}); give another folder with {option}')
  made.folder, made.os_error, made.needed, made.free, made.why = folder, error, needed, free, why
  return made


def _related(path: Optional[str], folder: str) -> bool:
  """Whether `path` is `folder`, lies in it, or is one of its parents (made on the way)."""
  if not path:
    return False
  path, folder = os.path.abspath(os.fsdecode(path)), os.path.abspath(folder)
  return (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
          or folder.startswith(path.rstrip(os.sep) + os.sep))


def _written_path(error: StorageError) -> Optional[str]:
  """The path an `atomic_io.storage_error` names ('cannot write PATH: ...')."""
  found = re.match(r'cannot write (.+?): ', str(error))
  return found.group(1) if found else None


def storage_cause(error: BaseException, folder: str) -> Optional[OSError]:
  """The storage OSError behind `error` if it was met writing under `folder`, else None.

  An OSError without a file name (a full disk met by a buffered write) counts
  as the folder's: inside `writing_into` the command writes there.
  """
  if isinstance(error, StorageError):
    cause = getattr(error, 'os_error', None) or error.__cause__
    while isinstance(cause, StorageError):  # one of `folder_error`'s, or a chain of them
      cause = getattr(cause, 'os_error', None) or cause.__cause__
    if isinstance(cause, OSError) and atomic_io.is_storage_error(cause) and (
        _related(getattr(error, 'folder', None), folder) or _related(cause.filename, folder)
        or _related(_written_path(error), folder)):
      return cause
    return None
  if isinstance(error, OSError) and atomic_io.is_storage_error(error):
    if error.filename is None or _related(error.filename, folder) or _related(error.filename2, folder):
      return error
  return None


@contextlib.contextmanager
def writing_into(folder: Optional[str], option: str):
  """Inside: a read-only, unpermitted or full `folder` raises `folder_error`
  (a `StorageError`, one line naming `folder` and `option`) instead of an
  OSError or a message about one file deep inside it; a `folder_error` from
  inside keeps what it said of the space needed. No-op where `folder` is
  None (nothing is written)."""
  if not folder:
    yield
    return
  try:
    yield
  except (StorageError, OSError) as e:
    cause = storage_cause(e, folder)
    if cause is None:
      raise
    raise folder_error(folder, cause, option, getattr(e, 'needed', None), getattr(e, 'free', None),
                       getattr(e, 'why', None)) from e
