"""Where each dataset's original distribution files are found.

The folder holding them comes from `--config.data.manual_dir`, else from the
environment variable `ATTN_JAX_DATA` (its layout is that of `../shared/data`:
one sub-folder per dataset). When neither is set, the builders download the
official archives instead (`Source.download`); that path needs network and is
deliberately thin.

`REFERENCE` holds the size and sha256 of the reference release of every file
(the copies in `../shared/data`, see each folder's SOURCE.md, plus the official
archives whose checksum is published), so each preparation can record whether
it was made from exactly those bytes.
"""

import dataclasses
import os
from typing import Callable, Optional

from attn_jax.core.errors import DataError

ENV_VAR = 'ATTN_JAX_DATA'

_SST_ZIP = 'https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip'
_IMDB_TGZ = 'https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz'
_NEWS_TGZ = 'http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz'
# The AG News CSVs as torchtext fetches them (Zhang et al.'s own copy sits
# behind a Google Drive confirmation page).
_AG_CSV = 'https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/{}.csv'


def _download_sst(dl) -> dict[str, str]:
  root = dl.download_and_extract(_SST_ZIP)
  return {s: os.fspath(root / 'trees' / f'{s}.txt') for s in ('train', 'dev', 'test')}


def _download_imdb(dl) -> dict[str, str]:
  return {'archive': os.fspath(dl.download(_IMDB_TGZ))}


def _download_20news(dl) -> dict[str, str]:
  return {'archive': os.fspath(dl.download(_NEWS_TGZ))}


def _download_ag_news(dl) -> dict[str, str]:
  return {s: os.fspath(dl.download(_AG_CSV.format(s))) for s in ('train', 'test')}


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


SOURCES = {
    'sst': Source(
        'SST PTB trees', 'sst',
        {s: (f'{s}.txt',) for s in ('train', 'dev', 'test')},
        frozenset(), _SST_ZIP, _download_sst),
    'imdb': Source(
        'IMDB (aclImdb)', 'imdb',
        {'archive': ('aclImdb_train_test.tar.gz', 'aclImdb_v1.tar.gz')},
        frozenset(), _IMDB_TGZ, _download_imdb),
    '20news': Source(
        '20 Newsgroups (bydate)', '20news',
        {'archive': ('20news-bydate_train_test.tar.gz', '20news-bydate.tar.gz')},
        frozenset(), _NEWS_TGZ, _download_20news),
    'agnews': Source(
        'AG News CSV', 'ag_news',
        {s: (f'{s}.csv.gz', f'{s}.csv') for s in ('train', 'test')},
        frozenset({'train'}), _AG_CSV.format('{train,test}'), _download_ag_news),
}


@dataclasses.dataclass(frozen=True)
class KnownFile:
  """A file of the reference release: name, size in bytes and sha256."""
  name: str
  bytes: int
  sha256: str


# dataset -> role -> the known copies of that file. From ../shared/data/*/SOURCE.md;
# aclImdb_v1.tar.gz from tensorflow-datasets' imdb_reviews/checksums.tsv.
REFERENCE = {
    'sst': {
        'train': (KnownFile('train.txt', 2160058,
                            'e2f3f41b0b1e6d4dddc0effe3bfc2d27ed8928079aa9a03d652311614fc5feb7'),),
        'dev': (KnownFile('dev.txt', 280825,
                          '0e9336aed6e4730e19f58d00a77b3f0297efdb755f7b5e598c98a05e3f97ea40'),),
        'test': (KnownFile('test.txt', 559614,
                           '6e54806dee95cf80cd918e7dfb3f6770f6df24bf826f289a4d1f709e1c8f6761'),),
    },
    'imdb': {
        'archive': (KnownFile('aclImdb_train_test.tar.gz', 28631016,
                              '3c27c84c5b647935a2b44ee9c5b3fc302d26b6d268caf4c6a360aa7cb1f5fce7'),
                    KnownFile('aclImdb_v1.tar.gz', 84125825,
                              'c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe')),
    },
    '20news': {
        'archive': (KnownFile('20news-bydate_train_test.tar.gz', 14387660,
                              '933dedc591812ba17499841c10ab324d60e093c42800008423b1148ec3474bf8'),),
    },
    'agnews': {  # no copy of train.csv was available to checksum
        'test': (KnownFile('test.csv.gz', 748824,
                           '3c277beb6ce3dd635407635cb90a7c5ceaf87168fabb3be218e39aa2b097f706'),
                 KnownFile('test.csv', 1857427,
                           '521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699')),
    },
}


def official_name(dataset: str, role: str) -> str:
  """The name a downloaded file of `role` has in the official release."""
  return SOURCES[dataset].files[role][-1]


def expected_files(dataset: str) -> str:
  """The files a local copy needs, for messages: `sst/{train.txt, ...}`."""
  source = SOURCES[dataset]
  names = [' or '.join(names) + (' (optional)' if role in source.optional else '')
           for role, names in source.files.items()]
  return f'{source.subdir}/' + '{' + ', '.join(names) + '}'


def offline_error(dataset: str, host: str) -> DataError:
  """No local files, no prepared copy, and the download host is unreachable."""
  source = SOURCES[dataset]
  return DataError(
      f'{source.title}: no local copy is configured, none is prepared in the tfds data dir, '
      f'and {host} cannot be reached to download it (offline?). Put the files '
      f'{expected_files(dataset)} in a folder and point ${ENV_VAR} or '
      f'--config.data.manual_dir at it (official files: {source.url}).')


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
  source = SOURCES[dataset]
  if not os.path.isdir(data_dir):
    raise DataError(
        f'data folder {data_dir!r} does not exist. Point ${ENV_VAR} or '
        '--config.data.manual_dir at the folder holding the dataset archives '
        f'(one sub-folder per dataset, e.g. {source.subdir}/), or unset both '
        'to download the official archives.')
  folders = [os.path.join(data_dir, source.subdir), data_dir]
  found, missing = {}, []
  for role, names in source.files.items():
    candidates = [os.path.join(d, n) for d in folders for n in names]
    path = next((p for p in candidates if os.path.isfile(p)), None)
    if path is not None:
      found[role] = path
    elif role not in source.optional:
      missing.append((role, candidates))
  if missing:
    lines = '\n'.join(f'  {role}: looked for ' + ', '.join(c) for role, c in missing)
    raise DataError(
        f'{source.title}: required file(s) not found under {data_dir!r}:\n{lines}\n'
        f'Put the original files there (official: {source.url}), point '
        f'${ENV_VAR} or --config.data.manual_dir at the folder holding them, '
        'or unset both to download them.')
  return found
