"""tfds builders for the original distribution files, read without TensorFlow.

`load_raw('imdb')` finds the archive (see `attn_jax.data.sources`), prepares
it once into the tfds data dir as array_record (`$TFDS_DATA_DIR` respected)
— again whenever the source files change — and reads every split back
through a tfds data source. Each preparation keeps a record of what its
source files were and what is unusual about them (`source_record`).

A preparation says in one line what it prepares and how long it will take
(from the source bytes per second an earlier preparation measured on this
machine, `core.estimates.MeasuredRates`, else a committed benchmark's of a
machine with as many cores), in place of tfds's own lines
("Downloading and preparing dataset Unknown size", its split and shuffle
bars, "Variant folder … has no dataset_info.json"), which say nothing a
user of local files needs; tfds's real warnings still show.
"""

import contextlib
import os
import time
import warnings
from typing import Callable, Optional

import numpy as np

from attn_jax.core import atomic_io, estimates
from attn_jax.data import network, source_record, sources
from attn_jax.data.builders import staging
from attn_jax.data.builders.builder import NonstandardDataWarning
from attn_jax.core.errors import StorageError
from attn_jax.core.registry import DATASETS


def make_builder(dataset: str, files: Optional[dict[str, str]], tfds_data_dir: Optional[str]):
  """The builder of `dataset` (its module's `builder`); `files=None` means
  download the official files."""
  return DATASETS[dataset].builder(files, tfds_data_dir)


SIGNATURE_FILE = 'attn_jax_sources.json'


def source_signature(files: dict[str, str], names: Optional[dict[str, str]] = None,
                     dataset: Optional[str] = None) -> dict:
  """Name (`names[role]`, else the file's), size and sha256 of each source
  file; and its git blob id where `dataset` knows a copy of that role only by
  its blob id (bAbI's 10k task 3 train file)."""
  by_blob = {role for role, known in (sources.reference(dataset) if dataset else {}).items()
             if any(k.git_blob for k in known)}
  signature = {}
  for role, path in sorted(files.items()):
    name = (names or {}).get(role, os.path.basename(path))
    signature[role] = {'name': name, 'bytes': os.path.getsize(path),
                       'sha256': atomic_io.sha256_file(path)}
    if role in by_blob:
      signature[role]['git_blob'] = sources.git_blob_id(path)
  return signature


def _prepared_from(version_dir: str) -> Optional[dict]:
  path = os.path.join(version_dir, SIGNATURE_FILE)
  return atomic_io.read_json_object(path)  # None when missing or damaged: prepared again


def _recorded(dataset: str, version_dir: str) -> Optional[dict]:
  """The source record of a prepared copy.

  A copy prepared before records were kept has only its signature; when its
  files are the reference release, their item counts are the official ones,
  so the record follows from the signature and is added. Otherwise None.
  """
  record = source_record.read(version_dir)
  signature = _prepared_from(version_dir)
  if record is None and signature is not None:
    record = source_record.make(dataset, signature, [])
    if not record.get('standard'):
      return None
    try:
      source_record.write(version_dir, record)
    except StorageError:
      pass  # a read-only shared copy: the record is still returned
  return record


def _rate_key(dataset: str) -> str:
  return estimates.key(what='tfds preparation', dataset=dataset)


def _announce(dataset: str, files: Optional[dict[str, str]], root: str, log) -> int:
  """Says what is prepared where, and how long it will take; returns the source bytes."""
  if files is None:
    log(f'preparing {dataset} for tfds in {root}, once: downloading the official files first')
    return 0
  size = sum(os.path.getsize(f) for f in files.values())
  rate = estimates.MeasuredRates().get(_rate_key(dataset))
  if rate:
    when = f'about {estimates.duration(size / rate)} at the rate an earlier preparation measured here'
  else:
    found = estimates.committed_rate(_rate_key(dataset))
    when = (f'about {estimates.duration(size / found[0])} at the rate measured on a '
            f'{estimates.available_cores()}-core machine: {found[1]}' if found
            else 'no earlier preparation measured on a machine like this one')
  log(f'preparing {dataset} for tfds from {size / 1e6:.1f} MB of source files in {root}, once ({when})')
  return size


@contextlib.contextmanager
def _tfds_quiet():
  """tfds's progress bars off while it prepares (its count of splits and shuffles)."""
  from tensorflow_datasets.core.utils import tqdm_utils  # pylint: disable=g-import-not-at-top
  active = getattr(tqdm_utils, '_active', True)
  tqdm_utils.display_progress_bar(False)
  try:
    yield
  finally:
    tqdm_utils.display_progress_bar(active)


def prepare(dataset: str, files: Optional[dict[str, str]],
            tfds_data_dir: Optional[str], log: Callable[[str], None] = print) -> tuple[dict, str]:
  """Prepares once, and again whenever the local source files change.

  With no local files (`files=None`) an existing prepared copy is used as it
  is, so it works offline; otherwise the official files are downloaded, after
  a quick check that their host answers. A new preparation is made beside the
  old one and replaces it only when complete (see `staging`).

  Returns:
    the preparation's source record (see `source_record`) and its folder.

  Raises:
    DataError: offline with nothing prepared, or damaged source files.
    StorageError: the tfds data dir is full or not writable.
  """
  builder = make_builder(dataset, files, tfds_data_dir)
  version_dir = os.fspath(builder.data_dir)
  signature = None if files is None else source_signature(files, dataset=dataset)

  def ready() -> Optional[dict]:
    """The record of a prepared copy that needs no new preparation, else None."""
    # tfds warns of a version folder without dataset_info.json (one being made): not asked then.
    if not os.path.exists(os.path.join(version_dir, 'dataset_info.json')) or not builder.is_prepared():
      return None
    if files is None:
      return _recorded(dataset, version_dir) or source_record.UNRECORDED
    return _recorded(dataset, version_dir) if _prepared_from(version_dir) == signature else None

  found = ready()
  if found is not None:
    return found, version_dir
  if files is None:
    url = sources.source(dataset).url
    if not network.reachable(url):
      raise sources.offline_error(dataset, network.endpoint(url)[0])
  root = os.fspath(builder.data_dir_root)

  def prepare_in(staging_root: str) -> str:
    size = _announce(dataset, files, root, log)
    started = time.time()
    staged = make_builder(dataset, files, staging_root)
    # Downloads stay in the real data dir, so a failed preparation is not downloaded again.
    with _tfds_quiet():
      staged.download_and_prepare(download_dir=os.path.join(root, 'downloads') if files is None else None)
    if size:
      estimates.MeasuredRates().put(_rate_key(dataset), size / max(time.time() - started, 1e-3),
                                    'source bytes/s')
    official = {role: sources.official_name(dataset, role) for role in staged.source_files}
    made = source_signature(staged.source_files, official if files is None else None, dataset)
    atomic_io.write_json(os.path.join(staged.data_dir, SIGNATURE_FILE), made)
    source_record.write(staged.data_dir, source_record.make(dataset, made, staged.count_notes))
    return os.fspath(staged.data_dir)

  staging.prepare_staged(dataset, root, version_dir, prepare_in, ready=lambda: ready() is not None,
                         log=log)
  return source_record.read(version_dir) or source_record.UNRECORDED, version_dir


def _plain(value):
  if isinstance(value, (np.ndarray, list)):  # a Sequence feature
    return [_plain(v) for v in value]
  if isinstance(value, bytes):
    return value.decode('utf-8')
  if isinstance(value, np.generic):
    return value.item()
  return value


def load(dataset: str, manual_dir: Optional[str] = None,
         tfds_data_dir: Optional[str] = None) -> tuple[dict[str, list[dict]], dict]:
  """Every split of `dataset` as plain-Python records, and the source record.

  Args:
    dataset: a registered dataset with files of its own (`attn_jax.data.datasets`).
    manual_dir: folder of the original files; None falls back to
      `$ATTN_JAX_DATA`, then to a prepared copy, then to downloading.
    tfds_data_dir: where prepared data lives; None is tfds's default.

  Returns:
    (split -> records, the preparation's source record: see `source_record`).
    A non-standard source also gets one `NonstandardDataWarning` line.

  Raises:
    DataError: files missing, truncated or malformed (before any preparation
      when they are missing), or offline with nothing to read.
    StorageError: the tfds data dir is full or not writable.
  """
  data_dir = sources.archive_dir(manual_dir)
  files = sources.locate(dataset, data_dir) if data_dir else None
  record, prepared_dir = prepare(dataset, files, tfds_data_dir)
  if not record.get('standard'):
    warnings.warn(source_record.warning_line(dataset, record, prepared_dir),
                  NonstandardDataWarning, stacklevel=2)
  splits = make_builder(dataset, files, tfds_data_dir).as_data_source()
  raw = {name: [{k: _plain(v) for k, v in example.items()}
                for example in source.__getitems__(range(len(source)))]
         for name, source in splits.items()}
  return raw, record


def load_raw(dataset: str, manual_dir: Optional[str] = None,
             tfds_data_dir: Optional[str] = None) -> dict[str, list[dict]]:
  """The records of `load`, without the source record."""
  return load(dataset, manual_dir, tfds_data_dir)[0]
