"""Prepares a dataset beside the prepared copy, and swaps it in only on success.

tfds prepares in place: asked to prepare again (the source files changed),
it deletes the existing copy first, so a truncated new archive or a full disk
would lose a good prepared copy. Here tfds prepares into a temporary data dir
inside the real one (same file system, and writable whenever the real one is),
and the finished version folder replaces the old one by two renames. On any
failure only the temporary folder is removed. A lease per dataset and data
dir lets one process prepare while the others wait and then use its copy;
a staging folder is removed only by the next holder of its dataset's lease,
so never while its owner lives.
"""

import contextlib
import errno
import os
import shutil
import tempfile
from typing import Callable

from attn_jax.core import atomic_io, leases
from attn_jax.core.errors import AttnJaxError, StorageError

STAGING_PREFIX = '.attn_jax-preparing-'

# Writers in C++ (array_record) report a full disk as text, not as an OSError.
# tfds checks the free space itself first ('Not enough disk space').
_STORAGE_TEXT = {'No space left on device': errno.ENOSPC, 'Not enough disk space': errno.ENOSPC,
                 'Read-only file system': errno.EROFS, 'Permission denied': errno.EACCES,
                 'Disk quota exceeded': errno.EDQUOT}


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
      if (not isinstance(error, OSError) or error.errno is None) and text in str(error):
        return OSError(code, os.strerror(code))
    error = error.__cause__ or error.__context__
  return None


def storage_error(dataset: str, tfds_data_dir: str, error: OSError) -> StorageError:
  return StorageError(
      f'cannot prepare {dataset} in the tfds data dir {tfds_data_dir}: {os.strerror(error.errno)} '
      f'(errno {error.errno}). Nothing half-prepared was left and an earlier prepared copy, if '
      'any, is kept; free space there or choose a writable folder with '
      '--config.data.tfds_data_dir or $TFDS_DATA_DIR, then rerun.')


def lease_path(root: str, dataset: str) -> str:
  """The lease one preparation of `dataset` in tfds data dir `root` holds."""
  return os.path.join(root, f'{STAGING_PREFIX}{dataset}{leases.SUFFIX}')


def _remove_stale_staging(root: str, dataset: str) -> None:
  """Staging folders of `dataset` left by a killed preparation. Called under
  the dataset's lease, so none of them belongs to a live preparation; other
  datasets' staging folders (their own leases) are never touched."""
  for name in os.listdir(root):
    if name.startswith(f'{STAGING_PREFIX}{dataset}-') and not name.endswith(leases.SUFFIX):
      shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def prepare_staged(dataset: str, root: str, version_dir: str,
                   prepare: Callable[[str], str], ready: Callable[[], bool] = lambda: False,
                   log: Callable[[str], None] = print) -> None:
  """Runs `prepare(staging_root) -> staged version dir`, then swaps that in.

  One process at a time prepares a dataset in a data dir: the others wait
  for its lease, then find the copy it prepared (`ready()`) and use it.

  Args:
    dataset: name for messages.
    root: the real tfds data dir.
    version_dir: the real prepared folder, `root/<name>[/<config>]/<version>`.
    prepare: prepares under the given tfds data dir and returns the version
      folder it made there, with every file the prepared copy needs.
    ready: whether a prepared copy that needs no new preparation is there
      now (asked once the lease is held: another process may have made it).
    log: where the waiting lines go.

  Raises:
    StorageError: the disk is full or `root` is not writable.
  """
  atomic_io.require_folder(root, 'the tfds data dir', 'point --config.data.tfds_data_dir or $TFDS_DATA_DIR at '
                          'a folder (it is created if missing)')
  with contextlib.ExitStack() as stack:
    try:
      os.makedirs(root, exist_ok=True)
      stack.enter_context(leases.lease(lease_path(root, dataset), f'preparation of {dataset} in {root}',
                                       log=log))
    except OSError as e:
      if atomic_io.is_storage_error(e):
        raise storage_error(dataset, root, e) from e
      raise
    if not ready():
      _prepare_under_lease(dataset, root, version_dir, prepare)


def _prepare_under_lease(dataset: str, root: str, version_dir: str, prepare: Callable[[str], str]) -> None:
  try:
    _remove_stale_staging(root, dataset)
    staging = tempfile.mkdtemp(prefix=f'{STAGING_PREFIX}{dataset}-', dir=root)
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
