"""Where each dataset's original distribution files are found.

The folder holding them comes from `--config.data.manual_dir`, else from the
environment variable `ATTN_JAX_DATA` (its layout is that of `../shared/data`:
one sub-folder per dataset). When neither is set, the builders download the
official archives instead (`Source.download`); that path needs network and is
deliberately thin.

Each dataset declares its files (`Source`) and the size and sha256 of the
reference release of every file (`KnownFile`: the copies in
`../shared/data`, see each folder's SOURCE.md, plus the official archives
whose checksum is published) in its module (`attn_jax.data.datasets`), so
each preparation can record whether it was made from exactly those bytes.
"""

import dataclasses
import hashlib
import os
from typing import Callable, Optional

from attn_jax.core.errors import DataError
from attn_jax.core.registry import DATASETS

ENV_VAR = 'ATTN_JAX_DATA'

@dataclasses.dataclass(frozen=True)
class Source:
  """The files of one dataset.

  Attributes:
    title: name used in messages.
    subdir: folder under the data directory.
    files: role -> accepted file names, preferred first (the local copy's name,
      then the official archive's).
    optional: roles that may be absent (AG News train: not obtainable here).
    url: where the official files live, for messages.
    download: fetches the official files with a tfds DownloadManager.
  """
  title: str
  subdir: str
  files: dict[str, tuple[str, ...]]
  optional: frozenset[str]
  url: str
  download: Callable[..., dict[str, str]]


@dataclasses.dataclass(frozen=True)
class KnownFile:
  """A file of the reference release: name, size in bytes and sha256; or,
  for a file known only from a git tree, its git blob id (sha1 of
  "blob <size>\\0" + the bytes: `git hash-object FILE`)."""
  name: str
  bytes: Optional[int]
  sha256: Optional[str]
  git_blob: Optional[str] = None


def git_blob_id(path: str) -> str:
  """`git hash-object path`."""
  h = hashlib.sha1(f'blob {os.path.getsize(path)}\0'.encode())
  with open(path, 'rb') as f:
    for chunk in iter(lambda: f.read(1 << 20), b''):
      h.update(chunk)
  return h.hexdigest()


def source(dataset: str) -> Source:
  """The files of `dataset`, or of the dataset whose files it reads."""
  return DATASETS[DATASETS[dataset].raw_name].source


def reference(dataset: str) -> dict[str, tuple[KnownFile, ...]]:
  """role -> the known copies of that file in the reference release."""
  return dict(DATASETS[DATASETS[dataset].raw_name].reference)


def official_name(dataset: str, role: str) -> str:
  """The name a downloaded file of `role` has in the official release."""
  return source(dataset).files[role][-1]


def expected_files(dataset: str) -> str:
  """The files a local copy needs, for messages: `sst/{train.txt, ...}`."""
  spec = source(dataset)
  names = [' or '.join(names) + (' (optional)' if role in spec.optional else '')
           for role, names in spec.files.items()]
  return f'{spec.subdir}/' + '{' + ', '.join(names) + '}'


def offline_error(dataset: str, host: str) -> DataError:
  """No local files, no prepared copy, and the download host is unreachable."""
  spec = source(dataset)
  return DataError(
      f'{spec.title}: no local copy is configured, none is prepared in the tfds data dir, '
      f'and {host} cannot be reached to download it (offline?). Put the files '
      f'{expected_files(dataset)} in a folder and point ${ENV_VAR} or '
      f'--config.data.manual_dir at it (official files: {spec.url}).')


def archive_dir(configured: Optional[str]) -> Optional[str]:
  """The data folder: the config's value, else `$ATTN_JAX_DATA`, else None."""
  return configured or os.environ.get(ENV_VAR) or None


def locate(dataset: str, data_dir: str) -> dict[str, str]:
  """Finds the dataset's files under `data_dir`.

  Looks in `data_dir/<subdir>/` and then `data_dir/` itself.

  Returns:
    role -> path for every file found (optional roles may be missing).

  Raises:
    DataError: a required file is missing; the message lists every place
      looked and how to fix it.
  """
  spec = source(dataset)
  if not os.path.isdir(data_dir):
    raise DataError(
        f'data folder {data_dir!r} does not exist. Point ${ENV_VAR} or '
        '--config.data.manual_dir at the folder holding the dataset archives '
        f'(one sub-folder per dataset, e.g. {spec.subdir}/), or unset both '
        'to download the official archives.')
  folders = [os.path.join(data_dir, spec.subdir), data_dir]
  found, missing = {}, []
  for role, names in spec.files.items():
    candidates = [os.path.join(d, n) for d in folders for n in names]
    path = next((p for p in candidates if os.path.isfile(p)), None)
    if path is not None:
      found[role] = path
    elif role not in spec.optional:
      missing.append((role, candidates))
  if missing:
    lines = '\n'.join(f'  {role}: looked for ' + ', '.join(c) for role, c in missing)
    raise DataError(
        f'{spec.title}: required file(s) not found under {data_dir!r}:\n{lines}\n'
        f'Put the original files there (official: {spec.url}), point '
        f'${ENV_VAR} or --config.data.manual_dir at the folder holding them, '
        'or unset both to download them.')
  return found
