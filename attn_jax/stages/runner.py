"""Running one analysis stage: resumable, keyed, written atomically.

A stage computes per-document arrays batch by batch (`Stage.compute`), then
summarises them (`Stage.finalize`) and draws its figures. Its files go to
`<workdir>/analyses/<stage>/`: `results.npz` (row i = document i of the
split), figures, and `summary.json`, written last, which records the key of
what was computed (checkpoint, data, settings). A stage whose summary has
the same key is skipped. While computing, `partial.npz` is saved every
`SAVE_EVERY_SECONDS`, so a killed run resumes at the first unfinished batch.
"""

import dataclasses
import hashlib
import io
import json
import os
import time
from typing import Callable, Optional

import ml_collections
import numpy as np
from tqdm.auto import tqdm

from attn_jax import atomic_io
from attn_jax.data.batching import Batch
from attn_jax.stages.context import AnalysisContext

SAVE_EVERY_SECONDS = 60.0
Arrays = dict[str, np.ndarray]


@dataclasses.dataclass(frozen=True)
class Stage:
  """An analysis declared by name in `config.analyses`.

  compute: (ctx, batch) -> {name: [B, ...]} rows for the batch's documents
    (filler rows included; the runner drops them). None for stages that only
    combine the results of `requires`.
  positional: names of computed arrays whose last axis is the position; the
    runner pads it to the split's longest document.
  settings: analysis config -> the values that change the results.
  finalize: (ctx, arrays, inputs) -> (arrays, summary); `inputs` maps each
    required stage to its arrays.
  figures: (arrays, inputs, summary, directory) -> written paths.
  cost: batch -> relative work, for the progress bar's time estimate.
  version: bumped whenever the stage's computation changes, so results of
    an older attn-jax are recomputed, not reused.
  """
  name: str
  settings: Callable[[ml_collections.ConfigDict], dict]
  finalize: Callable
  figures: Callable
  compute: Optional[Callable[[AnalysisContext, Batch], Arrays]] = None
  positional: frozenset = frozenset()
  requires: tuple = ()
  cost: Callable[[Batch], float] = lambda batch: float(np.sum(batch.index >= 0))
  version: int = 1


def stage_dir(workdir: str, name: str) -> str:
  return os.path.join(workdir, 'analyses', name)


def stage_key(ctx: AnalysisContext, stage: Stage, input_hashes: Optional[dict] = None) -> dict:
  """What the results depend on; equal keys mean equal results.

  `input_hashes` ({required stage: its key's hash}) ties a stage to the
  results it was computed from, so recomputing an input recomputes it too.
  """
  key = {'stage': stage.name, 'version': stage.version, 'params': ctx.digest, 'data': ctx.data_fingerprint,
         'split': ctx.split_name, 'docs': len(ctx.split), 'seed': ctx.settings.seed,
         'settings': stage.settings(ctx.settings), 'inputs': dict(sorted((input_hashes or {}).items()))}
  key['hash'] = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
  return key


def load_results(workdir: str, name: str) -> Arrays:
  with np.load(os.path.join(stage_dir(workdir, name), 'results.npz')) as f:
    return dict(f)


def finished_summary(workdir: str, name: str, key_hash: str) -> Optional[dict]:
  """The stage's summary if it finished with this key, else None."""
  directory = stage_dir(workdir, name)
  try:
    summary = atomic_io.read_json(os.path.join(directory, 'summary.json'))
  except (OSError, ValueError):
    return None
  if summary.get('key', {}).get('hash') != key_hash:
    return None
  return summary if os.path.exists(os.path.join(directory, 'results.npz')) else None


def _input_hash(workdir: str, name: str) -> str:
  try:
    return atomic_io.read_json(os.path.join(stage_dir(workdir, name), 'summary.json'))['key']['hash']
  except (OSError, ValueError, KeyError) as e:
    raise FileNotFoundError(f'stage {name!r} has no finished results in {stage_dir(workdir, name)} '
                            f'({e}); run it first (run_analyses adds required stages)') from e


def _save_npz(path: str, arrays: Arrays) -> None:
  buffer = io.BytesIO()
  np.savez(buffer, **arrays)
  atomic_io.atomic_write(path, lambda f: f.write(buffer.getvalue()), mode='wb')


def _load_partial(path: str, key_hash: str):
  try:
    with np.load(path) as f:
      if str(f['__key']) != key_hash:
        return None
      return ({k: f[k] for k in f.files if not k.startswith('__')}, f['__done'].copy(),
              float(f['__seconds']))
  except (OSError, ValueError, KeyError):
    return None


def _compute(ctx: AnalysisContext, stage: Stage, key_hash: str, log) -> tuple[Arrays, float]:
  """Runs `stage.compute` over every batch, resuming from partial.npz."""
  partial_path = os.path.join(stage_dir(ctx.workdir, stage.name), 'partial.npz')
  batches = list(ctx.batches())
  resumed = _load_partial(partial_path, key_hash)
  arrays, done, seconds = resumed if resumed else ({}, np.zeros(len(batches), bool), 0.0)
  if resumed:
    log(f'{stage.name}: resuming after {int(done.sum())} of {len(batches)} batches')
  costs = [stage.cost(b) for b in batches]
  bar = tqdm(total=sum(costs), initial=sum(c for c, d in zip(costs, done) if d),
             desc=stage.name, unit='work', disable=not ctx.cfg.train.progress,
             bar_format='{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}] {postfix}')
  last_save = time.time()
  docs_done = sum(int(np.sum(x.index >= 0)) for x, d in zip(batches, done) if d)
  for b, batch in enumerate(batches):
    if done[b]:
      continue
    started = time.time()
    rows = {k: np.asarray(v) for k, v in stage.compute(ctx, batch).items()}
    real = batch.index >= 0
    for name, value in rows.items():
      value = value[real]
      if name in stage.positional:  # batch width -> the split's longest document
        value = value[..., :ctx.max_length]
        value = np.pad(value, [(0, 0)] * (value.ndim - 1) + [(0, ctx.max_length - value.shape[-1])])
      if name not in arrays:
        arrays[name] = np.zeros((len(ctx.split),) + value.shape[1:], value.dtype)
      arrays[name][batch.index[real]] = value
    done[b] = True
    seconds += time.time() - started
    docs_done += int(real.sum())
    bar.update(costs[b])
    bar.set_postfix_str(f'{docs_done}/{len(ctx.split)} docs')
    if time.time() - last_save > SAVE_EVERY_SECONDS and not done.all():
      _save_npz(partial_path, {**arrays, '__done': done, '__key': np.array(key_hash),
                               '__seconds': np.array(seconds)})
      last_save = time.time()
  bar.close()
  return arrays, seconds


def run_stage(ctx: AnalysisContext, stage: Stage, log: Callable[[str], None] = print) -> dict:
  """Computes (or finds) the stage's results; returns its summary."""
  key = stage_key(ctx, stage, {name: _input_hash(ctx.workdir, name) for name in stage.requires})
  directory = stage_dir(ctx.workdir, stage.name)
  summary = finished_summary(ctx.workdir, stage.name, key['hash'])
  if summary is not None:
    log(f'{stage.name}: results for this checkpoint and settings exist in {directory}; skipped')
    return summary
  inputs = {name: load_results(ctx.workdir, name) for name in stage.requires}
  arrays, seconds = _compute(ctx, stage, key['hash'], log) if stage.compute else ({}, 0.0)
  started = time.time()
  arrays, summary = stage.finalize(ctx, arrays, inputs)
  seconds += time.time() - started
  summary = {**summary, 'key': key, 'documents': len(ctx.split), 'seconds': round(seconds, 2),
             'documents_per_second': round(len(ctx.split) / max(seconds, 1e-9), 2)}
  _save_npz(os.path.join(directory, 'results.npz'), arrays)
  summary['figures'] = [os.path.relpath(p, ctx.workdir)
                        for p in stage.figures(arrays, inputs, summary, directory)]
  atomic_io.write_json(os.path.join(directory, 'summary.json'), summary)
  partial = os.path.join(directory, 'partial.npz')
  if os.path.exists(partial):
    os.remove(partial)
  log(f'{stage.name}: {len(ctx.split)} documents in {seconds:.1f} s -> {directory}')
  return summary
