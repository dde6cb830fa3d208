"""What the command-line tools print meets any terminal and any reader.

* A terminal whose encoding cannot show a character the tables use (a
  latin-1 or ASCII locale; `PYTHONIOENCODING`) gets a readable stand-in —
  `==` for ≡, `!=` for ≠, `tau` for τ, `+/-` for ± — or `\\u....` for
  the rest, never a `UnicodeEncodeError`.
* A reader that stops reading (`… | head -1`) ends the tool quietly with
  exit 0, as `head` and `grep -q` expect, not with a `BrokenPipeError`.

Each tool calls `setup()` first and runs its work inside `quiet_broken_pipe()`.
"""

import codecs
import contextlib
import os
import sys

# Stand-ins for the symbols the reports print, where the terminal's encoding has none.
STAND_INS = {'≡': '==', '≠': '!=', 'Δ': 'D', 'τ': 'tau', 'α': 'alpha', '±': '+/-', '→': '->', '←': '<-',
             '–': '-', '—': '-', '−': '-', '…': '...', '×': 'x', '≥': '>=', '≤': '<=', '≫': '>>', '²': '^2',
             '✓': 'ok', '✗': 'x', '·': '.', 'ŷ': 'y^', '̃': '~', '≈': '~', '√': 'sqrt', 'λ': 'lambda',
             'ρ': 'rho', 'σ': 'sigma', '∂': 'd', '‖': '||', '′': "'", '’': "'", '“': '"', '”': '"', '‑': '-'}
HANDLER = 'attn_jax_stand_in'


def _stand_in(error: UnicodeEncodeError):
  text = error.object[error.start:error.end]
  return ''.join(STAND_INS.get(c, c.encode('ascii', 'backslashreplace').decode('ascii')) for c in text), error.end


codecs.register_error(HANDLER, _stand_in)


def setup() -> None:
  """Makes stdout and stderr replace what their encoding cannot show (`STAND_INS`)."""
  for stream in (sys.stdout, sys.stderr):
    with contextlib.suppress(AttributeError, ValueError):  # a replaced stream (pytest's capture) may not reconfigure
      stream.reconfigure(errors=HANDLER)


@contextlib.contextmanager
def quiet_broken_pipe():
  """Ends the process quietly (exit 0) when the reader of stdout has gone."""
  try:
    yield
  except BrokenPipeError:
    # Python's own advice: point stdout at devnull so the flush at exit does not raise again.
    with contextlib.suppress(OSError, ValueError):
      devnull = os.open(os.devnull, os.O_WRONLY)
      os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


def run(main) -> None:
  """A command-line tool's `main()` with `setup()` and `quiet_broken_pipe()`."""
  setup()
  with quiet_broken_pipe():
    main()
