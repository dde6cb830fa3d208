"""The progress record of a training program: where it is, and what became of
each of its models.

`trainer.train` keeps one record per program and returns it. It is saved with
the stacked state in every latest checkpoint, each model's history is
mirrored to `<workdir>/metrics.jsonl`, and once the program has finished the
record also goes to `<group>/training.json` (`FINISHED`), sealed by its
SHA-256, so that a finished program restores from best/ alone.

Layout (epochs and batches count from 0, as every stored record does):

  epoch, batch: the epochs finished, and the batches of the next one.
  examples, loss_sum: the examples seen in this epoch so far, and each
    model's summed training loss over them ([M] floats).
  seconds: training time so far.
  finished: whether the program is done (its last epoch, or no model left).
  models[i]: model i's `history` (one record per epoch), `best` selection
    (None until one is eligible), `failed` (None, or where its loss became
    non-finite) and `stopped` (None, or the epoch after which
    `train.patience` stopped it).
  environments: where it trained (`attn_jax.core.environment.describe`), one
    record per environment in the order they took over: more than one when
    a program resumed under another install or on another machine. Records
    from before 2026-11-29 have none.
"""

import os
from typing import Optional

import numpy as np

from attn_jax.core import atomic_io, digests
from attn_jax.core.errors import StorageError

FINISHED = 'training.json'  # in the group folder: the final progress record


def fresh(num_models: int) -> dict:
  """The record of a program of `num_models` models that has not started."""
  return {'epoch': 0, 'batch': 0, 'examples': 0, 'seconds': 0.0, 'finished': False,
          'loss_sum': [0.0] * num_models,
          'models': [{'history': [], 'best': None, 'failed': None, 'stopped': None}
                     for _ in range(num_models)]}


def upgrade(progress: dict) -> dict:
  """A single-model record of attn-jax <= 0.1 in today's layout."""
  if 'models' in progress:
    return progress
  return {**progress, 'loss_sum': [progress.get('loss_sum', 0.0)],
          'models': [{'history': progress['history'], 'best': progress['best'], 'failed': None}]}


def where(progress: dict, epochs: int, batches: int) -> str:
  """Where a resumed run picks up: progress counts finished epochs and batches."""
  return (f'{progress["epoch"]} of {epochs} epochs done, resuming epoch {progress["epoch"] + 1} '
          f'after batch {progress["batch"]} of {batches}')


def note_environment(progress: dict, environment: dict) -> None:
  """Adds `environment` to the record's 'environments' unless it is the last
  one there (a resume in the same environment adds nothing)."""
  environments = progress.setdefault('environments', [])
  if not environments or environments[-1] != environment:
    environments.append(environment)


# ------------------------------------------------------------ the models' fates

def alive(progress: dict) -> np.ndarray:
  """[M] bools: which models' losses have stayed finite."""
  return np.array([r['failed'] is None for r in progress['models']])


def training(progress: dict) -> np.ndarray:
  """[M] bools: which models still train (neither failed nor stopped).
  Records from before `train.patience` have no 'stopped'."""
  return alive(progress) & np.array([r.get('stopped') is None for r in progress['models']])


def fail(progress: dict, i: int, epoch: int, batch: int, step: int, loss) -> None:
  """Marks model i failed: its loss (or gradient) became `loss` at this batch."""
  progress['models'][i]['failed'] = {'epoch': epoch, 'batch': batch, 'step': step,
                                     'loss': str(loss)}


def stop(progress: dict, i: int, epoch: int) -> None:
  """Marks model i stopped after `epoch` (`train.patience`, or `train.stop_when_perfect`)."""
  progress['models'][i]['stopped'] = epoch


# ------------------------------------------------------------ batches and epochs

def add_batch(progress: dict, index: int, losses: np.ndarray, counted: np.ndarray,
              examples: int) -> None:
  """Counts batch `index` (0-based) of the epoch as done: its `examples` real
  (not padding) examples, and the losses of the models in `counted`."""
  progress['loss_sum'] = [s + (float(x) if ok else 0.0)
                          for s, x, ok in zip(progress['loss_sum'], losses, counted)]
  progress['examples'] += examples
  progress['batch'] = index + 1


def add_epoch(progress: dict, i: int, epoch: int, step: int, metrics: dict, split: str) -> dict:
  """Appends model i's record of `epoch` to its history, and returns it: its
  mean training loss over the epoch's examples and its `metrics` on `split`."""
  record = {'epoch': epoch, 'step': step,
            'train_loss': progress['loss_sum'][i] / max(progress['examples'], 1),
            **{f'{split}_{k}': v for k, v in metrics.items()}}
  progress['models'][i]['history'].append(record)
  return record


def end_epoch(progress: dict, epoch: int, finished: bool) -> None:
  """Moves the record past `epoch`: the next one starts from its first batch."""
  progress.update(epoch=epoch + 1, batch=0, loss_sum=[0.0] * len(progress['models']),
                  examples=0, finished=finished)


# ------------------------------------------------------------ files

def write_histories(members, progress: dict) -> None:
  """Each model's history to its `<workdir>/metrics.jsonl`."""
  for member, record in zip(members, progress['models']):
    atomic_io.write_jsonl(os.path.join(member.workdir, 'metrics.jsonl'), record['history'])


def finished_record(group_dir: str) -> Optional[dict]:
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
  return finished_record(group_dir) is not None


def record_finished(group_dir: str, progress: dict, required: bool = True) -> None:
  """Keeps the finished record outside orbax's latest/, so a finished run
  restores from best/ alone, even when latest/ is damaged or deleted."""
  try:
    atomic_io.write_json(os.path.join(group_dir, FINISHED),
                         digests.sealed({'progress': progress}, 'progress_sha256'))
  except StorageError:
    if required:
      raise  # an older workdir on a read-only mount still restores from latest/
