"""Experiment `consistent_adversary`: W&P's model-consistent adversary over a
λ sweep (§4).

For each λ a freshly initialised model of the base architecture learns to
match the base model's train-set predictions while moving its attention
away: loss `(TVD − λ·KL(α_adv ‖ α_base)) · Σ_b w_b` per batch
(`attn_jax.training.consistency_loss`), the base model's predictions and
attention fixed targets. All λ values train as one program; each model stops
after `patience` epochs without a lower training loss and keeps its epoch of
lowest training loss (W&P: 80 epochs, patience 10). Per λ on the test split:
F1 against the gold labels, mean TVD ½|ŷ_adv − ŷ_base| (W&P's, and the
two-class |Δŷ|), and mean JSD(α_base, α_adv): W&P Figure 5 / Table 5, with
J&W's per-instance adversary (the `adversarial` stage) as one point.
"""

import json
import os

import ml_collections
import numpy as np
from ml_collections import config_dict

from attn_jax.core import atomic_io
from attn_jax.analysis.divergences import jw_jsd
from attn_jax.core.errors import TrainingError
from attn_jax.core.registry import EXPERIMENTS, Section
from attn_jax.experiments.experiment import DIVERGED, Experiment, comma_floats, lambda_problem
from attn_jax.plots import wiegreffe_pinter_figures
from attn_jax.stages import stage_store
from attn_jax.stages.stage import params_digest
from attn_jax.training.consistency_loss import consistency_objective
from attn_jax.training.evaluation import evaluate_probs

LAMBDAS = '1e-4,1e-3,3e-3,1e-2,3e-2,0.1,0.3,1,3,10'
SET = 'adversaries'  # the models' folder in the experiment's models folder


def _defaults(dataset, encoder, variant) -> ml_collections.ConfigDict:
  del dataset, encoder
  smoke = variant == 'smoke'
  return ml_collections.ConfigDict({
      'lambdas': '0.01,1' if smoke else LAMBDAS,
      'epochs': 3 if smoke else 80, 'patience': 2 if smoke else 10,
      'seed': config_dict.placeholder(int)})  # None: the base model's (fresh params all the same)


def lambdas(section) -> list[float]:
  return comma_floats(section.lambdas)


def distinct_nonnegative(values: list[float]) -> bool:
  """A valid adversary λ grid: W&P's λ weighs a divergence to maximise."""
  return bool(values) and len(set(values)) == len(values) and min(values) >= 0


def check_schedule(section) -> str | None:
  """What is wrong with an adversary section's λ grid, epochs or patience
  (this experiment's and `adversary_regimes`'), or None."""
  problem = lambda_problem(section, '1e-3,0.1,1', distinct_nonnegative, 'λ >= 0, none twice')
  if problem:
    return problem
  if section.epochs < 1 or section.patience < 1:
    return 'epochs and patience must be >= 1'
  return None


def _check(section, cfg):
  del cfg
  return check_schedule(section)


def member_name(lam: float) -> str:
  return f'lambda{lam:g}'


def jw_point(folder: str) -> dict | None:
  """J&W's per-instance adversary as one (TVD, JSD) point: per document the
  adversary of largest JSD among those within the stage's ε and its W&P TVD
  ½|Δŷ|, or the base attention itself (JSD 0, TVD 0) when none is — J&W's
  "max JSD within ε", as the `adversarial` stage and `seeds` report it. Over
  the documents that stage analysed (`analysis.max_docs`)."""
  summary, _ = stage_store.read_summary(folder)
  if summary is None:
    return None
  arrays = stage_store.load_arrays(folder, summary)
  change, jsd = arrays['output_change'], arrays['jsd']
  allowed = change <= summary['report_epsilon']
  best = np.argmax(np.where(allowed, jsd, -np.inf), axis=1)
  some = allowed.any(axis=1)
  pick = lambda a: np.where(some, np.take_along_axis(a, best[:, None], axis=1)[:, 0], 0.0)
  return {'mean_tvd': float(np.mean(0.5 * pick(change))), 'mean_jsd': float(np.mean(pick(jsd))),
          'n': len(change), 'within_epsilon': float(np.mean(some))}


def adversary_targets(ctx) -> dict:
  """{split: (P(y = 1) [N], α [N, L])} of the base model on every split an
  adversary trains, is selected or is evaluated on: what it must match."""
  splits = sorted({'train', ctx.cfg.train.select_on, ctx.split_name})
  return {split: ctx.outputs(ctx.model, ctx.params, split) for split in splits}


def _run(ctx):
  s = ctx.section
  values = lambdas(s)
  seed = s.seed if s.seed is not None else ctx.cfg.seed
  targets = adversary_targets(ctx)
  member = ctx.member_config(**{'seed': seed, 'train.epochs': s.epochs, 'train.patience': s.patience,
                                'train.select_by': 'train_loss', 'train.skip_first_epoch': False})
  objective = consistency_objective(values, targets)
  configs = {member_name(lam): member for lam in values}
  for name, lam in zip(configs, values):  # what the config alone cannot say about the model
    path = os.path.join(ctx.group_dir(SET), name, 'objective.json')
    atomic_io.write_json(path, {'objective': 'W&P model-consistent adversary (§4)', 'lambda': lam,
                                'base_params_sha256_16': params_digest(ctx.params)})
  trained = ctx.train(SET, configs, objective)
  rows, probs_all, jsd_all = adversary_rows(ctx, trained, values, targets)
  if not probs_all:
    raise TrainingError(DIVERGED.format(what='every adversary'))
  base_probs = targets[ctx.split_name][0]
  base = evaluate_probs(ctx.split.labels, base_probs)
  summary = {'n': len(ctx.split), 'lambdas': values, 'seed': seed, 'rows': rows,
             'base': {'f1_pos': float(base['f1_pos']), 'accuracy': float(base['accuracy'])},
             'jw_adversary': jw_point(ctx.stages['adversarial']),
             'training_seconds': round(trained.seconds, 1)}
  kept = [r['lambda'] for r in rows if 'failed' not in r]
  arrays = {'lambdas': np.array(kept), 'probs': np.stack(probs_all), 'jsd': np.stack(jsd_all),
            'base_probs': base_probs}
  return arrays, summary


def adversary_rows(ctx, trained, values, targets) -> tuple[list, list, list]:
  """Per λ of a trained set of adversaries: (rows, test probs [N] per model
  trained, test JSD from the base attention [N] per model trained). A row has
  test F1/accuracy, mean TVD and JSD against the base model on the test and
  train splits, the selected epoch and its training loss; `failed` for a
  model whose loss became non-finite."""
  base_probs, base_alpha = targets[ctx.split_name]
  train_probs, train_alpha = targets['train']
  rows, probs_all, jsd_all = [], [], []
  for lam, params, selection, record in zip(values, trained.params, trained.selections,
                                            trained.progress['models']):
    if params is None:
      rows.append({'lambda': lam, 'failed': json.dumps(record['failed'])})
      continue
    probs, alpha = ctx.outputs(trained.model, params, ctx.split_name)
    tr_probs, tr_alpha = ctx.outputs(trained.model, params, 'train')
    jsd = np.asarray(jw_jsd(base_alpha, alpha), np.float64)
    metrics = evaluate_probs(ctx.split.labels, probs)
    chosen = record['history'][selection['epoch']]
    rows.append({'lambda': lam, 'f1_pos': float(metrics['f1_pos']),
                 'accuracy': float(metrics['accuracy']),
                 'mean_tvd': float(np.mean(0.5 * np.abs(probs - base_probs))),
                 'mean_abs_dp': float(np.mean(np.abs(probs - base_probs))),
                 'mean_jsd': float(np.mean(jsd)),
                 'train_mean_tvd': float(np.mean(0.5 * np.abs(tr_probs - train_probs))),
                 'train_mean_jsd': float(np.mean(np.asarray(jw_jsd(train_alpha, tr_alpha)))),
                 'selected_epoch': selection['epoch'], 'epochs_trained': len(record['history']),
                 'train_loss': float(chosen['train_loss'])})
    probs_all.append(probs)
    jsd_all.append(jsd)
  return rows, probs_all, jsd_all


def choose_by_training_data(rows: list, max_train_tvd: float) -> tuple[float, str]:
  """(λ, why) of the adversary with the largest train-set JSD among those
  whose train-set TVD is at most `max_train_tvd` (else the smallest TVD):
  chosen from training data only, never the test split."""
  rows = [r for r in rows if 'failed' not in r]
  close = [r for r in rows if r['train_mean_tvd'] <= max_train_tvd]
  if close:
    best = max(close, key=lambda r: r['train_mean_jsd'])
    return best['lambda'], (f'largest train-set JSD ({best["train_mean_jsd"]:.3f}) among adversaries '
                            f'with train-set TVD <= {max_train_tvd:g}')
  best = min(rows, key=lambda r: r['train_mean_tvd'])
  return best['lambda'], f'no adversary has train-set TVD <= {max_train_tvd:g}: the closest'


def adversary_workdir(out_dir: str, summary: dict, lam: float) -> str:
  """The workdir of the adversary trained with λ, from the experiment's summary."""
  return os.path.join(out_dir, summary['models_folder'], SET, member_name(lam))


CONSISTENT_ADVERSARY = EXPERIMENTS.register(Experiment(
    name='consistent_adversary', paper='wp', order=30, section=Section(_defaults, _check), run=_run, stages=('adversarial',),
    figures=lambda arrays, summary, directory: wiegreffe_pinter_figures.tradeoff_curve(summary, directory)))
