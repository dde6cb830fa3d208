"""What a preparation was made from, and what is unusual about it.

A text file cut at a line boundary, or another copy of a dataset, still
parses; results computed on it must say so. Each preparation therefore keeps
a record beside the prepared data:

    {'standard': bool,   # every file is byte-identical to the reference release
                         # and every split has the official number of items
     'files': {role: {'name', 'bytes', 'sha256', 'matches_reference': bool | None}},
     'notes': [str, ...]}  # one line per unusual thing, empty when standard

`matches_reference` is None for a file whose reference sha256 is unknown
(AG News train.csv); such a file is unverified, so not standard.
"""

import os
from typing import Optional

from attn_jax.core import atomic_io
from attn_jax.data import sources

RECORD_FILE = 'attn_jax_source_record.json'

UNRECORDED = {'standard': False, 'files': {}, 'notes': [
    'this prepared copy was made by an earlier attn-jax that kept no record of its source files']}

SYNTHETIC = {'standard': True, 'files': {}, 'notes': []}


def file_entry(dataset: str, role: str, name: str, size: int, sha256: str,
               git_blob: Optional[str] = None) -> dict:
  known = sources.reference(dataset).get(role, ())
  matches = (any(k.sha256 == sha256 or (git_blob is not None and k.git_blob == git_blob) for k in known)
             if known else None)
  return {'name': name, 'bytes': size, 'sha256': sha256, 'matches_reference': matches}


def make(dataset: str, signature: dict, count_notes: list[str]) -> dict:
  """The record of a preparation from the files of `signature` (see
  `builders.source_signature`), with the item-count differences met reading them."""
  files = {role: file_entry(dataset, role, s['name'], s['bytes'], s['sha256'], s.get('git_blob'))
           for role, s in sorted(signature.items())}
  notes = []
  for role, entry in files.items():
    if entry['matches_reference'] is None:
      notes.append(f'{entry["name"]}: no reference sha256 is known, so the file is unverified')
    elif not entry['matches_reference']:
      known = ', '.join(k.name for k in sources.reference(dataset)[role])
      notes.append(f'{entry["name"]}: {entry["bytes"]} bytes, sha256 {entry["sha256"][:12]}... '
                   f'differs from the reference release ({known})')
  for role in sorted(set(sources.source(dataset).files) - set(files)):
    notes.append(f'{sources.official_name(dataset, role)}: absent; its split is not available')
  notes.extend(count_notes)
  standard = all(f['matches_reference'] for f in files.values()) and not count_notes
  return {'standard': bool(standard), 'files': files, 'notes': notes}


def write(prepared_dir: str, record: dict) -> None:
  atomic_io.write_json(os.path.join(prepared_dir, RECORD_FILE), record)


def read(prepared_dir: str) -> Optional[dict]:
  path = os.path.join(prepared_dir, RECORD_FILE)
  return atomic_io.read_json_object(path)  # None when missing or damaged: prepared again


def warning_line(dataset: str, record: dict, prepared_dir: str) -> str:
  """One line saying what is unusual and where it is recorded."""
  return (f'{sources.source(dataset).title}: the source files are not the reference release: '
          + '; '.join(record['notes'])
          + f'. Check this before comparing results with published ones; recorded in '
          f'{os.path.join(prepared_dir, RECORD_FILE)} and in data.json under "source".')
