"""Predictions and metrics over a whole split."""

from typing import Callable, Optional

import numpy as np

from attn_jax.core import compilation
from attn_jax.data.dataset import EncodedSplit
from attn_jax.data.split_batches import eval_batches
from attn_jax.training.metrics import classification_metrics, multiclass_metrics


def predict_split(predict: Callable, params, split: EncodedSplit, batch_size: int,
                  buckets, member: Optional[dict] = None,
                  inputs: Optional[Callable] = None, classes: int = 2) -> np.ndarray:
  """P(y = 1) for every document of `split`, in split order.

  Args:
    predict: jitted (params, tokens, lengths, member, inputs) -> probs
      [..., B]: [B] for one model, [M, B] for a stack of M
      (`step.make_predict`).
    member: the model's objective values ([M] each for a stack).
    inputs: (document index [B], width) -> the batch's inputs (an
      objective's `batch_inputs` for this split), or None for none.

  Returns:
    [..., N] float32 ([..., N, C] for a multi-class model, whose `predict`
    gives [..., B, C]; `classes` > 2 says so).
  """
  probs = None
  for batch in eval_batches(split, batch_size, buckets):
    extra = inputs(batch.index, batch.tokens.shape[1]) if inputs else {}
    compilation.guard_mappings(('predict', id(predict), batch.tokens.shape))
    out = np.asarray(predict(params, batch.tokens, batch.lengths, member or {}, extra))
    if classes > 2:  # the class axis goes first while rows are placed
      out = np.moveaxis(out, -1, 0)
    if probs is None:
      probs = np.zeros(out.shape[:-1] + (len(split),), dtype=np.float32)
    real = batch.index >= 0
    probs[..., batch.index[real]] = out[..., real]
  return probs if classes <= 2 else np.moveaxis(probs, 0, -1)


def bce_mean(labels: np.ndarray, probs: np.ndarray) -> float:
  p = np.clip(probs.astype(np.float64), 1e-7, 1 - 1e-7)
  return float(-np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p)))


def cross_entropy_mean(labels: np.ndarray, probs: np.ndarray) -> float:
  p = np.clip(probs[np.arange(len(labels)), labels.astype(int)].astype(np.float64), 1e-7, 1.0)
  return float(-np.mean(np.log(p)))


def evaluate_probs(labels: np.ndarray, probs: np.ndarray) -> dict:
  """Metrics of one model's probabilities — [N] P(y = 1) of a binary model,
  [N, C] of a multi-class one — incl. the mean unweighted BCE / cross-entropy `loss`."""
  if probs.ndim == 2:
    metrics = multiclass_metrics(labels, probs)
    metrics['loss'] = cross_entropy_mean(labels, probs)
    return metrics
  metrics = classification_metrics(labels, probs)
  metrics['loss'] = bce_mean(labels, probs)
  return metrics


def evaluate_split(predict: Callable, params, split: EncodedSplit, batch_size: int,
                   buckets, member: Optional[dict] = None,
                   inputs: Optional[Callable] = None, classes: int = 2) -> tuple[dict, np.ndarray]:
  """(metrics, probs [N] or [N, C]) of one model (arguments as `predict_split`)."""
  probs = predict_split(predict, params, split, batch_size, buckets, member, inputs, classes)
  return evaluate_probs(split.labels, probs), probs
