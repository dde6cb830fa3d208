"""Classification metrics: binary as J&W report them (`common_code/metrics.py`),
multi-class as S&S (accuracy).

Same definitions as scikit-learn's `classification_report`, `roc_auc_score`
and `average_precision_score` (the PR-AUC J&W report), in numpy.
"""

import numpy as np


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
  """P(score of a random positive > a random negative), ties counting 1/2."""
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  labels = np.asarray(labels).astype(bool)
  n_pos, n_neg = labels.sum(), (~labels).sum()
  if n_pos == 0 or n_neg == 0:
    return float('nan')
  ranks = scipy.stats.rankdata(scores)
  return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def average_precision(labels: np.ndarray, scores: np.ndarray) -> float:
  """Σ_k (R_k - R_{k-1}) P_k over the distinct score thresholds, high to low."""
  labels = np.asarray(labels).astype(bool)
  if labels.sum() == 0:
    return float('nan')
  order = np.argsort(-np.asarray(scores), kind='stable')
  scores, labels = np.asarray(scores)[order], labels[order]
  last_of_threshold = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]
  true_pos = np.cumsum(labels)[last_of_threshold]
  precision = true_pos / (last_of_threshold + 1)
  recall = true_pos / labels.sum()
  return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def classification_metrics(labels: np.ndarray, probs: np.ndarray) -> dict:
  """Accuracy, per-class precision/recall/F1, macro F1, ROC-AUC, PR-AUC.

  Args:
    labels: [N] in {0, 1}. probs: [N] predicted P(y = 1); the predicted class
      is 1 when probs > 0.5 (argmax of [1 - p, p], ties to 0, as J&W).
  """
  labels = np.asarray(labels).astype(int)
  predicted = (np.asarray(probs) > 0.5).astype(int)
  out = {'n': int(len(labels)), 'accuracy': float(np.mean(predicted == labels))}
  f1s = []
  for cls, name in ((0, 'neg'), (1, 'pos')):
    tp = np.sum((predicted == cls) & (labels == cls))
    precision = tp / max(np.sum(predicted == cls), 1)
    recall = tp / max(np.sum(labels == cls), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    out.update({f'precision_{name}': float(precision), f'recall_{name}': float(recall),
                f'f1_{name}': float(f1), f'support_{name}': int(np.sum(labels == cls))})
    f1s.append(f1)
  out['macro_f1'] = float(np.mean(f1s))
  out['roc_auc'] = roc_auc(labels, probs)
  out['pr_auc'] = average_precision(labels, probs)
  return out


def multiclass_metrics(labels: np.ndarray, probs: np.ndarray) -> dict:
  """Accuracy (S&S's metric, Table 3), macro F1 and each class's F1.

  Macro F1 averages over the classes that occur, in the labels or the
  predictions (scikit-learn's default): bAbI's 36 answer classes are every
  word of its text, and only six are ever an answer.

  Args:
    labels: [N] class indices. probs: [N, C]; the predicted class is the
      argmax (the first of ties).
  """
  labels = np.asarray(labels).astype(int)
  predicted = np.argmax(np.asarray(probs), axis=-1)
  out = {'n': int(len(labels)), 'accuracy': float(np.mean(predicted == labels))}
  f1s = []
  for cls in range(np.asarray(probs).shape[-1]):
    tp = np.sum((predicted == cls) & (labels == cls))
    precision = tp / max(np.sum(predicted == cls), 1)
    recall = tp / max(np.sum(labels == cls), 1)
    f1s.append(2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0)
  occur = np.union1d(labels, predicted)
  out['macro_f1'] = float(np.mean([f1s[c] for c in occur]))
  out['f1_per_class'] = [float(f) for f in f1s]
  return out
