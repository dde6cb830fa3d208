"""Ctrl-C held back while a write must finish whole.

A KeyboardInterrupt raised inside orbax's save unwinds the asyncio loop the
save runs on while tensorstore's threads still hold callbacks for it; they
then print "Event loop is closed" tracebacks after the run's one line (the
fault suite's Ctrl-C case saw it about once in 30 trials). A save takes a
second or so: Ctrl-C during it takes effect once it is committed.
"""

import contextlib
import signal
import threading
from typing import Iterator


@contextlib.contextmanager
def deferred() -> Iterator[None]:
  """Holds SIGINT for the block; raises KeyboardInterrupt after it if one came.

  Outside the main thread (where Python cannot set handlers) or where SIGINT
  is not Python's default handler (a caller's own), the block runs as it is.
  """
  if (threading.current_thread() is not threading.main_thread()
      or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
    yield
    return
  caught = []
  previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
  try:
    yield
  finally:
    signal.signal(signal.SIGINT, previous)
  if caught:
    raise KeyboardInterrupt
