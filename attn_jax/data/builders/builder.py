"""Shared machinery of the tfds builders: files in, or downloaded."""

import csv
import gzip
import os
import tarfile
import zlib
from typing import Iterable, Optional

import tensorflow_datasets as tfds

from attn_jax.data import sources
from attn_jax.core.errors import DataError

# Errors that mean "this file is damaged", whatever the container format.
CORRUPT_FILE_ERRORS = (tarfile.TarError, EOFError, zlib.error, OSError, UnicodeDecodeError,
                       csv.Error)


class NonstandardDataWarning(UserWarning):
  """The source files are not the reference release (another size or sha256)."""


def check_official_count(notes: list[str], path: str, what: str, count: int,
                         official: int) -> None:
  """Notes a file that holds another number of items than the official one.

  A text file cut at a line boundary still parses; this is how such a
  truncation (or a different copy) shows. Not an error: subsets are
  legitimate, but the preparation's source record says so.
  """
  if count != official:
    notes.append(f'{os.path.basename(path)}: {count} {what}, the official release has '
                 f'{official}: truncated, or a different copy?')


def corrupt(path: str, error: Exception) -> DataError:
  return DataError(
      f'{path} is truncated or corrupt ({type(error).__name__}: {error}). '
      'Replace it with a complete copy of the original file (nothing was prepared from it; '
      'an earlier prepared copy, if any, is kept).')


def malformed(path: str, what: str) -> DataError:
  return DataError(f'{path} is malformed: {what}. Is it the original distribution file?')


def read_text(path: str) -> str:
  """A UTF-8 text file, gunzipped when it is gzip (whatever its name).

  Raises:
    DataError: the file is truncated or corrupt, or not valid UTF-8 (naming
      the line and byte).
  """
  try:
    with open(path, 'rb') as f:
      raw = f.read()
    gzipped = raw[:2] == b'\x1f\x8b'
    if gzipped:
      raw = gzip.decompress(raw)
  except CORRUPT_FILE_ERRORS as e:
    raise corrupt(path, e) from e
  return decode_utf8(raw, path + (' (uncompressed)' if gzipped else ''))


def decode_utf8(data: bytes, where: str) -> str:
  """`data` as text; invalid UTF-8 is a DataError naming the line and byte."""
  try:
    return data.decode('utf-8')
  except UnicodeDecodeError as e:
    line = data.count(b'\n', 0, e.start) + 1
    cut = (' (cut inside a character: truncated?)'
           if e.reason == 'unexpected end of data' and e.end == len(data) else '')
    raise DataError(
        f'{where}: line {line} (byte {e.start}) is not valid UTF-8 ({e.reason}){cut}. Replace '
        'it with the original UTF-8 file (re-encoded, e.g. to latin-1, or damaged?).') from e


class ArchiveBuilder(tfds.core.GeneratorBasedBuilder, skip_registration=True):
  """A builder that prepares from the original distribution files.

  Subclasses set `DATASET` (a dataset with files: `attn_jax.data.datasets`) and implement
  `_info` and `_read(files) -> {split: [(key, example), ...]}`. `files` maps
  a role of the source to a local path; when the builder is given none, the
  official files are downloaded.
  """
  DATASET: str = ''
  VERSION = tfds.core.Version('1.0.0')
  RELEASE_NOTES = {'1.0.0': 'Initial release.'}

  def __init__(self, *, files: Optional[dict[str, str]] = None, **kwargs):
    self._files = files
    self.source_files = files  # what the last preparation read: given or downloaded
    self.count_notes = []  # item-count differences from the official release met reading
    super().__init__(**kwargs)

  # tfds prints these two lines itself; `builders.prepare` says what is
  # prepared, with a time estimate, instead.
  def _log_download_bytes(self) -> None:
    pass

  def _log_download_done(self) -> None:
    pass

  def dataset_info_from_configs(self, **kwargs):
    info = super().dataset_info_from_configs(**kwargs)
    # tfds looks for an unprepared dataset's metadata on its GCS bucket, first
    # making an empty temporary folder that it never removes (one per builder:
    # hundreds in /tmp after the test suite). These datasets come from local
    # or official files only, so there is nothing to look for.
    info.initialize_from_bucket = lambda: None
    return info

  def _split_generators(self, dl_manager):
    files = self._files
    if files is None:
      files = sources.source(self.DATASET).download(dl_manager)
    self.source_files, self.count_notes = files, []
    return {split: self._generate_examples(examples)
            for split, examples in self._read(files).items()}

  def _generate_examples(self, examples: Iterable):
    yield from examples

  def _read(self, files: dict[str, str]) -> dict[str, list]:
    raise NotImplementedError


def tar_members(path: str):
  """Yields (member name, bytes) of the regular files of a .tar(.gz) archive."""
  try:
    with tarfile.open(path, 'r:*') as tar:
      for member in tar:
        if member.isfile():
          yield member.name, tar.extractfile(member).read()
  except CORRUPT_FILE_ERRORS as e:
    raise corrupt(path, e) from e


def in_key_order(path: str, splits: dict[str, list], expected: str,
                 official: dict[str, int], notes: list[str]) -> dict[str, list]:
  """Sorts each split's (sort key tuple, example) pairs by key and joins the
  key into a string; a split with no example means a malformed archive, one
  of another size than the official release a note."""
  ordered = {}
  for split, examples in splits.items():
    if not examples:
      raise malformed(path, 'no ' + expected.format(split=split))
    check_official_count(notes, path, expected.format(split=split), len(examples),
                         official[split])
    examples.sort(key=lambda kv: kv[0])
    ordered[split] = [('/'.join(map(str, key)), example) for key, example in examples]
  return ordered


def member_parts(name: str) -> list[str]:
  return [p for p in name.replace(os.sep, '/').split('/') if p not in ('', '.')]
