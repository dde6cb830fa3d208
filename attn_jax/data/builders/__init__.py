"""tfds builders for the original distribution files, read without TensorFlow.

`load_raw('imdb')` finds the archive (see `attn_jax.data.sources`), prepares
it once into the tfds data dir as array_record (`$TFDS_DATA_DIR` respected)
— again whenever the source files change — and reads every split back
through a tfds data source.
"""

import hashlib
import json
import os
from typing import Optional

import numpy as np
import tensorflow_datasets as tfds

from attn_jax import atomic_io
from attn_jax.data import sources
from attn_jax.data.builders.ag_news import AgNewsCsv
from attn_jax.data.builders.imdb import AclImdb
from attn_jax.data.builders.newsgroups import Newsgroups20Bydate
from attn_jax.data.builders.sst import SstTrees

BUILDERS = {'sst': SstTrees, 'imdb': AclImdb, '20news': Newsgroups20Bydate, 'agnews': AgNewsCsv}


def make_builder(dataset: str, files: Optional[dict[str, str]], tfds_data_dir: Optional[str]):
  """The builder of `dataset`; `files=None` means download the official files."""
  kwargs = {}
  if dataset == 'agnews':
    kwargs['config'] = 'test_only' if files is not None and 'train' not in files else 'train_test'
  return BUILDERS[dataset](files=files, data_dir=tfds_data_dir, file_format='array_record', **kwargs)


SIGNATURE_FILE = 'attn_jax_sources.json'


def source_signature(files: dict[str, str]) -> dict:
  """Name, size and sha256 of each source file."""
  signature = {}
  for role, path in sorted(files.items()):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
      for block in iter(lambda: f.read(1 << 20), b''):
        digest.update(block)
    signature[role] = {'name': os.path.basename(path), 'bytes': os.path.getsize(path),
                       'sha256': digest.hexdigest()}
  return signature


def _prepared_from(builder) -> Optional[dict]:
  path = os.path.join(builder.data_dir, SIGNATURE_FILE)
  if not os.path.exists(path):
    return None
  with open(path) as f:
    return json.load(f)


def prepare(builder, files: Optional[dict[str, str]]) -> None:
  """Prepares once, and again whenever the local source files change."""
  if files is None:
    if not builder.is_prepared():
      builder.download_and_prepare()
    return
  signature = source_signature(files)
  if builder.is_prepared() and _prepared_from(builder) == signature:
    return
  mode = tfds.download.GenerateMode.REUSE_CACHE_IF_EXISTS  # rebuild over a stale preparation
  builder.download_and_prepare(download_config=tfds.download.DownloadConfig(download_mode=mode))
  atomic_io.write_json(os.path.join(builder.data_dir, SIGNATURE_FILE), signature)


def _plain(value):
  if isinstance(value, bytes):
    return value.decode('utf-8')
  if isinstance(value, np.generic):
    return value.item()
  return value


def load_raw(dataset: str, manual_dir: Optional[str] = None,
             tfds_data_dir: Optional[str] = None) -> dict[str, list[dict]]:
  """Every split of `dataset` as a list of plain-Python records.

  Args:
    dataset: 'sst', 'imdb', '20news' or 'agnews'.
    manual_dir: folder of the original files; None falls back to
      `$ATTN_JAX_DATA`, then to downloading.
    tfds_data_dir: where prepared data lives; None is tfds's default.

  Raises:
    DataError: files missing, truncated or malformed (before any preparation
      when they are missing).
  """
  data_dir = sources.archive_dir(manual_dir)
  files = sources.locate(dataset, data_dir) if data_dir else None
  prepare(make_builder(dataset, files, tfds_data_dir), files)
  splits = make_builder(dataset, files, tfds_data_dir).as_data_source()
  return {name: [{k: _plain(v) for k, v in record.items()}
                 for record in source.__getitems__(range(len(source)))]
          for name, source in splits.items()}
