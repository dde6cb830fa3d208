"""tfds builders for the original distribution files, read without TensorFlow.

`load_raw('imdb')` finds the archive (see `attn_jax.data.sources`), prepares
it once into the tfds data dir as array_record (`$TFDS_DATA_DIR` respected)
and reads every split back through a tfds data source.
"""

from typing import Optional

import numpy as np

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
  builder = make_builder(dataset, files, tfds_data_dir)
  if not builder.is_prepared():
    builder.download_and_prepare()
  splits = builder.as_data_source()
  return {name: [{k: _plain(v) for k, v in record.items()}
                 for record in source.__getitems__(range(len(source)))]
          for name, source in splits.items()}
