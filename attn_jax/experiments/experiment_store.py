"""Where an experiment's results live, and whether they can be trusted.

    <out>/experiments/<name>/<key hash>/
        summary.json    written last: key, numbers, sha256 of results and figures
        results.npz     per-instance arrays
        *.png, *.svg    figures
    <out>/experiments/<name>/models-<models hash>/<set>/<model>/
                        the models it trained, one ordinary workdir each, keyed
                        by what their training depends on only (not the
                        analysis settings), so results of other analysis
                        settings reuse them
    <out>/experiments/<name>/summary.json
                        a copy of the newest finished summary, with `folder`

One folder per key (base model, data, settings, inputs), as for analysis
stages (`attn_jax.stages.stage_store`, whose integrity checks are reused): other
settings sit beside, never replace, earlier results.
"""

import os
from typing import Optional

from attn_jax.core import atomic_io
from attn_jax.stages import stage_store

SUMMARY = stage_store.SUMMARY
RESULTS = stage_store.RESULTS


def root(out: str, name: str) -> str:
  return os.path.join(out, 'experiments', name)


def folder(out: str, key: dict) -> str:
  return os.path.join(root(out, key['experiment']), key['hash'])


def models_dir(out: str, key: dict) -> str:
  return os.path.join(root(out, key['experiment']), f'models-{key["models"]}')


def read(directory: str) -> tuple[Optional[dict], Optional[str]]:
  """(summary, None) when the folder is finished and intact, else (None, why)."""
  return stage_store.read_summary(directory)


def find(out: str, name: str) -> list[tuple[str, dict]]:
  """(folder, summary) of every intact finished result of `name`, newest first."""
  base = root(out, name)
  found = []
  for entry in sorted(os.listdir(base)) if os.path.isdir(base) else []:
    directory = os.path.join(base, entry)
    if os.path.isdir(directory) and not entry.startswith('models-'):
      summary, _ = read(directory)
      if summary is not None:
        found.append((os.path.getmtime(os.path.join(directory, SUMMARY)), directory, summary))
  return [(d, s) for _, d, s in sorted(found, key=lambda x: -x[0])]


def latest(out: str, name: str) -> Optional[tuple[str, dict]]:
  """The result the pointer copy names if intact, else the newest intact one."""
  try:
    pointer = atomic_io.read_json(os.path.join(root(out, name), SUMMARY))
    directory = os.path.join(out, pointer['folder'])
    summary, _ = read(directory)
    if summary is not None:
      return directory, summary
  except (OSError, ValueError, KeyError, TypeError):
    pass
  found = find(out, name)
  return found[0] if found else None


def load_summaries(run_dir: str) -> dict[str, dict]:
  """{experiment: summary} of the newest intact results in a run folder."""
  base = os.path.join(run_dir, 'experiments')
  out = {}
  for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
    found = latest(run_dir, name)
    if found:
      out[name] = {**found[1], 'folder': os.path.relpath(found[0], run_dir)}
  return out
