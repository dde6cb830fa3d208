"""Prepares a dataset beside the prepared copy, and swaps it in only on success.

tfds prepares in place: asked to prepare again (the source files changed),
it deletes the existing copy first, so a truncated new archive or a full disk
would lose a good prepared copy. Here tfds prepares into a temporary data dir
inside the real one (same file system, and writable whenever the real one is),
and the finished version folder replaces the old one by two renames. On any
failure only the temporary folder is removed.
"""

import errno
import os
import shutil
import tempfile
from typing import Callable

from attn_jax.core import atomic_io
from attn_jax.core.errors import AttnJaxError, StorageError

STAGING_PREFIX = '.attn_jax-preparing-'

# Writers in C++ (array_record) report a full disk as text, not as an OSError.
_STORAGE_TEXT = {'No space left on device': errno.ENOSPC, 'Read-only file system': errno.EROFS,
                 'Permission denied': errno.EACCES, 'Disk quota exceeded': errno.EDQUOT}


def storage_cause(error: BaseException):
  """The OSError of a full disk or unwritable folder behind `error`, if any.

  tfds and array_record wrap such errors in their own exceptions, so the
  whole chain of causes is searched, and messages as a last resort. A
  DataError (e.g. a source file that cannot be read) is not about storage.
  """
  seen = set()
  while error is not None and id(error) not in seen and not isinstance(error, AttnJaxError):
    seen.add(id(error))
    if atomic_io.is_storage_error(error):
      return error
    for text, code in _STORAGE_TEXT.items():
      if not isinstance(error, OSError) and text in str(error):
        return OSError(code, os.strerror(code))
    error = error.__cause__ or error.__context__
  return None


def storage_error(dataset: str, tfds_data_dir: str, error: OSError) -> StorageError:
  return StorageError(
      f'cannot prepare {dataset} in the tfds data dir {tfds_data_dir}: {os.strerror(error.errno)} '
      f'(errno {error.errno}). Nothing half-prepared was left and an earlier prepared copy, if '
      'any, is kept; free space there or choose a writable folder with '
      '--config.data.tfds_data_dir or $TFDS_DATA_DIR, then rerun.')


def _remove_stale_staging(root: str) -> None:
  """Staging folders left by a killed preparation (the prepared copy in use
  is never among them). Not safe against two preparations of one tfds data
  dir at once, which tfds itself does not support either."""
  for name in os.listdir(root):
    if name.startswith(STAGING_PREFIX):
      shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def prepare_staged(dataset: str, root: str, version_dir: str,
                   prepare: Callable[[str], str]) -> None:
  """Runs `prepare(staging_root) -> staged version dir`, then swaps that in.

  Args:
    dataset: name for messages.
    root: the real tfds data dir.
    version_dir: the real prepared folder, `root/<name>[/<config>]/<version>`.
    prepare: prepares under the given tfds data dir and returns the version
      folder it made there, with every file the prepared copy needs.

  Raises:
    StorageError: the disk is full or `root` is not writable.
  """
  try:
    os.makedirs(root, exist_ok=True)
    _remove_stale_staging(root)
    staging = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=root)
  except OSError as e:
    if atomic_io.is_storage_error(e):
      raise storage_error(dataset, root, e) from e
    raise
  try:
    staged = prepare(staging)
    _swap(staged, version_dir, os.path.join(staging, 'previous'))
  except Exception as e:  # pylint: disable=broad-except
    cause = storage_cause(e)
    if cause is not None:
      raise storage_error(dataset, root, cause) from e
    raise
  finally:
    shutil.rmtree(staging, ignore_errors=True)


def _swap(new: str, old: str, aside: str) -> None:
  """Puts folder `new` at `old`; the previous `old` goes to `aside` (deleted with it)."""
  os.makedirs(os.path.dirname(old), exist_ok=True)
  had_old = os.path.exists(old)
  if had_old:
    os.rename(old, aside)
  try:
    os.rename(new, old)
  except OSError as e:
    if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
      return  # another process put its preparation there meanwhile: keep that one
    if had_old:
      os.rename(aside, old)
    raise
