"""Stage `attention`: how peaked the model's attention is (the property J&W's
τ depend on): the max-α distribution and the normalised entropy per document.

H̃(α) = −Σ_t α_t log α_t / log n over the n words (Meister et al. footnote 1):
1 for uniform attention, 0 for all of it on one word.
"""

import numpy as np

from attn_jax.core.registry import STAGES
from attn_jax.stages.stage import Stage

MAX_ATTENTION_BINS = (0.0, 0.25, 0.5, 0.75, 1.0)  # J&W's permutation / adversarial bins


def normalised_entropy(alpha: np.ndarray, lengths: np.ndarray) -> np.ndarray:
  """[N, W] attention (zero off the words), [N] lengths with SOS/EOS -> [N] H̃;
  NaN for one-word documents (log 1 = 0)."""
  alpha = np.asarray(alpha, np.float64)
  plogp = np.where(alpha > 0, alpha * np.log(np.where(alpha > 0, alpha, 1.0)), 0.0)
  words = np.asarray(lengths) - 2
  with np.errstate(divide='ignore', invalid='ignore'):
    return np.where(words > 1, -plogp.sum(axis=1) / np.log(np.maximum(words, 1)), np.nan)


def _finalize(ctx, arrays, inputs):
  grad = inputs['gradient']
  alpha, lengths = grad['alpha'], grad['lengths']
  max_alpha = alpha.max(axis=1)
  entropy = normalised_entropy(alpha, lengths)
  edges = MAX_ATTENTION_BINS
  counts, _ = np.histogram(np.clip(max_alpha, 0, 1), bins=edges)
  summary = {
      'max_attention': {'median': float(np.median(max_alpha)), 'mean': float(np.mean(max_alpha)),
                        'quantiles_10_90': [float(np.quantile(max_alpha, q)) for q in (0.1, 0.9)],
                        'fraction_by_bin': {f'[{a:.2f}, {b:.2f}{"]" if b == 1 else ")"}': float(c / len(max_alpha))
                                            for a, b, c in zip(edges[:-1], edges[1:], counts)},
                        'fraction_at_least_0.75': float(np.mean(max_alpha >= 0.75))},
      'normalised_entropy': {'mean': float(np.nanmean(entropy)), 'std': float(np.nanstd(entropy)),
                             'n_nan': int(np.isnan(entropy).sum())}}
  return {'max_attention': max_alpha, 'normalised_entropy': entropy, 'lengths': lengths}, summary


ATTENTION = STAGES.register(Stage(
    name='attention', paper='jw', order=40, requires=('gradient',),
    finalize=_finalize, figures=lambda *args: [], multi_class=True))
