"""sha256 records of files and of JSON records, and checking them.

Three things on disk carry them: a stage summary (its results and figures,
and its own content), a checkpoint step folder (`sha256.json` of its files)
and a finished training record (its own content). One way to make and to
check them, so a damaged file reads the same wherever it is met.
"""

import hashlib
import os
from typing import Optional

from attn_jax.core import atomic_io

_CACHE: dict = {}


def of_bytes(data: bytes) -> str:
  return hashlib.sha256(data).hexdigest()


def of_file(path: str) -> str:
  """sha256 of a file, remembered while its inode, size and mtime stay: a
  report reads each stage's results several times (one per statistic)."""
  st = os.stat(path)
  stamp = (os.path.abspath(path), st.st_ino, st.st_size, st.st_mtime_ns)
  if stamp not in _CACHE:
    _CACHE[stamp] = atomic_io.sha256_file(path)
  return _CACHE[stamp]


def of_files(directory: str, names) -> dict[str, str]:
  """{name: sha256} of files under `directory`, by relative name."""
  return {name: of_file(os.path.join(directory, name)) for name in sorted(names)}


def first_mismatch(directory: str, recorded: dict) -> Optional[tuple[str, str]]:
  """(relative name, 'missing' | 'changed' | 'unreadable (why)') of the first
  file of `recorded` whose sha256 differs, or None when all match."""
  for name, digest in sorted(recorded.items()):
    path = os.path.join(directory, name)
    try:
      if of_file(path) != digest:
        return name, 'changed'
    except FileNotFoundError:
      return name, 'missing'
    except OSError as e:
      return name, f'unreadable ({e.strerror or type(e).__name__})'
  return None


def of_record(record: dict, field: str) -> str:
  """sha256 of a JSON record's content without its own `field`."""
  return of_bytes(atomic_io.json_bytes({k: v for k, v in record.items() if k != field}))


def sealed(record: dict, field: str) -> dict:
  """`record` with the sha256 of its own content in `field`, so an edited
  number in it is caught like a changed file."""
  return {**record, field: of_record(record, field)}


def is_sealed(record: dict, field: str) -> bool:
  return isinstance(record, dict) and record.get(field) == of_record(record, field)
