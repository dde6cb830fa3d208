"""Metrics against their definitions, computed the slow way."""

import itertools

import numpy as np

from attn_jax.training import metrics


def naive_roc_auc(labels, scores):
  pairs = [(p, n) for p, n in itertools.product(np.flatnonzero(labels == 1), np.flatnonzero(labels == 0))]
  return np.mean([1.0 if scores[p] > scores[n] else 0.5 if scores[p] == scores[n] else 0.0 for p, n in pairs])


def naive_average_precision(labels, scores):
  total, previous_recall = 0.0, 0.0
  for threshold in sorted(set(scores), reverse=True):
    predicted = scores >= threshold
    precision = (predicted & (labels == 1)).sum() / predicted.sum()
    recall = (predicted & (labels == 1)).sum() / (labels == 1).sum()
    total += (recall - previous_recall) * precision
    previous_recall = recall
  return total


def test_roc_auc_and_average_precision_with_ties():
  rng = np.random.default_rng(0)
  for _ in range(5):
    labels = rng.integers(0, 2, size=40)
    scores = np.round(rng.random(40), 1)  # many ties
    assert metrics.roc_auc(labels, scores) == np.float64(naive_roc_auc(labels, scores))
    np.testing.assert_allclose(metrics.average_precision(labels, scores),
                               naive_average_precision(labels, scores), rtol=1e-12)


def test_classification_report_numbers():
  labels = np.array([1, 1, 1, 0, 0, 0, 0, 1])
  probs = np.array([0.9, 0.6, 0.4, 0.2, 0.7, 0.5, 0.1, 0.8])  # 0.5 is predicted 0, as argmax
  m = metrics.classification_metrics(labels, probs)
  assert m['accuracy'] == 6 / 8
  assert m['precision_pos'] == 3 / 4 and m['recall_pos'] == 3 / 4 and m['f1_pos'] == 3 / 4
  assert m['precision_neg'] == 3 / 4 and m['support_neg'] == 4
  assert m['macro_f1'] == 3 / 4 and m['n'] == 8


def test_one_class_gives_nan_auc():
  assert np.isnan(metrics.roc_auc(np.ones(4), np.arange(4.0)))
