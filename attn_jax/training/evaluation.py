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
    predict: jitted (params, tokens, lengths) -> probs [B].
  """
  probs = np.zeros(len(split), dtype=np.float32)
  for batch in eval_batches(split.sequences, split.labels, batch_size, buckets):
    real = batch.index >= 0
    probs[batch.index[real]] = np.asarray(predict(params, batch.tokens, batch.lengths))[real]
  return probs


def bce_mean(labels: np.ndarray, probs: np.ndarray) -> float:
  p = np.clip(probs.astype(np.float64), 1e-7, 1 - 1e-7)
  return float(-np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p)))


def evaluate_split(predict: Callable, params, split: EncodedSplit, batch_size: int,
                   buckets) -> tuple[dict, np.ndarray]:
  """(metrics incl. mean unweighted BCE `loss`, probs [N])."""
  probs = predict_split(predict, params, split, batch_size, buckets)
  metrics = classification_metrics(split.labels, probs)
  metrics['loss'] = bce_mean(split.labels, probs)
  return metrics, probs
