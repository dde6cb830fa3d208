"""The J&W training loop (their `Trainers/TrainerBC.py`) for M models at once, resumable from any
checkpoint it writes.

The M models (seeds, learning rates, embeddings, sweep values) are stacked on
a leading axis and trained by one jitted step (vmapped, or looped over the
models: `attn_jax.training.executors`): every model sees the same batch at
each step, in `train.batch_seed`'s order, unless `train.batch_order='own'`
gives each its own order, drawn from its own seed; and each keeps
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
checkpoint's progress record (`attn_jax.training.progress`) and are mirrored
to `<workdir>/metrics.jsonl` of each model. When the last epoch ends, the
final progress record also goes to `<group>/training.json`: a finished
program then restores from best/ alone, without reading latest/ (which may be
damaged, deleted, or on a read-only mount).

What is optimised is an `Objective` (`attn_jax.training.objective`): J&W's
class-weighted BCE by default (`train.loss`), or a plug-in such as W&P's
model-consistent adversary or a guided model, with per-model values (λ, a
guide) on the model axis and per-batch inputs (a base model's targets).

`train` reads top to bottom: set-up (`_program`; `_start` from scratch or
the latest checkpoint), then per epoch its batches (`_epoch_batches`), one
`_step` each (dropping models whose loss is no longer finite), and model
selection (`_select_all`, with `attn_jax.training.selection`'s rules).
What is kept and reported as it goes (the progress record, the bar, the
estimate of time left, the checkpoint cadence) is `_Bookkeeping`, below it.

Epochs and batches are counted from 0 in every stored record (progress,
metrics.jsonl, the selection, eval.json's `selected_epoch`), as results
already use them; messages for people count from 1 ("epoch 2 of 3").
"""

import dataclasses
import os
import time
import warnings
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
import tqdm

from attn_jax.core import compilation, environment, estimates, sharding
from attn_jax.data import split_batches
from attn_jax.data.dataset import Dataset
from attn_jax.core.errors import CheckpointError, StorageError, TrainingError
from attn_jax.models import Model
from attn_jax.training import progress as progress_lib
from attn_jax.training import selection
from attn_jax.training import step as step_lib
from attn_jax.training.checkpoints import CheckpointStore
from attn_jax.training.evaluation import evaluate_probs
from attn_jax.training.executors import make_executor
from attn_jax.training.loss import LOSSES
from attn_jax.training.objective import Objective
from attn_jax.training.optimizer import frozen_subtrees, make_optimizer, with_hyperparams

SELECTION_METRIC = 'roc_auc'
# Training says how long it will take once its steps that compiled nothing add up to this.
ESTIMATE_AFTER_SECONDS = 5.0
# S&S's early stopping and learning-rate halving read dev accuracy (S&S's `configs/*.jsonnet`).
SELECTION_METRICS = ('roc_auc', 'accuracy')

# The progress record moved to `attn_jax.training.progress`; callers and
# tests still reach these through this module.
FINISHED = progress_lib.FINISHED
fresh_progress = progress_lib.fresh
is_finished = progress_lib.is_finished


@dataclasses.dataclass(frozen=True)
class Member:
  """One model of a program: its own config (seed, hyper-parameters) and workdir."""
  cfg: ml_collections.ConfigDict
  workdir: str


def init_key(seed: int) -> jax.Array:
  return jax.random.fold_in(jax.random.PRNGKey(seed), 0)


def dropout_key(seed: int) -> jax.Array:
  return jax.random.fold_in(jax.random.PRNGKey(seed), 1)


def batch_seed(cfg: ml_collections.ConfigDict) -> int:
  return cfg.seed if cfg.train.batch_seed is None else cfg.train.batch_seed


def dataset_buckets(dataset: Dataset, growth: float, model: Optional[Model] = None,
                    max_tokens: Optional[int] = None,
                    max_sentence_words: Optional[int] = None) -> split_batches.Buckets:
  """The padding of every split: flat bucket lengths, or documents ×
  sentences × words for a hierarchical `model` (at most `max_tokens` slots a
  batch; in training at most `max_sentence_words` documents × longest sentence)."""
  hierarchical = model is not None and model.hierarchical
  return split_batches.bucketing(list(dataset.splits.values()), growth, max_tokens, hierarchical,
                                 max_sentence_words)


def train_batches(split, batch_size, buckets, pos_weight, seed, epoch, ties='random'):
  """One epoch's batches (looked up here when called: tests poison batches through it)."""
  return split_batches.train_batches(split, batch_size, buckets, pos_weight, seed, epoch, ties=ties)


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
      vary per model (`attn_jax.workdirs.model_axis.PER_MODEL_KEYS`).
    group_dir: where the stacked latest checkpoint lives (a single model's
      own workdir when M = 1).
    initial_params: member -> the params it starts from; only called when
      there is nothing to resume.
    log: where one-line summaries go.
    objective: what is optimised (default: `train.loss`, J&W's).

  Returns:
    the progress record (`attn_jax.training.progress`): `models[i]` has model
    i's `history`, `best` selection, `failed` (None, or where its loss became
    non-finite) and `stopped` (None, or the epoch after which
    `train.patience` stopped it).

  Raises:
    TrainingError: the loss of every model became NaN or infinite; nothing
      from that step on is saved.
  """
  p = _program(model, dataset, members, group_dir, objective)
  with CheckpointStore(group_dir) as store:
    saved = _saved_progress(p, store)
    if saved is not None and saved['finished']:
      return _already_finished(p, saved, log)
    run = _start(p, store, saved, initial_params, log)
    with _Bookkeeping(p, run, log) as books:
      for epoch in range(run.progress['epoch'], p.t.epochs):
        steps = _epoch_batches(p, epoch)
        books.start_epoch(epoch)
        for index in range(run.progress['batch'], len(steps)):
          books.start_step()
          losses, examples = _step(p, run, steps[index])
          _drop_non_finite(p, run, losses, epoch, index, len(steps), books.bar)  # reads the losses: synced
          books.end_step(index, losses, examples, len(steps))
          if not run.active.any():
            break  # the models still training failed; those stopped early are kept
        _select_all(p, run, epoch, books.bar)
        books.end_epoch(epoch)
        if run.progress['finished']:
          break
  return run.progress


# ---------------------------------------------------------------- one step

def _epoch_batches(p: '_Program', epoch: int) -> list[tuple]:
  """The epoch's steps, each a tuple: the one batch every model sees, or
  (`train.batch_order='own'`) each model's own batch from its own order."""
  t = p.t
  # Looked up in this module when called: tests poison batches through it.
  orders = {seed: train_batches(p.train_split, t.batch_size, p.buckets, p.pos_weight, seed, epoch,
                                ties=t.get('sort_ties', 'stable'))
            for seed in dict.fromkeys(p.order_seeds)}
  counts = {len(b) for b in orders.values()}
  if len(counts) != 1:  # the split's chunks are the same in any order; a guard, not a choice
    raise TrainingError(f'the models\' batch orders have different numbers of batches ({sorted(counts)})')
  if len(orders) == 1:
    return [(batch,) for batch in next(iter(orders.values()))]
  return list(zip(*(orders[seed] for seed in p.order_seeds)))


def _step(p: '_Program', run: '_Run', batches: tuple) -> tuple[np.ndarray, np.ndarray]:
  """One optimiser step of the models still training, on one shared batch or
  one batch each; ([M] losses, [M] real examples each model saw)."""
  if len(batches) == 1:
    batch, = batches
    inputs = p.objective.batch_inputs('train', batch.index, batch.tokens.shape[1])
    compilation.guard_mappings(('train', id(p.executor), batch.tokens.shape))
    run.state, losses = p.executor.step(run.state, batch, p.dropout_keys, p.values, inputs, run.active)
    return losses, np.full(len(p.members), (batch.index >= 0).sum())
  inputs = [p.objective.batch_inputs('train', b.index, b.tokens.shape[1]) for b in batches]
  run.state, losses = p.executor.step_each(run.state, list(batches), p.dropout_keys, p.values, inputs,
                                           run.active)
  return losses, np.array([(b.index >= 0).sum() for b in batches])


def _drop_non_finite(p: '_Program', run: '_Run', losses: np.ndarray, epoch: int, index: int,
                     batches: int, bar: tqdm.tqdm) -> None:
  """Stops each active model whose loss (or gradient) became NaN or infinite
  at this step; the others go on.

  Raises:
    TrainingError: no model is left with anything usable (none is saved).
  """
  broken = run.active & ~np.isfinite(losses)
  if not broken.any():
    return
  step, at = p.executor.step_count(run.state), _at(epoch, index, p.t.epochs, batches)
  if broken.sum() == run.alive.sum():  # no model is left with anything usable
    raise TrainingError(_nan_message(losses[broken][0], at, step, run.store.directory,
                                     p.members[0].workdir if len(p.members) > 1 else ''))
  for i in np.flatnonzero(broken):
    progress_lib.fail(run.progress, i, epoch, index, step, losses[i])
    bar.write(f'warning: model {p.members[i].workdir}: the training loss or its gradient '
              f'became {losses[i]} {at} (step {step}); it is '
              'not selected or evaluated from here on; the other models go on.')
  run.alive &= ~broken
  run.active &= ~broken


# ---------------------------------------------------------------- model selection

def _select_all(p: '_Program', run: '_Run', epoch: int, bar: tqdm.tqdm) -> None:
  """Records `epoch` of each active model on the selection split, keeps its
  params if they are its best yet, and stops it when out of patience."""
  t = p.t

  def inputs(index, width):
    return p.objective.batch_inputs(t.select_on, index, width)

  probs = p.executor.predict(run.state, p.select_split, t.eval_batch_size, p.buckets, p.values,
                             inputs)
  for i, member in enumerate(p.members):
    if not run.active[i]:
      continue
    own = os.path.abspath(member.workdir) == os.path.abspath(p.group_dir)
    improved = _select(run.store if own else None, member, run.progress, i, epoch,
                       p.executor.step_count(run.state),
                       evaluate_probs(p.select_split.labels, probs[i]),
                       p.executor.params(run.state, i), t)
    if t.get('plateau_factor') is not None and not improved and epoch > 0:
      # ReduceLROnPlateau(patience 0): S&S halve the step size after each
      # epoch whose selection score is no better (their `configs/*.jsonnet`).
      run.state = p.executor.scale_learning_rate(run.state, i, t.plateau_factor)
    entry = run.progress['models'][i]
    if selection.out_of_patience(entry, epoch, t) or selection.perfect(entry, t):
      progress_lib.stop(run.progress, i, epoch)
      run.active[i] = False
      if len(p.members) > 1:
        why = (f'{t.select_by} 1.0, which no later epoch can beat' if selection.perfect(entry, t) else
               f'no better {t.select_by} in {t.patience} epochs')
        bar.write(f'{os.path.basename(member.workdir)}: {why}; stopped after epoch {epoch + 1}')


def _select(group_store, member, progress, i, epoch, step, metrics, params, t) -> bool:
  """Records model i's epoch and saves its params if they are its best yet
  (through `group_store` when the model's workdir is the group's own);
  whether they were."""
  record = progress_lib.add_epoch(progress, i, epoch, step, metrics, t.select_on)
  entry = progress['models'][i]
  best = selection.better(entry['best'], record, metrics, t)
  if best is None:
    return False
  entry['best'] = best
  if group_store is not None:
    group_store.save_best(step, params, best)
  else:
    with CheckpointStore(member.workdir) as store:
      store.save_best(step, params, best)
  return True


# ---------------------------------------------------------------- bookkeeping

class _Bookkeeping:
  """What the loop reports and keeps as it goes: the progress record, the
  bar, the estimate of time left, the checkpoint cadence, and, at the end,
  the rate measured (`core.estimates.MeasuredRates`, for the next run's
  estimate before it starts)."""

  def __init__(self, p: '_Program', run: '_Run', log: Callable[[str], None]):
    self.p, self.run, self.log = p, run, log
    self.clock = time.time()  # when `progress['seconds']` was last brought up to date
    self.rates, self.rate_key = estimates.MeasuredRates(), _rate_key(p)
    self.bar: Optional[tqdm.tqdm] = None
    self.estimate: Optional[estimates.Estimate] = None
    self._step_started = self._compiled = 0.0

  def __enter__(self) -> '_Bookkeeping':
    p, progress = self.p, self.run.progress
    done = progress['epoch'] * p.steps_per_epoch + progress['batch']
    left = p.t.epochs * p.steps_per_epoch - done
    earlier = self.rates.get(self.rate_key)
    if earlier and left > 0:
      self.log(f'training: {left:,} steps, about {estimates.duration(left / earlier)} (at {earlier:.1f} '
               'steps/s, the rate an earlier training of this model measured here; compiling not counted)')
    caveat = (f'all {p.t.epochs} epochs: early stopping (train.patience={p.t.patience}) may end it sooner'
              if p.t.patience else '')
    self.estimate = estimates.Estimate('training', left, self.log, min_seconds=ESTIMATE_AFTER_SECONDS,
                                       unit='steps', caveat=caveat)
    self.bar = tqdm.tqdm(total=p.t.epochs * p.steps_per_epoch, initial=done, disable=not p.t.progress,
                         unit='step', dynamic_ncols=True)
    return self

  def __exit__(self, kind, value, traceback) -> None:
    self.bar.close()
    if kind is None and self.estimate.rate():
      self.rates.put(self.rate_key, self.estimate.rate(), 'training steps/s')

  def start_epoch(self, epoch: int) -> None:
    self.bar.set_description(f'epoch {epoch + 1} of {self.p.t.epochs}'
                             + (f' ({len(self.p.members)} models)' if len(self.p.members) > 1 else ''))

  def start_step(self) -> None:
    self._step_started, self._compiled = time.time(), compilation.seconds()

  def end_step(self, index: int, losses: np.ndarray, examples: np.ndarray, batches: int) -> None:
    """Counts the step (in the record, the bar, the estimate) and checkpoints
    every `train.checkpoint_every_steps` (the epoch's end saves anyway)."""
    p, run = self.p, self.run
    self.estimate.add(1, time.time() - self._step_started, compilation.seconds() - self._compiled)
    # An epoch holds every training example once in any order, so the
    # models' counts agree at its end, where the mean loss is read.
    progress_lib.add_batch(run.progress, index, losses * examples if p.objective.mean_loss else losses,
                           run.active, int(examples[0]))
    self.bar.update(1)
    done = run.progress['batch']
    if run.active.any() and done % p.t.checkpoint_every_steps == 0 and done < batches:
      self._save_latest()

  def end_epoch(self, epoch: int) -> None:
    """Closes the epoch in the record (the program is finished after its
    last epoch or when no model is left training), checkpoints, mirrors each
    model's history to its metrics.jsonl, and writes the epoch's line."""
    p, run = self.p, self.run
    progress_lib.end_epoch(run.progress, epoch, finished=epoch + 1 == p.t.epochs or not run.active.any())
    self._save_latest()
    progress_lib.write_histories(p.members, run.progress)
    if run.progress['finished']:
      progress_lib.record_finished(p.group_dir, run.progress)
    self.bar.write(_epoch_line(run.progress, p.t.select_on, p.members, p.t.epochs))

  def _save_latest(self) -> None:
    """Checkpoints the stacked state and progress, counting the time since the last save."""
    p, run = self.p, self.run
    run.progress['seconds'] += time.time() - self.clock
    self.clock = time.time()
    run.store.save_latest(p.executor.step_count(run.state), p.executor.to_checkpoint(run.state),
                          run.progress)


def _rate_key(p: '_Program') -> str:
  """What a program's steps per second depend on (`core.estimates.MeasuredRates`)."""
  cfg = p.members[0].cfg
  m = cfg.model
  return estimates.key(what='training', dataset=cfg.data.dataset, docs=cfg.data.max_docs_per_split,
                       encoder=m.encoder, attention=m.attention, projection=m.projection,
                       hierarchical=bool(m.get('hierarchical', False)), embed_dim=m.embed_dim,
                       hidden_dim=m.hidden_dim, batch_size=p.t.batch_size, models=len(p.members),
                       executor=type(p.executor).__name__, backend=jax.default_backend(),
                       devices=jax.device_count())


def _at(epoch: int, index: int, epochs: int, batches: int) -> str:
  """Where in training a 0-based (epoch, batch) is, as people count: from 1."""
  return f'in epoch {epoch + 1} of {epochs}, batch {index + 1} of {batches}'


def _nan_message(loss, at, step, directory, name='') -> str:
  who = f'every model ({name}, ...): ' if name else ''
  return (f'{who}the training loss or its gradient became {loss} {at} '
          f'(step {step}); training stopped and the last good checkpoint in '
          f'{directory} is intact. Check the data and pretrained vectors for extreme values, '
          'or train with a lower --config.train.learning_rate in a new --workdir.')


def _epoch_line(progress: dict, split: str, members, epochs: int) -> str:
  """One line per model that trained this epoch: its loss, metrics and selection."""
  lines = []
  for member, entry in zip(members, progress['models']):
    stopped = entry.get('stopped')
    if entry['failed'] is not None or not entry['history'] or (stopped is not None and
                                                                stopped < progress['epoch'] - 1):
      continue
    record, best = entry['history'][-1], entry['best']
    chosen = f'best epoch {best["epoch"] + 1}' if best else 'no model selected yet'
    who = f'{os.path.basename(member.workdir)}: ' if len(members) > 1 else ''
    scores = (f'f1(pos) {record[f"{split}_f1_pos"]:.4f} roc-auc {record[f"{split}_roc_auc"]:.4f}'
              if f'{split}_roc_auc' in record else f'macro-f1 {record[f"{split}_macro_f1"]:.4f}')
    lines.append(f'{who}epoch {record["epoch"] + 1} of {epochs}: train loss '
                 f'{record["train_loss"]:.4f} | {split} '
                 f'acc {record[f"{split}_accuracy"]:.4f} {scores} | {chosen}')
  return '\n'.join(lines)


# ---------------------------------------------------------------- set-up

@dataclasses.dataclass(frozen=True)
class _Program:
  """What stays fixed while a program trains."""
  model: Model
  members: list[Member]
  group_dir: str
  t: ml_collections.ConfigDict  # the program's `train` section (members[0]'s)
  objective: Objective
  optimizer: optax.GradientTransformation
  executor: Any  # `attn_jax.training.executors`: Vmapped or Looped
  dropout_keys: jax.Array  # [M]
  values: dict  # per-model values ([M] arrays) of the objective and projection
  order_seeds: tuple[int, ...]  # [M] each model's batch-order seed: all one (shared) or each its own
  pos_weight: Any  # the dataset's, weighting the positive examples of every batch
  train_split: Any  # dataset.splits['train']
  select_split: Any  # dataset.splits[t.select_on]
  buckets: tuple[int, ...]
  steps_per_epoch: int


@dataclasses.dataclass
class _Run:
  """What changes as a program trains."""
  store: CheckpointStore  # the group's, open for the whole run
  state: Any  # the executor's stacked `TrainState`
  progress: dict
  alive: np.ndarray  # [M] bools: losses still finite
  active: np.ndarray  # [M] bools: still training (alive, and not stopped by patience)


def _program(model, dataset, members, group_dir, objective) -> _Program:
  """The program that trains `members`: one optimiser and jitted step for all."""
  cfg = members[0].cfg
  t, num = cfg.train, len(members)
  objective = objective or _configured_objective(t)
  optimizer = make_optimizer(t, frozen_subtrees(cfg))
  executor = make_executor(t.model_axis, num, model, optimizer, objective, cfg.model.dropout > 0,
                           sharding.device_count(cfg.get('devices')))
  dropout_keys = jnp.stack([dropout_key(m.cfg.seed) for m in members])
  values = {**objective.values(num), **projection_values(members)}
  order_seeds = tuple(batch_seed(m.cfg) for m in members)
  train_split, select_split = dataset.splits['train'], dataset.splits[t.select_on]
  buckets = dataset_buckets(dataset, cfg.data.bucket_growth, model, cfg.data.get('max_batch_tokens'),
                            cfg.data.get('max_batch_sentence_words'))
  return _Program(model, members, group_dir, t, objective, optimizer, executor, dropout_keys,
                  values, order_seeds, dataset.pos_weight, train_split, select_split, buckets,
                  steps_per_epoch=split_batches.count_train_batches(train_split, t.batch_size, buckets))


def _configured_objective(t) -> Objective:
  """The `Objective` of `train.loss` (a loss that needs no batch inputs)."""
  loss = LOSSES[t.loss]

  def without_inputs(model, params, batch, rng, member, inputs):
    del inputs
    return loss(model, params, batch, rng, member)

  return Objective(loss=without_inputs, mean_loss=getattr(loss, 'is_mean', False))


def _init_state(p: _Program, member: Member, params) -> step_lib.TrainState:
  opt_state = with_hyperparams(p.optimizer.init(params), member.cfg.train)
  return step_lib.TrainState(params, opt_state, jnp.zeros((), jnp.int32))


def _saved_progress(p: _Program, store: CheckpointStore) -> Optional[dict]:
  """The progress record the group holds (the finished one, else the latest
  checkpoint's), or None; each model's metrics.jsonl is rewritten from it.

  Raises:
    TrainingError: the record is of a program of another number of models.
  """
  progress = progress_lib.finished_record(p.group_dir)
  if progress is None:
    progress = store.latest_progress()
  if progress is None:
    return None
  progress = progress_lib.upgrade(progress)
  num = len(p.members)
  if len(progress['models']) != num:
    raise TrainingError(f'{store.directory} holds a program of {len(progress["models"])} '
                        f'models, this config asks for {num}; use a new --workdir')
  # The checkpoint is the record: a kill between a save and these files'
  # rewrite must not leave them behind.
  progress_lib.write_histories(p.members, progress)
  return progress


def _already_finished(p: _Program, progress: dict, log) -> dict:
  """The finished record, made sure of outside latest/ where the mount allows."""
  progress_lib.record_finished(p.group_dir, progress, required=False)
  log(f'training already finished in {p.group_dir}: restoring the selected model'
      + ('s' if len(p.members) > 1 else ''))
  return progress


def _start(p: _Program, store: CheckpointStore, saved: Optional[dict], initial_params,
           log) -> _Run:
  """The run from scratch (`saved` is None) or from the latest checkpoint."""
  if saved is None:
    state = step_lib.stack([_init_state(p, m, initial_params(m)) for m in p.members])
    progress = progress_lib.fresh(len(p.members))
    state = p.executor.from_checkpoint(state)
  else:
    # Shapes only: the values come from the checkpoint, so no vectors are read.
    template = jax.eval_shape(lambda: step_lib.stack(
        [_init_state(p, m, p.model.init(init_key(m.cfg.seed))) for m in p.members]))
    state, progress = store.restore_latest(template)
    state = p.executor.from_checkpoint(state)
    log(f'resuming from {store.directory}/latest: '
        f'{progress_lib.where(progress, p.t.epochs, p.steps_per_epoch)}')
  here = environment.describe()
  before = (progress.get('environments') or [None])[-1]
  if before is not None and before != here:
    log(f'resuming in another environment than the last one that trained this program '
        f'({"; ".join(environment.differences(before, here))}): from here on its float rounding '
        'may differ from an uninterrupted run; eval.json lists both (trained_in)')
  progress_lib.note_environment(progress, here)
  return _Run(store, state, progress, progress_lib.alive(progress), progress_lib.training(progress))


# ---------------------------------------------------------------- after training

def restore_best(model: Model, workdir: str, log: Optional[Callable[[str], None]] = None,
                 repair: bool = False):
  """(params, selection) of the selected model of a trained workdir, or None.

  When the best checkpoint is damaged or missing and the latest stands in
  (saved at the selected step), `log` says so, and with `repair` (a run
  that writes the workdir) the best checkpoint is written anew.
  """
  with CheckpointStore(workdir) as store:
    restored = store.restore_best(model.init(init_key(0)))  # the template's values are unused
    if store.rescued is None:
      return restored
    step = restored[1]['step']
    note = f'{store.rescued}; the selected model was read from checkpoints/latest/{step} (same step)'
    if repair:
      try:
        store.replace_best(*restored)
        note += f', and checkpoints/best/{step} was written anew from it'
      except (CheckpointError, StorageError) as e:
        note += f'; checkpoints/best could not be rewritten ({e})'
    (log or (lambda line: warnings.warn(line, stacklevel=3)))(note)
    return restored


def count_params(params) -> int:
  return int(sum(np.prod(x.shape) for x in jax.tree.leaves(params)))
