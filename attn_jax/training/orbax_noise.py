"""What orbax and tensorstore print around a failure that attn-jax reports
in one line: their logged tracebacks, and the noise of a failed save."""

import contextlib
import logging
import os
import sys
import tempfile


class _NotOrbax(logging.Filter):

  def filter(self, record):
    return f'{os.sep}orbax{os.sep}' not in record.pathname


@contextlib.contextmanager
def quiet_logs():
  """Orbax logs the traceback of a failure before raising it; the store
  turns it into a one-line error, which those logs would bury."""
  logger, only_ours = logging.getLogger('absl'), _NotOrbax()
  logger.addFilter(only_ours)
  try:
    yield
  finally:
    logger.removeFilter(only_ours)


# After a failed write (a full disk), tensorstore completes its pending writes
# into orbax's already closed event loop, and each prints this traceback
# straight to the process's stderr (not through Python's hooks): noise before
# the one-line error, never the cause. These are its lines.
_LOOP_CLOSED_NOISE = ('Traceback (most recent call last):', 'asyncio/base_events.py',
                      'self._check_closed()', "raise RuntimeError('Event loop is closed')",
                      'RuntimeError: Event loop is closed')


class _NeverRetrieved(logging.Filter):

  def filter(self, record: logging.LogRecord) -> bool:
    return 'was never retrieved' not in record.getMessage()


_NEVER_RETRIEVED = _NeverRetrieved()


def drop_never_retrieved() -> None:
  """After a failed save: its pending writes are garbage-collected later,
  each logging "exception was never retrieved" through asyncio — the same
  failure, already reported in one line."""
  logging.getLogger('asyncio').addFilter(_NEVER_RETRIEVED)


@contextlib.contextmanager
def without_event_loop_tracebacks():
  """Runs the body with file descriptor 2 captured, then writes back what it
  printed without the closed-event-loop tracebacks."""
  sys.stderr.flush()
  saved = os.dup(2)
  with tempfile.TemporaryFile() as captured:
    os.dup2(captured.fileno(), 2)
    try:
      yield
    finally:
      sys.stderr.flush()
      os.dup2(saved, 2)
      os.close(saved)
      captured.seek(0)
      text = captured.read().decode('utf-8', 'replace')
      kept = [line for line in text.splitlines(keepends=True)
              if not any(noise in line for noise in _LOOP_CLOSED_NOISE)]
      if kept:
        sys.stderr.write(''.join(kept))
        sys.stderr.flush()
