"""Experiment `uniform`: W&P's uniform-attention twin (§3.2).

The base model's architecture and recipe with α = 1/n over the words (0 on
SOS, EOS and padding) whatever the scores: `model.projection='uniform'`. The
scorer's parameters stay in the params pytree (one structure for every
projection) but no gradient reaches them and they are excluded from weight
decay, so they never change: the attention module is dropped in effect, as
in W&P's frozen-attention decoder. Learned vs uniform test F1 is W&P Table 2.
"""

import ml_collections
import numpy as np
from ml_collections import config_dict

from attn_jax.core.errors import TrainingError
from attn_jax.core.registry import EXPERIMENTS, Section
from attn_jax.experiments.experiment import DIVERGED, Experiment, metrics_row
from attn_jax.plots import wiegreffe_pinter_figures


def _defaults(dataset, encoder, variant) -> ml_collections.ConfigDict:
  del dataset, encoder, variant
  return ml_collections.ConfigDict({'seed': config_dict.placeholder(int)})  # None: the base model's


def _run(ctx):
  seed = ctx.section.seed if ctx.section.seed is not None else ctx.cfg.seed
  trained = ctx.train('uniform', {'uniform': ctx.member_config(**{'model.projection': 'uniform',
                                                                   'seed': seed})})
  if trained.params[0] is None:
    raise TrainingError(DIVERGED.format(what=f'the uniform-attention model in {trained.workdirs[0]}'))
  learned, learned_probs = ctx.evaluate(ctx.model, ctx.params, ctx.split_name)
  uniform, uniform_probs = ctx.evaluate(trained.model, trained.params[0], ctx.split_name)
  summary = {
      'n': len(ctx.split), 'seed': seed,
      'learned': {**metrics_row(learned), 'projection': ctx.cfg.model.projection},
      'uniform': {**metrics_row(uniform), 'selected_epoch': trained.selections[0]['epoch']},
      'f1_difference': float(learned['f1_pos'] - uniform['f1_pos']),
      'training_seconds': round(trained.seconds, 1)}
  arrays = {'learned_probs': learned_probs, 'uniform_probs': uniform_probs,
            'labels': np.asarray(ctx.split.labels)}
  return arrays, summary


UNIFORM = EXPERIMENTS.register(Experiment(
    name='uniform', paper='wp', order=10, section=Section(_defaults), run=_run,
    figures=lambda arrays, summary, directory: wiegreffe_pinter_figures.uniform_bars(summary, directory)))
