"""Folders the project writes into beside a user's own files: it overwrites and
removes only what it wrote there.

A folder the project writes into (a report's `--out`) holds a manifest,
`.attn_jax-written.json`: the files (relative paths) the project wrote
there and by which command. Before writing, `claim` refuses, in one line,

* a non-empty folder without a manifest (someone else's folder), unless
  `force` — and then nothing of theirs is overwritten or removed either;
* any file it is about to write that exists and is not in the manifest.

`record` adds what was written; `remove_stale` removes the files of an
earlier write that this one did not write again — only files the manifest
lists, never another file of the folder.
"""

import json
import os
from typing import Iterable

from attn_jax.core import atomic_io
from attn_jax.core.errors import AttnJaxError

MANIFEST = '.attn_jax-written.json'


class NotOurs(AttnJaxError):
  """The folder or a file in it was not written by the project."""


def _manifest_path(folder: str) -> str:
  return os.path.join(folder, MANIFEST)


def written(folder: str) -> set[str]:
  """The relative paths the manifest of `folder` lists (empty without one).

  Raises:
    NotOurs: the manifest is damaged (it cannot say what is ours).
  """
  path = _manifest_path(folder)
  if not os.path.exists(path):
    return set()
  try:
    with open(path, encoding='utf-8') as f:
      files = json.load(f)['files']
    assert isinstance(files, list) and all(isinstance(x, str) for x in files)
  except (OSError, ValueError, KeyError, TypeError, AssertionError):
    raise NotOurs(f'{path} is damaged, so what attn-jax wrote in {folder} is not known: remove it if the folder '
                  'is a report attn-jax wrote, or name another folder') from None
  return set(files)


def _user_files(folder: str, ours: set[str]) -> list[str]:
  """Files under `folder` the manifest does not list (relative paths, sorted)."""
  found = []
  for here, _, names in os.walk(folder):
    for name in names:
      rel = os.path.relpath(os.path.join(here, name), folder)
      if rel != MANIFEST and rel not in ours:
        found.append(rel)
  return sorted(found)


def claim(folder: str, planned: Iterable[str], what: str, force: bool = False) -> set[str]:
  """Checks that writing `planned` (relative paths) into `folder` loses nothing
  of anyone else's, then makes the folder; returns what the project wrote
  there before.

  Args:
    folder: the output folder (made if missing).
    planned: the files this write will write, relative to `folder`.
    what: the option that names the folder, for the message ('--out').
    force: write into a non-empty folder the project did not write (its
      files are left alone: a planned file among them is still refused).

  Raises:
    NotOurs: the folder holds files the project did not write (without
      `force`), or a planned file would overwrite one of them.
  """
  atomic_io.require_folder(folder, what, 'name a folder (new, or one attn-jax wrote before)')
  ours = written(folder)
  theirs = _user_files(folder, ours) if os.path.isdir(folder) else []
  clash = sorted(set(planned) & set(theirs))
  if clash:
    raise NotOurs(f'{what} {folder}: {", ".join(clash[:3])}{" …" if len(clash) > 3 else ""} would be overwritten, '
                  'and attn-jax did not write it: name another folder (nothing was written)')
  if theirs and not ours and not force:
    raise NotOurs(f'{what} {folder} holds files attn-jax did not write ({", ".join(theirs[:3])}'
                  f'{" …" if len(theirs) > 3 else ""}): name a new folder, or add --force to write beside them '
                  '(nothing of theirs is overwritten or removed)')
  os.makedirs(folder, exist_ok=True)
  return ours


def record(folder: str, files: Iterable[str], command: str = '') -> None:
  """Adds `files` (relative paths) to the manifest of `folder`."""
  listed = written(folder) | set(files)
  atomic_io.write_json(_manifest_path(folder), {'files': sorted(listed), 'command': command})


def remove_stale(folder: str, kept: Iterable[str]) -> list[str]:
  """Removes the files the manifest lists that are not in `kept` (an earlier
  write's, not written again), and drops them from the manifest; returns them."""
  kept = set(kept)
  ours = written(folder)
  stale = sorted(ours - kept)
  for rel in stale:
    try:
      os.remove(os.path.join(folder, rel))
    except FileNotFoundError:
      pass
  if stale:
    with open(_manifest_path(folder), encoding='utf-8') as f:
      command = json.load(f).get('command', '')
    atomic_io.write_json(_manifest_path(folder), {'files': sorted(ours & kept), 'command': command})
  return stale
