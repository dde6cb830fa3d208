"""Where a stage's results live on disk, and whether they can be trusted.

    <out>/analyses/<stage>/<split>-<N>docs-<key hash>/
        results.npz     row i = document i of the split (its first N)
        summary.json    written last: the key, the numbers, and the sha256
                        of every other file of the folder
        kept.npz        a stage's small per-document arrays that results/
                        keeps beside the summary (`Stage.kept`; `copy_kept`)
        *.png, *.svg    figures
        partial.npz     while computing; removed when finished

One folder per key (checkpoint, data, split, document count, settings,
inputs), so a `max_docs=50` run sits beside the full one and neither
replaces the other. A folder counts as finished only when its summary reads
and every file it lists has the recorded sha256; results of attn-jax <= 0.2
(`analyses/<stage>/summary.json`, no folder, no hashes) are still read by
the reports, never by a rerun.
"""

import dataclasses
import os
from typing import Optional

import numpy as np

from attn_jax.core import atomic_io, digests
from attn_jax.core.errors import IntegrityError

SUMMARY = 'summary.json'
RESULTS = 'results.npz'
PARTIAL = 'partial.npz'
KEPT = 'kept.npz'


def summary_copy(found: 'Found') -> dict:
  """The summary as saved alone (results/ keeps summaries, not arrays): its
  file hashes dropped, so it reads as a record, not as damaged results."""
  return {k: v for k, v in found.summary.items() if k != 'sha256'}


def copy_kept(found: 'Found', target_dir: str) -> Optional[str]:
  """Copies the folder's `KEPT` file (a stage's small per-document arrays,
  saved with the summary by `report --save`) to `target_dir`; returns its
  path there, or None where the folder has none."""
  source = os.path.join(found.directory, KEPT)
  if not os.path.isfile(source):
    return None
  os.makedirs(target_dir, exist_ok=True)
  target = os.path.join(target_dir, KEPT)
  if os.path.abspath(source) != os.path.abspath(target):
    atomic_io.copy_file(source, target)
  return target


def load_kept(directory: str) -> Optional[dict[str, np.ndarray]]:
  """The folder's `KEPT` arrays (a finished folder's or a saved copy's), or
  None where it has none or it does not read."""
  path = os.path.join(directory, KEPT)
  if not os.path.isfile(path):
    return None
  try:
    with np.load(path) as f:
      return dict(f)
  except (OSError, ValueError, EOFError):
    return None


def stage_root(out: str, stage: str) -> str:
  return os.path.join(out, 'analyses', stage)


def folder_name(key: dict) -> str:
  return f'{key["split"]}-{key["docs"]}docs-{key["hash"]}'


def result_dir(out: str, key: dict) -> str:
  return os.path.join(stage_root(out, key['stage']), folder_name(key))


SELF_HASH = 'summary_sha256'  # the summary's own content (attn_jax.core.digests.sealed)


def damage(directory: str, summary: dict) -> Optional[str]:
  """None when the summary's own content and every file it lists have their
  recorded sha256, else a line naming the first that does not."""
  hashes = summary.get('sha256')
  path = os.path.join(directory, SUMMARY)
  if not isinstance(hashes, dict):
    return f'{path} records no sha256 of its files'
  if not digests.is_sealed(summary, SELF_HASH):
    return f'{path} was edited or damaged (its content differs from its sha256)'
  mismatch = digests.first_mismatch(directory, hashes)
  if mismatch is None:
    return None
  name, why = mismatch
  if why == 'changed':
    return f'{os.path.join(directory, name)} is damaged or was edited (its sha256 differs from {path})'
  return f'{os.path.join(directory, name)} is {why}'


def read_summary(directory: str) -> tuple[Optional[dict], Optional[str]]:
  """(summary, None) when the folder is finished and intact, else (None, why);
  why is None when there is simply nothing there yet."""
  path = os.path.join(directory, SUMMARY)
  if not os.path.exists(path):
    return None, None
  try:
    summary = atomic_io.read_json(path)
  except (OSError, ValueError) as e:
    return None, f'{path} is damaged ({type(e).__name__})'
  if not isinstance(summary, dict) or not isinstance(summary.get('key'), dict):
    return None, f'{path} is not a stage summary'
  problem = damage(directory, summary)
  return (None, problem) if problem else (summary, None)


def load_arrays(directory: str, summary: dict) -> dict[str, np.ndarray]:
  """The results.npz of a finished folder, verified against its summary.

  Raises:
    IntegrityError: the file changed since the summary was written.
  """
  problem = damage(directory, summary)
  if problem:
    raise IntegrityError(f'{problem}; rerun the stage to recompute it')
  with np.load(os.path.join(directory, RESULTS)) as f:
    return dict(f)


@dataclasses.dataclass(frozen=True)
class Found:
  """A stage's finished results in one folder."""
  stage: str
  directory: str
  summary: dict
  intact: bool  # False: a file the summary lists is missing or changed
  problem: Optional[str] = None

  @property
  def documents(self) -> int:
    documents = self.summary.get('documents')
    return documents if isinstance(documents, int) else 0

  @property
  def key_hash(self) -> str:
    return self.summary.get('key', {}).get('hash', '?')


def find(out: str, stage: str) -> list[Found]:
  """Every set of results of `stage` under `out` (key folders and the old
  single-folder layout), the one to show first: intact before damaged, then
  the test split, then most documents, then the most recently written (then
  by name, so equal copies order the same everywhere). A key folder whose
  summary does not read is listed as damaged."""
  root = stage_root(out, stage)
  if not os.path.isdir(root):
    return []
  found = []
  candidates = [root] + [os.path.join(root, n) for n in sorted(os.listdir(root))
                         if os.path.isdir(os.path.join(root, n))]
  for directory in candidates:
    path = os.path.join(directory, SUMMARY)
    try:
      summary = atomic_io.read_json(path)
      if not isinstance(summary, dict):
        raise ValueError('not a JSON object')
    except (OSError, ValueError) as e:
      if directory != root and (os.path.exists(path) or os.path.exists(os.path.join(directory, RESULTS))):
        found.append(Found(stage, directory, {}, intact=False, problem=f'{path} does not read ({type(e).__name__})'))
      continue
    legacy = 'sha256' not in summary  # attn-jax <= 0.2, or a summary saved alone (results/)
    problem = None if legacy else damage(directory, summary)
    if problem is None and not isinstance(summary.get('key'), dict) and 'documents' not in summary:
      # every summary records its documents (those of attn-jax <= 0.2 no key): `{}` or a stray file is not one
      problem = f'{path} is not a stage summary (it records no key): rerun the stage, or restore the file'
    found.append(Found(stage, directory, summary, intact=problem is None, problem=problem))
  return sorted(found, key=lambda f: (not f.intact, f.summary.get('key', {}).get('split') != 'test',
                                      -f.documents, -_mtime(f.directory), f.directory))


def _mtime(directory: str) -> float:
  try:
    return os.path.getmtime(os.path.join(directory, SUMMARY))
  except OSError:
    return 0.0


def most_complete(out: str, stage: str) -> Optional[Found]:
  """The results a report shows by default (see `find`): intact ones only;
  None when there are none."""
  found = find(out, stage)
  return found[0] if found and found[0].intact else None
