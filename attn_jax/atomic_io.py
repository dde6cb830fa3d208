"""Write result files so that a killed run never leaves a half-written one."""

import json
import os
import tempfile
from typing import Any, Callable, IO


def atomic_write(path: str, write: Callable[[IO], None], mode: str = 'w') -> None:
  """Calls `write(file)` on a temporary file, then renames it to `path`.

  The rename is atomic on POSIX, so readers see either the old file or the
  complete new one.
  """
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  fd, tmp = tempfile.mkstemp(dir=directory, prefix='.' + os.path.basename(path) + '.')
  try:
    with os.fdopen(fd, mode) as f:
      write(f)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise


def write_json(path: str, obj: Any) -> None:
  atomic_write(path, lambda f: json.dump(obj, f, indent=2, sort_keys=True))


def write_jsonl(path: str, records: list[dict]) -> None:
  atomic_write(path, lambda f: f.writelines(json.dumps(r, sort_keys=True) + '\n' for r in records))


def read_json(path: str) -> Any:
  with open(path) as f:
    return json.load(f)
