"""Running the analysis stages: one stage resumable, keyed and written
atomically (`run_stage`), and the stages a config asks for, in order, with
what they require (`run_analyses`).

A stage computes per-document arrays batch by batch (`Stage.compute`), then
summarises them (`Stage.finalize`) and draws its figures. Its files go to a
folder named by the key of what was computed (checkpoint, data, split,
document count, settings, inputs; see `attn_jax.stages.stage_store`), so other
settings never replace them. A stage whose folder is finished and intact
(every file's sha256 as recorded) is skipped; a damaged one is recomputed.
While computing, `partial.npz` is saved every `SAVE_EVERY_SECONDS`, so a
killed run resumes at the first unfinished batch. With several hosts
(`attn_jax.core.hosts`) each computes every P-th batch into its own
`partial.H-of-P.npz`, and host 0 merges them and writes the rest.
"""

import glob
import hashlib
import io
import json
import os
import time
import zipfile
from typing import Callable, Optional

import ml_collections
import numpy as np
from tqdm.auto import tqdm

from attn_jax import config as config_lib
from attn_jax.analysis import contract
from attn_jax.core import atomic_io, compilation, digests, estimates, hosts, leases
from attn_jax.core.errors import IntegrityError
from attn_jax.core.registry import STAGES, with_requirements
from attn_jax.data.dataset import EncodedSplit
from attn_jax.models import Model
from attn_jax.stages import stage_store as store
from attn_jax.stages.stage import AnalysisContext, Arrays, Stage

SAVE_EVERY_SECONDS = 60.0


def stage_key(ctx: AnalysisContext, stage: Stage, input_hashes: Optional[dict] = None) -> dict:
  """What the results depend on; equal keys mean equal results.

  `input_hashes` ({required stage: its key's hash}) ties a stage to the
  results it was computed from, so recomputing an input recomputes it too.
  """
  key = {'stage': stage.name, 'version': stage.version, 'params': ctx.digest, 'data': ctx.data_fingerprint,
         'split': ctx.split_name, 'docs': len(ctx.split), 'seed': ctx.settings.seed,
         'settings': stage.key_settings(ctx.settings), 'inputs': dict(sorted((input_hashes or {}).items()))}
  if ctx.settings.get('sample_docs') is not None:  # absent otherwise: older keys stay valid
    key['sample'] = {'docs': ctx.settings.sample_docs, 'seed': ctx.settings.get('sample_seed', 0)}
  key['hash'] = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
  return key


def _save_npz(path: str, arrays: Arrays, compressed: bool = False) -> None:
  buffer = io.BytesIO()
  (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
  atomic_io.atomic_write(path, lambda f: f.write(buffer.getvalue()), mode='wb')


def _load_partial(path: str, key_hash: str, num_docs: int):
  """(arrays, per-document done mask, seconds) saved by a killed run with the
  same key, or None. Done is kept per document, not per batch, so a resume
  with another `analysis.batch_size` (not in the key) misses no document."""
  try:
    with np.load(path) as f:
      if str(f['__key']) != key_hash or f['__docs_done'].shape != (num_docs,):
        return None
      return ({k: f[k] for k in f.files if not k.startswith('__')}, f['__docs_done'].copy(),
              float(f['__seconds']))
  except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
    return None  # damaged, cut short or of attn-jax <= 0.2: the stage starts over


def _partial_path(directory: str, host: Optional[int] = None) -> str:
  """partial.npz, or this host's own (or host `host`'s) partial.H-of-P.npz
  when there are several."""
  return os.path.join(directory, hosts.shard_name(store.PARTIAL[:-len('.npz')], host) + '.npz')


def _compute(ctx: AnalysisContext, stage: Stage, directory: str, key_hash: str, log) -> tuple[Arrays, float]:
  """Runs `stage.compute` over every batch (this host's share of them when
  there are several hosts), resuming from its partial file."""
  partial_path = _partial_path(directory)
  batches = list(ctx.batches(stage.batch_size(ctx.settings)))
  resumed = _load_partial(partial_path, key_hash, len(ctx.split))
  arrays, docs_done, seconds = resumed if resumed else ({}, np.zeros(len(ctx.split), bool), 0.0)
  done = np.array([bool(docs_done[b.index[b.index >= 0]].all()) or not hosts.owns(i)
                   for i, b in enumerate(batches)])
  if resumed:
    log(f'{stage.name}: resuming after {int(done.sum())} of {len(batches)} batches '
        f'({int(docs_done.sum())} of {len(ctx.split)} documents)')
  elif os.path.exists(partial_path):
    log(f'{stage.name}: {partial_path} is unreadable or of other settings; starting over')
  costs = [stage.cost(b) for b in batches]
  # The time left is the estimate's, not tqdm's: tqdm's counts work only,
  # and compiling a step for each batch shape can take most of a stage's time.
  bar = tqdm(total=sum(costs), initial=sum(c for c, d in zip(costs, done) if d),
             desc=stage.name, unit='work', disable=not ctx.cfg.train.progress,
             bar_format='{desc}: {percentage:3.0f}%|{bar}| [{elapsed}] {postfix}')
  last_save = time.time()
  shapes = {batch.tokens.shape for batch, d in zip(batches, done) if not d}
  estimate = estimates.Estimate(stage.name, sum(c for c, d in zip(costs, done) if not d), log,
                                shapes=len(shapes))
  checked = stage.check is None
  first = next((b for b, d in enumerate(done) if not d), None)
  for b, batch in enumerate(batches):
    if done[b]:
      continue
    if b == first:  # the model's pieces against the interface's promises (read only; once per model, shape)
      contract.check(ctx.model, ctx.params, batch.tokens, batch.lengths)
    if not checked:  # a fast path is compared with the exact one before it is trusted
      stage.check(ctx, batch)
      checked = True
    started, compiled = time.time(), compilation.seconds()
    compilation.guard_mappings((stage.name, id(ctx.model), batch.tokens.shape))
    rows = {k: np.asarray(v) for k, v in stage.compute(ctx, batch).items()}
    new_shape = batch.tokens.shape in shapes
    shapes.discard(batch.tokens.shape)
    estimate.add(costs[b], time.time() - started, compilation.seconds() - compiled, new_shape)
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
    docs_done[batch.index[real]] = True
    seconds += time.time() - started
    bar.update(costs[b])
    left = estimate.seconds_left()
    bar.set_postfix_str(f'{int(docs_done.sum())}/{len(ctx.split)} docs'
                        + (f', about {estimates.duration(left)} left' if left is not None else ''))
    if time.time() - last_save > SAVE_EVERY_SECONDS and not done.all():
      _save_npz(partial_path, {**arrays, '__docs_done': docs_done, '__key': np.array(key_hash),
                               '__seconds': np.array(seconds)})
      last_save = time.time()
  bar.close()
  if hosts.count() > 1:
    _save_npz(partial_path, {**arrays, '__docs_done': docs_done, '__key': np.array(key_hash),
                             '__seconds': np.array(seconds)})
  return arrays, seconds


def _merge_hosts(ctx: AnalysisContext, directory: str, key_hash: str) -> tuple[Arrays, float]:
  """(Host 0.) Every host's finished partial file merged: the arrays of the
  whole split, and the longest host's seconds."""
  arrays, seconds, covered = {}, 0.0, np.zeros(len(ctx.split), bool)
  for h in range(hosts.count()):
    path = _partial_path(directory, h)
    shard = _load_partial(path, key_hash, len(ctx.split))
    if shard is None:
      raise IntegrityError(f'{path} (host {h}) is missing or of other settings; rerun on every host')
    shard_arrays, shard_done, shard_seconds = shard
    for name, value in shard_arrays.items():
      arrays.setdefault(name, np.zeros_like(value))[shard_done] = value[shard_done]
    covered |= shard_done
    seconds = max(seconds, shard_seconds)
  if not covered.all():
    raise IntegrityError(f'the hosts\' shards in {directory} miss {int((~covered).sum())} documents; '
                         'rerun on every host')
  return arrays, seconds


def _verified(directory: str) -> store.Found:
  summary, problem = store.read_summary(directory)
  if summary is None:
    raise IntegrityError(f'{problem or directory + " holds no finished results"}; rerun the stage')
  return store.Found(summary['key']['stage'], directory, summary, intact=True)


def _reusable(ctx: AnalysisContext, stage: Stage, directory: str, log) -> Optional[dict]:
  """The finished summary in `directory` if its files are intact; a damaged
  folder is recomputed (or refused with `analysis.refuse_damaged`)."""
  summary, problem = store.read_summary(directory)
  if problem is None:
    return summary
  if ctx.settings.get('refuse_damaged', False):
    raise IntegrityError(f'{problem}. Delete {directory} to recompute it, or rerun without '
                         '--config.analysis.refuse_damaged')
  log(f'{stage.name}: {problem}; recomputing')
  return None


def run_stage(ctx: AnalysisContext, stage: Stage, log: Callable[[str], None] = print,
              inputs: Optional[dict[str, str]] = None) -> dict:
  """Computes (or finds intact) the stage's results; returns its summary.

  `inputs` maps each stage of `stage.requires` to the folder of the results
  it reads, as this run made or verified them (`run_analyses` passes them):
  never looked up by folder, which could pick results of other settings.
  """
  missing = [name for name in stage.requires if name not in (inputs or {})]
  if missing:
    raise ValueError(f'{stage.name} reads {missing}: pass their result folders as inputs= '
                     '(run_analyses does)')
  inputs = {name: _verified(inputs[name]) for name in stage.requires}
  key = stage_key(ctx, stage, {name: found.key_hash for name, found in inputs.items()})
  directory = store.result_dir(ctx.out_dir, key)
  said = []  # a damaged folder is named once, not again under the lease
  summary = _reusable(ctx, stage, directory, lambda line: (said.append(line), log(line)))
  lock, what = os.path.join(directory, 'stage' + leases.SUFFIX), f'stage {stage.name} ({directory})'
  if summary is not None:
    log(f'{stage.name}: results for this checkpoint, these {len(ctx.split)} documents and settings '
        f'exist in {directory}; verified and skipped')
    leases.clear_stale(lock, what, log)  # a holder killed between its summary and its release
    return summary
  with leases.guarded(lock, what, ctx.cfg.wait_for_lock, log):
    summary = _reusable(ctx, stage, directory, lambda line: None if line in said else log(line))
    if summary is not None:  # another process finished it while this one waited
      log(f'{stage.name}: finished by the process this one waited for; verified and reused')
      return summary
    return _compute_and_write(ctx, stage, log, inputs, key, directory)


def _compute_and_write(ctx: AnalysisContext, stage: Stage, log, inputs: dict, key: dict,
                       directory: str) -> dict:
  """Computes the stage's arrays (resuming its partial file), finalizes and
  writes them, summary last (under the stage's lease)."""
  compiled_before = compilation.seconds()
  arrays, seconds = _compute(ctx, stage, directory, key['hash'], log) if stage.compute else ({}, 0.0)
  if hosts.count() > 1:  # host 0 merges the shards and writes; the others read what it wrote
    hosts.barrier(f'attn_jax-stage-{key["hash"]}-computed')
    if not hosts.primary():
      hosts.barrier(f'attn_jax-stage-{key["hash"]}-written')
      log(f'{stage.name}: host {hosts.index()} of {hosts.count()} computed its share in '
          f'{seconds:.1f} s; host 0 merged and wrote {directory}')
      return _verified(directory).summary
    if stage.compute:
      arrays, seconds = _merge_hosts(ctx, directory, key['hash'])
  arrays_in = {name: store.load_arrays(found.directory, found.summary) for name, found in inputs.items()}
  started = time.time()
  arrays, summary = stage.finalize(ctx, arrays, arrays_in)
  seconds += time.time() - started
  # Of this process's `seconds` (a resumed stage's earlier part is not counted).
  compile_seconds = compilation.seconds() - compiled_before
  summary = {**summary, 'key': key, 'documents': len(ctx.split), 'seconds': round(seconds, 2),
             'compile_seconds': round(compile_seconds, 2),
             'documents_per_second': round(len(ctx.split) / max(seconds, 1e-9), 2)}
  _save_npz(os.path.join(directory, store.RESULTS), arrays)
  kept = [store.KEPT] if stage.kept is not None else []
  if kept:
    _save_npz(os.path.join(directory, store.KEPT), stage.kept(arrays, summary), compressed=True)
  figures = stage.figures(arrays, arrays_in, summary, directory)
  summary['figures'] = [os.path.relpath(p, ctx.out_dir) for p in figures]
  summary['sha256'] = digests.of_files(directory, [store.RESULTS] + kept + [os.path.relpath(p, directory)
                                                                            for p in figures])
  atomic_io.write_json(os.path.join(directory, store.SUMMARY), digests.sealed(summary, store.SELF_HASH))
  for partial in glob.glob(os.path.join(directory, store.PARTIAL[:-len('.npz')] + '*.npz')):
    leases.remove(partial)  # fenced like a write: a holder taken over removes nothing
  hosts.barrier(f'attn_jax-stage-{key["hash"]}-written')
  log(f'{stage.name}: {len(ctx.split)} documents in {seconds:.1f} s ({compile_seconds:.1f} s compiling) '
      f'-> {directory}')
  return summary


# ---------------------------------------------------------------- the stages a config asks for

def with_requirements_of(names) -> tuple[str, ...]:
  """`names` plus the stages they need, in running order."""
  return with_requirements(STAGES, names)


def sample_indices(num_docs: int, sample_docs: int, sample_seed: int) -> np.ndarray:
  """`analysis.sample_docs`: which of a split's `num_docs` documents are
  analysed, int64 [min(sample_docs, num_docs)] in split order. The draw
  depends only on the split's size and `sample_seed` (not on the model's seed),
  so every model of a study, and J&W's code given the same indices
  (benchmarks/original_code/jain_wallace_inputs.py), sees the same documents."""
  if sample_docs >= num_docs:
    return np.arange(num_docs, dtype=np.int64)
  rng = np.random.default_rng(sample_seed)
  return np.sort(rng.choice(num_docs, size=sample_docs, replace=False)).astype(np.int64)


def limit_split(split: EncodedSplit, max_docs, sample_docs=None, sample_seed: int = 0) -> EncodedSplit:
  """The documents analysed: the first `max_docs`, or a seeded sample of
  `sample_docs` (`sample_indices`); the whole split when neither is set."""
  if sample_docs is not None:
    return split.take(sample_indices(len(split), sample_docs, sample_seed))
  if max_docs is None or max_docs >= len(split):
    return split
  return split.head(max_docs)


def run_analyses(model: Model, params, splits: dict[str, EncodedSplit], cfg: ml_collections.ConfigDict,
                 out_dir: str, data_fingerprint: str, log: Callable[[str], None] = print,
                 also: tuple = ()) -> dict:
  """Runs the stages `cfg.analyses` names, the stages of `also` (which the
  run's experiments read) and what they need, with results under `out_dir`;
  returns {stage: summary}."""
  names = with_requirements_of(config_lib.analyses(cfg) + tuple(also))
  if not names:
    return {}
  split_name = cfg.analysis.split
  a = cfg.analysis
  ctx = AnalysisContext(model, params, limit_split(splits[split_name], a.max_docs, a.get('sample_docs'),
                                                   a.get('sample_seed', 0)),
                        split_name, cfg, data_fingerprint, out_dir)
  summaries, folders = {}, {}
  for name in names:
    stage = STAGES[name]
    summaries[name] = run_stage(ctx, stage, log, {r: folders[r] for r in stage.requires})
    folders[name] = store.result_dir(out_dir, summaries[name]['key'])
  return summaries
