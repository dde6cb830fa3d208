"""Stage `adversarial`: J&W's adversarial attention search (`adversarial_multi`), in the
model's own projection unless `analysis.adversarial.projection='softmax'`."""

import jax.numpy as jnp
import numpy as np
from ml_collections import config_dict

from attn_jax.analysis import adversarial_search as adv_lib, statistics
from attn_jax.core.registry import STAGES, Section
from attn_jax.models import projections
from attn_jax.plots import analysis_figures
from attn_jax.stages.stage import Stage, class_groups, predicted_classes

KEY_STREAM = 4


def _adversarial_fn(model, s):
  def fn(params, tokens, lengths, keys):
    fwd = model.forward(params, tokens, lengths)
    adv = adv_lib.adversarial_attention(
        model, params, fwd.hidden, fwd.alpha, fwd.mask, lengths, keys,
        num_adversaries=s.num_adversaries, steps=s.steps, learning_rate=s.learning_rate,
        hinge_epsilon=s.hinge_epsilon, output_weight=s.output_weight,
        projection=projections.softmax if s.get('projection') == 'softmax' else model.project)
    return {'max_jsd': adv_lib.max_jsd_within(adv, s.report_epsilon), 'jsd': adv.jsd,
            'output_change': adv.output_change, 'adversarial_alpha': adv.alpha,
            'probs': model.probabilities(fwd.logits), 'max_attention': jnp.max(fwd.alpha, axis=-1)}
  return fn


def _compute(ctx, batch):
  s = ctx.settings.adversarial
  fn = ctx.jit('adversarial', lambda: _adversarial_fn(ctx.model, s))
  return fn(ctx.params, batch.tokens, batch.lengths, ctx.keys(KEY_STREAM, batch.index))


def _finalize(ctx, arrays, inputs):
  predicted = predicted_classes(arrays['probs'])
  arrays['predicted'] = predicted
  eps = ctx.settings.adversarial.report_epsilon
  summary = {'report_epsilon': eps,
             'adversaries_within_epsilon': float(np.mean(arrays['output_change'] <= eps))}
  for name, rows in class_groups(predicted, arrays['probs']).items():
    values = arrays['max_jsd'][rows]
    ci = statistics.bootstrap_interval(values, seed=ctx.settings.seed)
    summary[name] = {'n': int(rows.sum()),
                     'mean_max_jsd': float(np.mean(values)) if len(values) else None,
                     'std_max_jsd': float(np.std(values)) if len(values) else None,
                     'fraction_above_0.5': float(np.mean(values > 0.5)) if len(values) else None,
                     'bootstrap_ci95': [ci['low'], ci['high']]}
  return arrays, summary


def _defaults(dataset, encoder, variant) -> dict:
  return dict(
      num_adversaries=5, steps=20 if variant == 'smoke' else 500, learning_rate=0.01, hinge_epsilon=0.01,
      output_weight=500.0, report_epsilon=0.05,
      # 'model': adversaries are projected by the model's own projection (the
      # attention it can produce); 'softmax': J&W's search whatever the model.
      projection='model',
      # Documents per batch of the search (None: analysis.batch_size). On this
      # 2-core CPU 16 to 32 are fastest and 128 or 512 slower (wider padding;
      # benchmarks/analysis_batch_size.py); an accelerator may want more.
      batch_size=config_dict.placeholder(int))


def _check(s, cfg) -> str | None:
  if s.batch_size is not None and s.batch_size < 1:
    return 'analysis.adversarial.batch_size must be >= 1'
  if s.num_adversaries < 1 or s.steps < 0:
    return 'analysis.adversarial.num_adversaries must be >= 1 and .steps >= 0'
  if s.learning_rate <= 0 or s.hinge_epsilon < 0 or s.report_epsilon < 0:
    return 'analysis.adversarial.learning_rate must be > 0 and the epsilons >= 0'
  return None


ADVERSARIAL = STAGES.register(Stage(
    name='adversarial', paper='jw', order=60, compute=_compute,
    positional=frozenset({'adversarial_alpha'}), finalize=_finalize,
    figures=lambda arrays, inputs, summary, d: analysis_figures.max_jsd_histograms(
        arrays, d, class_groups(arrays['predicted'], arrays['probs'])),
    cost=lambda batch: float(np.sum(batch.index >= 0)) * batch.tokens.shape[1],
    batch_size=lambda a: a.adversarial.batch_size,
    version=2, multi_class=True,  # 2: bootstrap intervals of the mean max JSD
    section=Section(_defaults, _check, choices={'projection': ('model', 'softmax')},
                    help={'projection': "the adversaries' projection"}, runtime=('batch_size',),
                    # 'model' is J&W's search for a softmax model: results keyed
                    # before the option existed stay valid.
                    added={'projection': 'model'})))
