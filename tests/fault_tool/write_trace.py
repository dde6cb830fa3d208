"""What a process actually wrote: its file creations, renames and removals, from strace.

The paused-holder cases count a woken holder's writes after a takeover from
the system calls it made, not from attn-jax's own logging (which would miss a
save already in flight): `traced(command, prefix)` runs a command under
`strace -f`, and `writes(prefix, root)` lists every successful call that
created, renamed, removed or truncated something under `root`, with its time.
Writes into an open file descriptor are not calls on a path and are not
listed; the files they go to were created (and listed) by an `open` first.
"""

import glob
import os
import re
import shutil
from typing import Optional

CALLS = ('open', 'openat', 'creat', 'rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'mkdir',
         'mkdirat', 'rmdir', 'link', 'linkat', 'symlink', 'symlinkat', 'truncate')
_LINE = re.compile(r'^(?P<time>\d+\.\d+) (?P<call>\w+)\((?P<args>.*)\) += (?P<ret>-?\d+)')
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DIRFD = re.compile(r'(?:AT_FDCWD|\d+)<([^>]*)>, "((?:[^"\\]|\\.)*)"')
_WRITING = ('O_WRONLY', 'O_RDWR', 'O_CREAT', 'O_TRUNC')


def available() -> bool:
  return shutil.which('strace') is not None


def traced(command: list, prefix: str) -> list:
  """`command` under strace, one trace file per thread at `prefix.<tid>`."""
  os.makedirs(os.path.dirname(prefix), exist_ok=True)
  return ['strace', '-f', '-ff', '--seccomp-bpf', '-ttt', '-y', '-qq', '-e', 'trace=' + ','.join(CALLS),
          '-o', prefix, *command]


def _paths(call: str, args: str) -> list[str]:
  """The absolute paths a call names (a relative one joined to its dirfd's folder)."""
  found = [os.path.join(folder, path) for folder, path in _DIRFD.findall(args)]
  if not found:
    found = _STRING.findall(args)
  if call in ('open', 'openat', 'creat'):
    found = found[:1]
  return [os.path.normpath(p) for p in found]


def _writes(call: str, args: str) -> bool:
  if call in ('open', 'openat'):
    return any(flag in args for flag in _WRITING)
  return True


def writes(prefix: str, root: str, since: Optional[float] = None) -> list[dict]:
  """Successful writing calls on paths under `root` (at or after `since`):
  [{'time', 'call', 'paths'}], oldest first."""
  roots = {os.path.abspath(root), os.path.realpath(root)}
  found = []
  for name in glob.glob(prefix + '.*'):
    with open(name, errors='replace') as f:
      for line in f:
        m = _LINE.match(line)
        if not m or m['call'] not in CALLS or int(m['ret']) < 0 or not _writes(m['call'], m['args']):
          continue
        when = float(m['time'])
        if since is not None and when < since:
          continue
        paths = [p for p in _paths(m['call'], m['args'])
                 if any(p == r or p.startswith(r + os.sep) for r in roots)]
        if paths:
          found.append({'time': when, 'call': m['call'], 'paths': paths})
  return sorted(found, key=lambda w: w['time'])
