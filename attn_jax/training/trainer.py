"""The J&W training loop (§A.5), resumable from any checkpoint it writes.

Batch order depends only on (seed, epoch) and dropout keys on the global
step, so a run killed at any point and rerun ends with the same selected
model and metrics as an uninterrupted one. The latest state is saved every
`train.checkpoint_every_steps` steps and at each epoch end; the model with
the best selection-split ROC-AUC (never epoch 0, as J&W HEAD) is saved
separately. Per-epoch metrics live in the checkpoint and are mirrored to
`<workdir>/metrics.jsonl`.
"""

import math
import os
import time
from typing import Any, Callable, Optional

import jax
import ml_collections
import numpy as np
import tqdm

from attn_jax import atomic_io
from attn_jax.data.batching import bucket_lengths, train_batches
from attn_jax.data.dataset import Dataset
from attn_jax.errors import TrainingError
from attn_jax.models import Model
from attn_jax.training import step as train_step_lib
from attn_jax.training.checkpoints import CheckpointStore
from attn_jax.training.evaluation import evaluate_split
from attn_jax.training.optimizer import make_optimizer

SELECTION_METRIC = 'roc_auc'


def fresh_progress() -> dict:
  return {'epoch': 0, 'batch': 0, 'loss_sum': 0.0, 'examples': 0,
          'history': [], 'best': None, 'finished': False, 'seconds': 0.0}


def init_key(seed: int) -> jax.Array:
  return jax.random.fold_in(jax.random.PRNGKey(seed), 0)


def dropout_key(seed: int) -> jax.Array:
  return jax.random.fold_in(jax.random.PRNGKey(seed), 1)


def dataset_buckets(dataset: Dataset, growth: float) -> tuple[int, ...]:
  longest = max(int(s.lengths.max()) for s in dataset.splits.values())
  return bucket_lengths(longest, growth)


def train(model: Model, dataset: Dataset, cfg: ml_collections.ConfigDict, workdir: str,
          initial_params: Callable[[], Any], log: Callable[[str], None] = print) -> dict:
  """Trains (or resumes training) and returns the final progress record.

  Args:
    model: the model to train.
    dataset: needs 'train' and the `train.select_on` split.
    cfg: the whole config.
    workdir: where checkpoints and metrics.jsonl go.
    initial_params: makes the params to start from (`model.init(init_key(seed))`,
      maybe with pretrained embeddings); only called when there is nothing to
      resume.
    log: where one-line summaries go.

  Raises:
    TrainingError: the loss became NaN or infinite; nothing from that step
      on is saved.
  """
  t = cfg.train
  optimizer = make_optimizer(t)
  step_fn = jax.jit(train_step_lib.make_train_step(model, optimizer), donate_argnums=0)
  predict = jax.jit(train_step_lib.make_predict(model))
  dropout_base = dropout_key(cfg.seed)
  use_dropout = cfg.model.dropout > 0
  train_split, select_split = dataset.splits['train'], dataset.splits[t.select_on]
  buckets = dataset_buckets(dataset, cfg.data.bucket_growth)
  steps_per_epoch = math.ceil(len(train_split) / t.batch_size)
  metrics_path = os.path.join(workdir, 'metrics.jsonl')

  with CheckpointStore(workdir) as store:
    template = train_step_lib.init_state(optimizer, model.init(init_key(cfg.seed)))
    restored = store.restore_latest(template)
    if restored is None:
      state, progress = train_step_lib.init_state(optimizer, initial_params()), fresh_progress()
    else:
      state, progress = restored
      # The checkpoint is the record: a kill between a save and this file's
      # rewrite must not leave it behind.
      atomic_io.write_jsonl(metrics_path, progress['history'])
      if progress['finished']:
        log(f'training already finished in {workdir}: restoring the selected model')
        return progress
      log(f'resuming from {store.directory}/latest: epoch {progress["epoch"]}, '
          f'batch {progress["batch"]} of {steps_per_epoch}')
    clock = time.time()

    def save_latest():
      nonlocal clock
      progress['seconds'] += time.time() - clock
      clock = time.time()
      store.save_latest(int(state.step), state, progress)

    bar = tqdm.tqdm(total=t.epochs * steps_per_epoch,
                    initial=progress['epoch'] * steps_per_epoch + progress['batch'],
                    disable=not t.progress, unit='step', dynamic_ncols=True)
    with bar:
      for epoch in range(progress['epoch'], t.epochs):
        bar.set_description(f'epoch {epoch + 1}/{t.epochs}')
        batches = train_batches(train_split.sequences, train_split.labels, t.batch_size,
                                buckets, dataset.pos_weight, cfg.seed, epoch)
        for index in range(progress['batch'], len(batches)):
          batch = batches[index]
          rng = jax.random.fold_in(dropout_base, int(state.step)) if use_dropout else None
          state, loss = step_fn(state, batch, rng)
          loss = float(loss)
          if not math.isfinite(loss):
            raise TrainingError(
                f'the training loss or its gradient became {loss} at epoch {epoch}, batch '
                f'{index} (step {int(state.step)}); training stopped and the last good '
                f'checkpoint in {store.directory} is intact. Check the data and pretrained '
                'vectors for extreme values, or train with a lower '
                '--config.train.learning_rate in a new --workdir.')
          progress['loss_sum'] += loss
          progress['examples'] += int((batch.index >= 0).sum())
          progress['batch'] = index + 1
          bar.update(1)
          if progress['batch'] % t.checkpoint_every_steps == 0 and progress['batch'] < len(batches):
            save_latest()

        metrics, _ = evaluate_split(predict, state.params, select_split, t.eval_batch_size, buckets)
        record = {'epoch': epoch, 'step': int(state.step),
                  'train_loss': progress['loss_sum'] / max(progress['examples'], 1),
                  **{f'{t.select_on}_{k}': v for k, v in metrics.items()}}
        progress['history'].append(record)
        score = metrics[SELECTION_METRIC]
        best = progress['best']
        eligible = (epoch > 0 or not t.skip_first_epoch) and math.isfinite(score)
        if eligible and (best is None or score > best['score']):
          progress['best'] = {'epoch': epoch, 'step': int(state.step), 'split': t.select_on,
                              'metric': SELECTION_METRIC, 'score': score}
          store.save_best(int(state.step), state.params, progress['best'])
        progress.update(epoch=epoch + 1, batch=0, loss_sum=0.0, examples=0,
                        finished=epoch + 1 == t.epochs)
        save_latest()
        atomic_io.write_jsonl(metrics_path, progress['history'])
        bar.write(_epoch_line(record, t.select_on, progress['best']))
  return progress


def _epoch_line(record: dict, split: str, best: Optional[dict]) -> str:
  chosen = f'best epoch {best["epoch"]}' if best else 'no model selected yet'
  return (f'epoch {record["epoch"]}: train loss {record["train_loss"]:.4f} | {split} '
          f'acc {record[f"{split}_accuracy"]:.4f} f1(pos) {record[f"{split}_f1_pos"]:.4f} '
          f'roc-auc {record[f"{split}_roc_auc"]:.4f} | {chosen}')


def restore_best(model: Model, workdir: str):
  """(params, selection) of the selected model of a trained workdir, or None."""
  with CheckpointStore(workdir) as store:
    return store.restore_best(model.init(init_key(0)))  # the template's values are unused


def count_params(params) -> int:
  return int(sum(np.prod(x.shape) for x in jax.tree.leaves(params)))
