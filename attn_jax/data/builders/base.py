"""Shared machinery of the tfds builders: files in, or downloaded."""

import csv
import os
import tarfile
import warnings
import zlib
from typing import Iterable, Optional

import tensorflow_datasets as tfds

from attn_jax.data import sources
from attn_jax.errors import DataError

# Errors that mean "this file is damaged", whatever the container format.
CORRUPT_FILE_ERRORS = (tarfile.TarError, EOFError, zlib.error, OSError, UnicodeDecodeError,
                       csv.Error)


class NonstandardDataWarning(UserWarning):
  """A source file parses but does not have the official release's size."""


def check_official_count(path: str, what: str, count: int, official: int) -> None:
  """Warns when a file holds another number of items than the official one.

  A text file cut at a line boundary still parses; this is how such a
  truncation (or a different copy) shows. Not an error: subsets are legitimate.
  """
  if count != official:
    warnings.warn(f'{path}: {count} {what}, the official release has {official}: '
                  'truncated, or a different copy?', NonstandardDataWarning, stacklevel=2)


def corrupt(path: str, error: Exception) -> DataError:
  return DataError(
      f'{path} is truncated or corrupt ({type(error).__name__}: {error}). '
      'Replace it with a complete copy of the original file; delete any '
      'partly prepared copy under the tfds data dir if one was written.')


def malformed(path: str, what: str) -> DataError:
  return DataError(f'{path} is malformed: {what}. Is it the original distribution file?')


class ArchiveBuilder(tfds.core.GeneratorBasedBuilder, skip_registration=True):
  """A builder that prepares from the original distribution files.

  Subclasses set `DATASET` (a key of `sources.SOURCES`) and implement
  `_info` and `_read(files) -> {split: [(key, example), ...]}`. `files` maps
  a role of the source to a local path; when the builder is given none, the
  official files are downloaded.
  """
  DATASET: str = ''
  VERSION = tfds.core.Version('1.0.0')
  RELEASE_NOTES = {'1.0.0': 'Initial release.'}

  def __init__(self, *, files: Optional[dict[str, str]] = None, **kwargs):
    self._files = files
    super().__init__(**kwargs)

  def _split_generators(self, dl_manager):
    files = self._files
    if files is None:
      files = sources.SOURCES[self.DATASET].download(dl_manager)
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
                 official: dict[str, int]) -> dict[str, list]:
  """Sorts each split's (sort key tuple, example) pairs by key and joins the
  key into a string; a split with no example means a malformed archive."""
  ordered = {}
  for split, examples in splits.items():
    if not examples:
      raise malformed(path, 'no ' + expected.format(split=split))
    check_official_count(path, expected.format(split=split), len(examples), official[split])
    examples.sort(key=lambda kv: kv[0])
    ordered[split] = [('/'.join(map(str, key)), example) for key, example in examples]
  return ordered


def member_parts(name: str) -> list[str]:
  return [p for p in name.replace(os.sep, '/').split('/') if p not in ('', '.')]
