"""Ctrl-C inside `interrupts.deferred` waits for the block, then interrupts."""

import os
import signal
import threading

import pytest

from attn_jax.core import interrupts


@pytest.fixture(autouse=True)
def python_s_own_sigint_handler():
  """Python's own handler, as a terminal's Ctrl-C finds it; a CI job started
  in the background may inherit SIGINT ignored."""
  previous = signal.signal(signal.SIGINT, signal.default_int_handler)
  yield
  signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_inside_the_block_is_raised_after_it():
  done = []
  with pytest.raises(KeyboardInterrupt):
    with interrupts.deferred():
      os.kill(os.getpid(), signal.SIGINT)
      done.append('the block went on to its end')
  assert done == ['the block went on to its end']
  assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_a_ctrl_c_nothing_is_raised_and_the_handler_is_back():
  with interrupts.deferred():
    pass
  assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_callers_own_handler_and_other_threads_are_left_alone():
  seen = []
  previous = signal.signal(signal.SIGINT, lambda *_: seen.append('own'))
  try:
    with interrupts.deferred():
      os.kill(os.getpid(), signal.SIGINT)
    assert seen == ['own']
  finally:
    signal.signal(signal.SIGINT, previous)
  errors = []
  def other():
    try:
      with interrupts.deferred():
        pass
    except Exception as e:  # pylint: disable=broad-except
      errors.append(e)
  thread = threading.Thread(target=other)
  thread.start()
  thread.join()
  assert not errors
