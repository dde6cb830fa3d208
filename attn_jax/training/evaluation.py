"""Predictions and metrics over a whole split."""

from typing import Callable

import numpy as np

from attn_jax.data.batching import eval_batches
from attn_jax.data.dataset import EncodedSplit
from attn_jax.training.metrics import classification_metrics


def predict_split(predict: Callable, params, split: EncodedSplit, batch_size: int,
                  buckets) -> np.ndarray:
  """P(y = 1) for every document of `split`, in split order.

  Args:
    predict: jitted (params, tokens, lengths) -> probs [..., B]: [B] for one
      model, [M, B] for a stack of M.

  Returns:
    [..., N] float32.
  """
  probs = None
  for batch in eval_batches(split.sequences, split.labels, batch_size, buckets):
    out = np.asarray(predict(params, batch.tokens, batch.lengths))
    if probs is None:
      probs = np.zeros(out.shape[:-1] + (len(split),), dtype=np.float32)
    real = batch.index >= 0
    probs[..., batch.index[real]] = out[..., real]
  return probs


def bce_mean(labels: np.ndarray, probs: np.ndarray) -> float:
  p = np.clip(probs.astype(np.float64), 1e-7, 1 - 1e-7)
  return float(-np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p)))


def evaluate_probs(labels: np.ndarray, probs: np.ndarray) -> dict:
  """Metrics of one model's [N] probabilities, incl. mean unweighted BCE `loss`."""
  metrics = classification_metrics(labels, probs)
  metrics['loss'] = bce_mean(labels, probs)
  return metrics


def evaluate_split(predict: Callable, params, split: EncodedSplit, batch_size: int,
                   buckets) -> tuple[dict, np.ndarray]:
  """(metrics, probs [N]) of one model."""
  probs = predict_split(predict, params, split, batch_size, buckets)
  return evaluate_probs(split.labels, probs), probs
