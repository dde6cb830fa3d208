"""Kendall τ-b between two importance rankings of each document (J&W §B.3).

J&W use plain `scipy.stats.kendalltau` (τ-b, two-sided p-value) over the
words only (SOS/EOS excluded), then report the mean and std (ddof 0) over
documents and the fraction with p ≤ 0.05, overall and by *predicted* class.
A constant vector gives τ = NaN, which J&W let propagate into the mean; the
summary also gives NaN-robust means.
"""

import warnings

import numpy as np
import scipy.stats


def kendall_tau(a: np.ndarray, b: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """τ-b and its p-value per document over positions 1 .. L − 2.

  Args:
    a, b: [N, W] scores; lengths: [N] (with SOS and EOS).

  Returns:
    (tau [N], p_value [N]) as float64; NaN where either vector is constant.
  """
  a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  tau = np.full(len(lengths), np.nan)
  p_value = np.full(len(lengths), np.nan)
  with warnings.catch_warnings():
    warnings.simplefilter('ignore')  # scipy warns on constant input; NaN is the answer
    for i, length in enumerate(lengths):
      result = scipy.stats.kendalltau(a[i, 1:length - 1], b[i, 1:length - 1])
      tau[i], p_value[i] = result.statistic, result.pvalue
  return tau, p_value


def summarize(values: np.ndarray, predicted: np.ndarray, p_value: np.ndarray | None = None) -> dict:
  """J&W's summary of a per-document statistic, overall and by predicted class.

  Returns:
    {'overall'|'neg'|'pos': {'mean', 'std' (NaN-propagating, ddof 0),
    'nanmean', 'nanstd', 'n', 'n_nan', and 'pval_sig' when p-values are given}}.
  """
  groups = {'overall': np.ones(len(values), bool), 'neg': predicted == 0, 'pos': predicted == 1}
  out = {}
  for name, rows in groups.items():
    v = values[rows]
    finite = v[np.isfinite(v)]
    entry = {'n': int(rows.sum()), 'n_nan': int(len(v) - len(finite)),
             'mean': float(np.mean(v)) if len(v) else None,
             'std': float(np.std(v)) if len(v) else None,
             'nanmean': float(np.mean(finite)) if len(finite) else None,
             'nanstd': float(np.std(finite)) if len(finite) else None}
    if p_value is not None:
      entry['pval_sig'] = float(np.mean(p_value[rows] <= 0.05)) if len(v) else None
    out[name] = entry
  return out
