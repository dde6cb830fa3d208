"""The J&W training loop (§A.5) for M models at once, resumable from any
checkpoint it writes.

The M models (seeds, learning rates, embeddings, sweep values) are stacked on
a leading axis and trained by one jitted step (vmapped, or looped over the
models: `attn_jax.training.executors`): every model sees the same batch at
each step (the batch order is `train.batch_seed`'s, shared), and each keeps
its own params, optimiser state, hyper-parameters, dropout keys, NaN check and
model selection. A model trained alone is the M = 1 case.

Batch order depends only on (batch seed, epoch) and dropout keys on each
model's seed and the global step, so a run killed at any point and rerun ends
with the same selected models and metrics as an uninterrupted one. The
stacked state is saved every `train.checkpoint_every_steps` steps and at each
epoch end; each model's best params by selection-split ROC-AUC (never epoch
0, as J&W HEAD), or by its lowest training loss (`train.select_by`, W&P's
adversary), go to its own workdir; with `train.patience` a model stops after
that many epochs without a better selection score, and the program when all
have stopped. Per-epoch metrics live in the
checkpoint and are mirrored to `<workdir>/metrics.jsonl` of each model.
When the last epoch ends, the final progress record also goes to
`<group>/training.json`: a finished program then restores from best/ alone,
without reading latest/ (which may be damaged, deleted, or on a read-only
mount).

What is optimised is an `Objective` (`attn_jax.training.objective`): J&W's
class-weighted BCE by default (`train.loss`), or a plug-in such as W&P's
model-consistent adversary or a guided model, with per-model values (λ, a
guide) on the model axis and per-batch inputs (a base model's targets).

Epochs and batches are counted from 0 in every stored record (progress,
metrics.jsonl, the selection, eval.json's `selected_epoch`), as results
already use them; messages for people count from 1 ("epoch 2 of 3").
"""

import dataclasses
import math
import os
import time
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import tqdm

from attn_jax import atomic_io, digests, sharding
from attn_jax.data.batching import bucket_lengths, train_batches
from attn_jax.data.dataset import Dataset
from attn_jax.errors import StorageError, TrainingError
from attn_jax.models import Model
from attn_jax.training import step as step_lib
from attn_jax.training.checkpoints import CheckpointStore
from attn_jax.training.evaluation import evaluate_probs
from attn_jax.training.executors import make_executor
from attn_jax.training.loss import LOSSES
from attn_jax.training.objective import Objective
from attn_jax.training.optimizer import frozen_subtrees, make_optimizer, with_hyperparams

SELECTION_METRIC = 'roc_auc'
FINISHED = 'training.json'  # in the group folder: the final progress record


@dataclasses.dataclass(frozen=True)
class Member:
  """One model of a program: its own config (seed, hyper-parameters) and workdir."""
  cfg: ml_collections.ConfigDict
  workdir: str


def fresh_progress(num_models: int) -> dict:
  return {'epoch': 0, 'batch': 0, 'examples': 0, 'seconds': 0.0, 'finished': False,
          'loss_sum': [0.0] * num_models,
          'models': [{'history': [], 'best': None, 'failed': None, 'stopped': None}
                     for _ in range(num_models)]}


def _upgrade(progress: dict) -> dict:
  """A single-model record of attn-jax <= 0.1 in today's layout."""
  if 'models' in progress:
    return progress
  return {**progress, 'loss_sum': [progress.get('loss_sum', 0.0)],
          'models': [{'history': progress['history'], 'best': progress['best'], 'failed': None}]}


def init_key(seed: int) -> jax.Array:
  return jax.random.fold_in(jax.random.PRNGKey(seed), 0)


def dropout_key(seed: int) -> jax.Array:
  return jax.random.fold_in(jax.random.PRNGKey(seed), 1)


def batch_seed(cfg: ml_collections.ConfigDict) -> int:
  return cfg.seed if cfg.train.batch_seed is None else cfg.train.batch_seed


def dataset_buckets(dataset: Dataset, growth: float) -> tuple[int, ...]:
  longest = max(int(s.lengths.max()) for s in dataset.splits.values())
  return bucket_lengths(longest, growth)


def _write_histories(members, progress) -> None:
  for member, record in zip(members, progress['models']):
    atomic_io.write_jsonl(os.path.join(member.workdir, 'metrics.jsonl'), record['history'])


def _at(epoch: int, index: int, epochs: int, batches: int) -> str:
  """Where in training a 0-based (epoch, batch) is, as people count: from 1."""
  return f'in epoch {epoch + 1} of {epochs}, batch {index + 1} of {batches}'


def _where(progress: dict, epochs: int, batches: int) -> str:
  """Where a resumed run picks up: progress counts finished epochs and batches."""
  return (f'{progress["epoch"]} of {epochs} epochs done, resuming epoch {progress["epoch"] + 1} '
          f'after batch {progress["batch"]} of {batches}')


def _finished_record(group_dir: str):
  """The final progress record of a finished program, or None (not finished,
  or a workdir from before this file, whose record is only in latest/)."""
  try:
    record = atomic_io.read_json(os.path.join(group_dir, FINISHED))
    if not digests.is_sealed(record, 'progress_sha256') or not record['progress']['finished']:
      return None
    return record['progress']
  except (OSError, ValueError, KeyError, TypeError):
    return None  # missing, damaged or edited: latest/ holds the same record


def is_finished(group_dir: str) -> bool:
  """Whether `group_dir` holds a finished training program."""
  return _finished_record(group_dir) is not None


def _record_finished(group_dir: str, progress: dict, required: bool = True) -> None:
  """Keeps the finished record outside orbax's latest/, so a finished run
  restores from best/ alone, even when latest/ is damaged or deleted."""
  try:
    atomic_io.write_json(os.path.join(group_dir, FINISHED),
                         digests.sealed({'progress': progress}, 'progress_sha256'))
  except StorageError:
    if required:
      raise  # an older workdir on a read-only mount still restores from latest/


def _nan_message(loss, at, step, directory, name='') -> str:
  who = f'every model ({name}, ...): ' if name else ''
  return (f'{who}the training loss or its gradient became {loss} {at} '
          f'(step {step}); training stopped and the last good checkpoint in '
          f'{directory} is intact. Check the data and pretrained vectors for extreme values, '
          'or train with a lower --config.train.learning_rate in a new --workdir.')


def _configured_objective(t) -> Objective:
  """The `Objective` of `train.loss` (a loss that needs no batch inputs)."""
  loss = LOSSES[t.loss]

  def without_inputs(model, params, batch, rng, member, inputs):
    del inputs
    return loss(model, params, batch, rng, member)

  return Objective(loss=without_inputs)


def projection_values(members: list[Member]) -> dict:
  """Per-model values the model's projection reads ([M] arrays): each
  sparsegen model's own λ (`Model.with_values`), so a λ sweep is one program."""
  if members[0].cfg.model.projection != 'sparsegen':
    return {}
  return {'sparsegen_lambda': np.array([m.cfg.model.sparsegen_lambda for m in members], np.float32)}


def train(model: Model, dataset: Dataset, members: list[Member], group_dir: str,
          initial_params: Callable[[Member], Any], log: Callable[[str], None] = print,
          objective: Optional[Objective] = None) -> dict:
  """Trains (or resumes training) the models of `members` as one program.

  Args:
    model: the architecture all members share.
    dataset: needs 'train' and the `train.select_on` split.
    members: the models; their configs differ only in keys a program may
      vary per model (`attn_jax.model_axis.PER_MODEL_KEYS`).
    group_dir: where the stacked latest checkpoint lives (a single model's
      own workdir when M = 1).
    initial_params: member -> the params it starts from; only called when
      there is nothing to resume.
    log: where one-line summaries go.
    objective: what is optimised (default: `train.loss`, J&W's).

  Returns:
    the progress record: `models[i]` has model i's `history`, `best`
    selection, `failed` (None, or where its loss became non-finite) and
    `stopped` (None, or the epoch after which `train.patience` stopped it).

  Raises:
    TrainingError: the loss of every model became NaN or infinite; nothing
      from that step on is saved.
  """
  cfg = members[0].cfg
  t, num = cfg.train, len(members)
  objective = objective or _configured_objective(t)
  optimizer = make_optimizer(t, frozen_subtrees(cfg))
  executor = make_executor(t.model_axis, num, model, optimizer, objective, cfg.model.dropout > 0,
                           sharding.device_count(cfg.get('devices')))
  dropout_keys = jnp.stack([dropout_key(m.cfg.seed) for m in members])
  values = {**objective.values(num), **projection_values(members)}
  order_seed = batch_seed(cfg)
  train_split, select_split = dataset.splits['train'], dataset.splits[t.select_on]
  buckets = dataset_buckets(dataset, cfg.data.bucket_growth)
  steps_per_epoch = math.ceil(len(train_split) / t.batch_size)

  def init_state(member, params):
    opt_state = with_hyperparams(optimizer.init(params), member.cfg.train)
    return step_lib.TrainState(params, opt_state, jnp.zeros((), jnp.int32))

  with CheckpointStore(group_dir) as store:
    progress = _finished_record(group_dir)
    if progress is None:
      progress = store.latest_progress()
    if progress is None:
      state = step_lib.stack([init_state(m, initial_params(m)) for m in members])
      progress = fresh_progress(num)
      state = executor.from_checkpoint(state)
    else:
      progress = _upgrade(progress)
      if len(progress['models']) != num:
        raise TrainingError(f'{store.directory} holds a program of {len(progress["models"])} '
                            f'models, this config asks for {num}; use a new --workdir')
      # The checkpoint is the record: a kill between a save and these files'
      # rewrite must not leave them behind.
      _write_histories(members, progress)
      if progress['finished']:
        _record_finished(group_dir, progress, required=False)
        log(f'training already finished in {group_dir}: restoring the selected model'
            + ('s' if num > 1 else ''))
        return progress
      # Shapes only: the values come from the checkpoint, so no vectors are read.
      template = jax.eval_shape(lambda: step_lib.stack(
          [init_state(m, model.init(init_key(m.cfg.seed))) for m in members]))
      state, progress = store.restore_latest(template)
      state = executor.from_checkpoint(state)
      log(f'resuming from {store.directory}/latest: {_where(progress, t.epochs, steps_per_epoch)}')
    alive = np.array([r['failed'] is None for r in progress['models']])
    active = alive & np.array([r.get('stopped') is None for r in progress['models']])
    clock = time.time()

    def save_latest():
      nonlocal clock
      progress['seconds'] += time.time() - clock
      clock = time.time()
      store.save_latest(executor.step_count(state), executor.to_checkpoint(state), progress)

    bar = tqdm.tqdm(total=t.epochs * steps_per_epoch,
                    initial=progress['epoch'] * steps_per_epoch + progress['batch'],
                    disable=not t.progress, unit='step', dynamic_ncols=True)
    with bar:
      for epoch in range(progress['epoch'], t.epochs):
        bar.set_description(f'epoch {epoch + 1} of {t.epochs}'
                            + (f' ({num} models)' if num > 1 else ''))
        batches = train_batches(train_split.sequences, train_split.labels, t.batch_size,
                                buckets, dataset.pos_weight, order_seed, epoch)
        for index in range(progress['batch'], len(batches)):
          batch = batches[index]
          inputs = objective.batch_inputs('train', batch.index, batch.tokens.shape[1])
          state, losses = executor.step(state, batch, dropout_keys, values, inputs, active)
          broken = active & ~np.isfinite(losses)
          if broken.any():
            step, at = executor.step_count(state), _at(epoch, index, t.epochs, len(batches))
            if broken.sum() == alive.sum():  # no model is left with anything usable
              raise TrainingError(_nan_message(losses[broken][0], at, step, store.directory,
                                               members[0].workdir if num > 1 else ''))
            for i in np.flatnonzero(broken):
              progress['models'][i]['failed'] = {'epoch': epoch, 'batch': index, 'step': step,
                                                 'loss': str(losses[i])}
              bar.write(f'warning: model {members[i].workdir}: the training loss or its gradient '
                        f'became {losses[i]} {at} (step {step}); it is '
                        'not selected or evaluated from here on; the other models go on.')
            alive &= ~broken
            active &= ~broken
          progress['loss_sum'] = [s + (float(x) if ok else 0.0)
                                  for s, x, ok in zip(progress['loss_sum'], losses, active)]
          progress['examples'] += int((batch.index >= 0).sum())
          progress['batch'] = index + 1
          bar.update(1)
          if not active.any():
            break  # the models still training failed; those stopped early are kept
          if progress['batch'] % t.checkpoint_every_steps == 0 and progress['batch'] < len(batches):
            save_latest()

        probs = executor.predict(state, select_split, t.eval_batch_size, buckets, values,
                                 lambda index, width: objective.batch_inputs(t.select_on, index, width))
        for i, member in enumerate(members):
          if active[i]:
            own = os.path.abspath(member.workdir) == os.path.abspath(group_dir)
            _select(store if own else None, member, progress, i, epoch, executor.step_count(state),
                    evaluate_probs(select_split.labels, probs[i]), executor.params(state, i), t)
            if _out_of_patience(progress['models'][i], epoch, t):
              progress['models'][i]['stopped'] = epoch
              active[i] = False
              if num > 1:
                bar.write(f'{os.path.basename(member.workdir)}: no better {t.select_by} in '
                          f'{t.patience} epochs; stopped after epoch {epoch + 1}')
        progress.update(epoch=epoch + 1, batch=0, loss_sum=[0.0] * num, examples=0,
                        finished=epoch + 1 == t.epochs or not active.any())
        save_latest()
        _write_histories(members, progress)
        if progress['finished']:
          _record_finished(group_dir, progress)
        bar.write(_epoch_line(progress, t.select_on, members, t.epochs))
        if progress['finished']:
          break
  return progress


def _out_of_patience(entry: dict, epoch: int, t) -> bool:
  """Whether `train.patience` epochs passed without a better selection score.
  A model with no selection yet goes on: stopping it would leave nothing."""
  if t.patience is None or entry['best'] is None:
    return False
  return epoch - entry['best']['epoch'] >= t.patience


def _select(group_store, member, progress, i, epoch, step, metrics, params, t) -> None:
  """Records model i's epoch and saves its params if they are its best yet
  (through `group_store` when the model's workdir is the group's own)."""
  record = {'epoch': epoch, 'step': step,
            'train_loss': progress['loss_sum'][i] / max(progress['examples'], 1),
            **{f'{t.select_on}_{k}': v for k, v in metrics.items()}}
  entry = progress['models'][i]
  entry['history'].append(record)
  best = entry['best']
  if t.select_by == 'train_loss':  # lowest wins (W&P's adversary, §C.4)
    score, split = record['train_loss'], 'train'
    better = best is None or score < best['score']
  else:
    score, split = metrics[SELECTION_METRIC], t.select_on
    better = best is None or score > best['score']
  eligible = (epoch > 0 or not t.skip_first_epoch) and math.isfinite(score)
  if eligible and better:
    entry['best'] = {'epoch': epoch, 'step': step, 'split': split,
                     'metric': t.select_by, 'score': score}
    if group_store is not None:
      group_store.save_best(step, params, entry['best'])
    else:
      with CheckpointStore(member.workdir) as store:
        store.save_best(step, params, entry['best'])


def _epoch_line(progress: dict, split: str, members, epochs: int) -> str:
  lines = []
  for member, entry in zip(members, progress['models']):
    stopped = entry.get('stopped')
    if entry['failed'] is not None or not entry['history'] or (stopped is not None and
                                                                stopped < progress['epoch'] - 1):
      continue
    record, best = entry['history'][-1], entry['best']
    chosen = f'best epoch {best["epoch"] + 1}' if best else 'no model selected yet'
    who = f'{os.path.basename(member.workdir)}: ' if len(members) > 1 else ''
    lines.append(f'{who}epoch {record["epoch"] + 1} of {epochs}: train loss '
                 f'{record["train_loss"]:.4f} | {split} '
                 f'acc {record[f"{split}_accuracy"]:.4f} f1(pos) {record[f"{split}_f1_pos"]:.4f} '
                 f'roc-auc {record[f"{split}_roc_auc"]:.4f} | {chosen}')
  return '\n'.join(lines)


def restore_best(model: Model, workdir: str):
  """(params, selection) of the selected model of a trained workdir, or None."""
  with CheckpointStore(workdir) as store:
    return store.restore_best(model.init(init_key(0)))  # the template's values are unused


def count_params(params) -> int:
  return int(sum(np.prod(x.shape) for x in jax.tree.leaves(params)))
