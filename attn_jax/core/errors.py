"""Errors a user can act on.

Each message names the problem and the fix; `run.py` prints them without a
traceback. Anything else escaping the library is a bug.
"""

import os
import sys
from typing import NoReturn


class AttnJaxError(Exception):
  """Base class: a problem with the input, not with attn-jax."""


class ConfigError(AttnJaxError):
  """An unknown config key, or a value outside the valid choices."""


class DataError(AttnJaxError):
  """Missing, truncated or malformed data, or an unusable document."""


class CheckpointError(AttnJaxError):
  """A workdir whose checkpoint does not match the requested config or data."""


class TrainingError(AttnJaxError):
  """Training cannot continue (for example the loss became NaN)."""


class StorageError(AttnJaxError):
  """A file cannot be written: the disk is full, the path read-only or not permitted."""


class NothingToReport(AttnJaxError):
  """A report command was pointed at something that holds nothing it reads:
  a missing path, a folder where a file belongs, a run without the results."""


class IntegrityError(AttnJaxError):
  """A file on disk is not what was recorded when it was written (sha256 differs)."""


def leave(code: int) -> NoReturn:
  """Exits with `code` at once, once the last line is printed, skipping the
  interpreter's shutdown: every file is atomic and the leases are released on
  the way out, but an abandoned checkpoint save's pending tensorstore writes
  print tracebacks into orbax's closed event loop at shutdown."""
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(code)  # pylint: disable=protected-access


def exit_interrupted(kept: str) -> NoReturn:
  """Ends a command-line tool after Ctrl-C with one line: `interrupted: <kept>`."""
  print(f'\ninterrupted: {kept}', file=sys.stderr)
  leave(130)


def exit_with(error, code: int = 2) -> NoReturn:
  """Ends a command-line tool with `error: <message>` on stderr (no traceback)."""
  print(f'error: {error}', file=sys.stderr)
  sys.exit(code)
