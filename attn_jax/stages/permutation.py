"""Stage `permutation`: J&W's attention permutation experiment (`permute_attn`)."""

import numpy as np

from attn_jax.analysis import attention_permutation as perm_lib
from attn_jax.plots import analysis_figures
from attn_jax.core.registry import STAGES, Section
from attn_jax.stages.stage import Stage, class_groups, predicted_classes

# J&W's max-attention bins (Permutation_MAvDY): [0, .25), [.25, .5), [.5, .75), [.75, 1].
BIN_EDGES = (0.0, 0.25, 0.5, 0.75, 1.0)
KEY_STREAM = 3


def attention_bins(max_attention: np.ndarray) -> np.ndarray:
  """[N] -> bin index 0..3 of J&W's max-attention bins."""
  return np.clip(np.digitize(max_attention, BIN_EDGES[1:-1]), 0, len(BIN_EDGES) - 2)


def bin_label(b: int) -> str:
  return f'[{BIN_EDGES[b]:.2f}, {BIN_EDGES[b + 1]:.2f}' + (']' if b == len(BIN_EDGES) - 2 else ')')


def _compute(ctx, batch):
  num = ctx.settings.permutation.num_permutations
  fn = ctx.jit('permutation', lambda: lambda params, tokens, lengths, keys: perm_lib.permutation_test(
      ctx.model, params, tokens, lengths, keys, num)._asdict())
  return fn(ctx.params, batch.tokens, batch.lengths, ctx.keys(KEY_STREAM, batch.index))


def distribution(values: np.ndarray) -> dict:
  if len(values) == 0:
    return {'n': 0}
  q25, q50, q75 = np.percentile(values, [25, 50, 75])
  return {'n': int(len(values)), 'median': float(q50), 'q25': float(q25), 'q75': float(q75),
          'mean': float(np.mean(values))}


def _finalize(ctx, arrays, inputs):
  predicted = predicted_classes(arrays['probs'])
  classes = {name: rows for name, rows in class_groups(predicted, arrays['probs']).items()
             if name != 'overall'}
  bins = attention_bins(arrays['max_attention'])
  arrays.update(predicted=predicted, bin=bins.astype(np.int32))
  summary = {'overall': distribution(arrays['median']), 'by_bin': {}, 'by_class_and_bin': {},
             'by_class': {name: distribution(arrays['median'][rows]) for name, rows in classes.items()}}
  for b in range(len(BIN_EDGES) - 1):
    summary['by_bin'][bin_label(b)] = distribution(arrays['median'][bins == b])
    for name, rows in classes.items():
      summary['by_class_and_bin'].setdefault(name, {})[bin_label(b)] = distribution(
          arrays['median'][(bins == b) & rows])
  return arrays, summary


PERMUTATION = STAGES.register(Stage(
    name='permutation', paper='jw', order=50,
    compute=_compute, finalize=_finalize,
    figures=lambda arrays, inputs, summary, d: analysis_figures.permutation_violins(
        arrays, [bin_label(b) for b in range(len(BIN_EDGES) - 1)], d,
        class_groups(arrays['predicted'], arrays['probs'])),
    version=3, multi_class=True,  # 2: medians by predicted class; 3: packed-sort permutations
    section=Section(
        defaults=lambda dataset, encoder, variant: dict(num_permutations=10 if variant == 'smoke' else 100),
        check=lambda s, cfg: (None if s.num_permutations >= 1
                              else 'analysis.permutation.num_permutations must be >= 1'))))
