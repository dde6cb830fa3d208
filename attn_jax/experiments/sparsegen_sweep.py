"""Experiment `sparsegen_sweep`: Meister et al.'s sparsegen λ grid (Table 2,
Figure 3).

One model per λ of the base architecture and recipe with sparsegen-lin
attention (λ → −∞ uniform, λ = 0 sparsemax, λ → 1 argmax), all trained as one
program: each model's λ is its own value on the trainer's model axis
(`Model.with_values`). Each is an ordinary workdir, analysed by the
`importance` stage (and the `loo` it reads) exactly as any run, keyed and
resumable in its own folder. Per λ: accuracy, the mean normalised entropy of
g_ŷ(x) and of α, the fraction of words with α = 0, and the mean τ of α with
each Meister measure. Table 2 is the correlation across the grid of λ with the
per-model mean entropy of g_ŷ(x) (Meister et al. do not say which
coefficient: Pearson over models; Spearman beside it). The base model (its own
projection, e.g. softmax) is a separate point, as in Figure 3.
"""

import ml_collections
import numpy as np
from ml_collections import config_dict

from attn_jax.core.errors import TrainingError
from attn_jax.core.registry import EXPERIMENTS, Section
from attn_jax.experiments.experiment import DIVERGED, Experiment, comma_floats, lambda_problem, metrics_row
from attn_jax.models import build_model
from attn_jax.plots import meister_figures
from attn_jax.stages import stage_store
from attn_jax.stages.stage_runner import run_analyses
from attn_jax.stages import importance as importance_stage

LAMBDAS = '-64,-16,-4,-1,-0.25,0,0.25,0.5,0.75,0.9'
SET = 'sparsegen'


def _defaults(dataset, encoder, variant) -> ml_collections.ConfigDict:
  del dataset, encoder
  return ml_collections.ConfigDict({
      'lambdas': '-1,0,0.5' if variant == 'smoke' else LAMBDAS,
      'seed': config_dict.placeholder(int)})  # None: the base model's


def lambdas(section) -> list[float]:
  return comma_floats(section.lambdas)


def _check(section, cfg):
  del cfg
  return lambda_problem(
      section, '-4,0,0.5', lambda v: len(v) >= 2 and len(set(v)) == len(v) and max(v) < 1,
      'at least 2 distinct λ < 1 (sparsegen-lin needs λ < 1)')


def row(metrics: dict, importance: dict) -> dict:
  """One model's point of the sweep from its test metrics and `importance` summary."""
  return {**metrics_row(metrics),
          'entropy_g_y_x': importance['entropy']['g_y_x']['nanmean'],
          'entropy_alpha': importance['entropy']['alpha']['nanmean'],
          'alpha_zero_fraction': importance['alpha_zero_fraction'],
          'tau': {m: importance['tau'][m]['nanmean'] for m in _measures(importance)},
          'tau_std': {m: importance['tau'][m]['nanstd'] for m in _measures(importance)}}


def _measures(importance: dict) -> list:
  """The importance stage's measures (registry order) that this summary has a τ of."""
  return [m for m in importance_stage.measures() if m in importance['tau']]


def correlations(rows: list) -> dict:
  """Across the grid: λ against the mean entropy of g_ŷ(x) (Table 2) and the mean τ(α, g_ŷ(x))."""
  import scipy.stats  # pylint: disable=g-import-not-at-top  (a second to import: where used)
  rows = [r for r in rows if 'failed' not in r and r['entropy_g_y_x'] is not None]
  if len(rows) < 3:
    return {}
  lam = np.array([r['lambda'] for r in rows])
  entropy = np.array([r['entropy_g_y_x'] for r in rows])
  tau = np.array([r['tau']['g_y_x'] for r in rows], dtype=float)
  return {'pearson_lambda_entropy_g_y_x': float(scipy.stats.pearsonr(lam, entropy).statistic),
          'spearman_lambda_entropy_g_y_x': float(scipy.stats.spearmanr(lam, entropy).statistic),
          'pearson_lambda_tau_g_y_x': float(scipy.stats.pearsonr(lam, tau).statistic),
          'models': len(rows)}


def _run(ctx):
  values = lambdas(ctx.section)
  seed = ctx.section.seed if ctx.section.seed is not None else ctx.cfg.seed
  configs = {f'lambda{lam:g}': ctx.member_config(**{
      'model.projection': 'sparsegen', 'model.sparsegen_lambda': lam, 'seed': seed}) for lam in values}
  trained = ctx.train(SET, configs)
  rows, probs = [], []
  for lam, cfg, workdir, params in zip(values, trained.configs, trained.workdirs, trained.params):
    if params is None:
      rows.append({'lambda': lam, 'failed': 'non-finite loss'})
      continue
    model = build_model(cfg.model, len(ctx.dataset.vocab))  # its own λ
    summaries = run_analyses(model, params, ctx.dataset.splits, cfg, workdir, ctx.dataset.fingerprint,
                             ctx.log, also=('importance',))
    metrics, p = ctx.evaluate(model, params, ctx.split_name)
    rows.append({'lambda': lam, **row(metrics, summaries['importance'])})
    probs.append(p)
  if not probs:
    raise TrainingError(DIVERGED.format(what='every sparsegen model'))
  base_summary, _ = stage_store.read_summary(ctx.stages['importance'])
  base_metrics, base_probs = ctx.evaluate(ctx.model, ctx.params, ctx.split_name)
  m = ctx.cfg.model
  base = {**row(base_metrics, base_summary), 'projection': m.projection,
          'sparsegen_lambda': m.sparsegen_lambda if m.projection == 'sparsegen' else None}
  summary = {'n': len(ctx.split), 'lambdas': values, 'seed': seed, 'measures': _measures(base_summary),
             'rows': rows, 'base': base, 'correlation': correlations(rows),
             'training_seconds': round(trained.seconds, 1)}
  arrays = {'lambdas': np.array([r['lambda'] for r in rows if 'failed' not in r]),
            'probs': np.stack(probs), 'base_probs': base_probs}
  return arrays, summary


SPARSEGEN_SWEEP = EXPERIMENTS.register(Experiment(
    name='sparsegen_sweep', paper='meister', order=50, section=Section(_defaults, _check), run=_run, stages=('importance',),
    figures=lambda arrays, summary, directory: meister_figures.sweep_curves(summary, directory,
                                                                            importance_stage.labels())))
