"""Model selection: which epoch of a model is kept, and when a model stops.

Each epoch, a model's score on `train.select_on` (`train.select_by`: J&W's
ROC-AUC, S&S's accuracy) or its training loss (W&P's adversary, §4) is
compared with its best so far; only a strictly better, eligible epoch
replaces the selection (never epoch 0 with `train.skip_first_epoch`, as J&W
HEAD). `train.patience` stops a model that has not improved for that many
epochs; `train.stop_when_perfect` one whose selected score is 1.0.
"""

import math
from typing import Optional

import ml_collections


def better(best: Optional[dict], record: dict, metrics: dict, t: ml_collections.ConfigDict) -> Optional[dict]:
  """The selection of an epoch if it is eligible and beats `best`.

  Args:
    best: the model's selection so far (None: none yet).
    record: the epoch's progress record (`progress.add_epoch`): 'epoch',
      'step', 'train_loss'.
    metrics: the epoch's scores on the selection split.
    t: the `train` section (`select_by`, `select_on`, `skip_first_epoch`).

  Returns:
    {'epoch', 'step', 'split', 'metric', 'score'}, or None where the epoch is
    not eligible or not strictly better.
  """
  if t.select_by == 'train_loss':  # lowest wins
    score, split = record['train_loss'], 'train'
    improved = best is None or score < best['score']
  else:
    score, split = metrics[t.select_by], t.select_on
    improved = best is None or score > best['score']
  eligible = (record['epoch'] > 0 or not t.skip_first_epoch) and math.isfinite(score)
  if not (eligible and improved):
    return None
  return {'epoch': record['epoch'], 'step': record['step'], 'split': split,
          'metric': t.select_by, 'score': score}


def out_of_patience(entry: dict, epoch: int, t: ml_collections.ConfigDict) -> bool:
  """Whether `train.patience` epochs passed without a better selection score.

  Args:
    entry: the model's entry of the progress record (its 'best').
    epoch: the epoch just ended (from 0).
    t: the `train` section.

  Returns:
    False with no patience set, or for a model with no selection yet (stopping
    it would leave nothing).
  """
  if t.patience is None or entry['best'] is None:
    return False
  return epoch - entry['best']['epoch'] >= t.patience


def perfect(entry: dict, t: ml_collections.ConfigDict) -> bool:
  """Whether `train.stop_when_perfect` is set and the selected score is 1.0.

  1.0 is the most a selection metric (accuracy, F1, ROC-AUC) can be, and only
  a strictly better epoch replaces a selection, so none will.
  """
  best = entry['best']
  return bool(t.get('stop_when_perfect')) and t.select_by != 'train_loss' and best is not None and best['score'] >= 1.0
