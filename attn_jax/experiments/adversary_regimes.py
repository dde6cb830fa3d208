"""Experiment `adversary_regimes`: W&P's model-consistent adversary in Meister
et al.'s two regimes (App. C.1, Table 5).

The adversary's loss is W&P's (`attn_jax.training.consistency_loss`:
(TVD − λ·KL(α_adv ‖ α_base))·Σw) over a λ list, all λ of a regime one program:

- **frozen**: starts from every parameter of the trained base model and
  trains only the attention scorer (`train.update_only='attention'`; whether
  Meister et al. froze the rest is unstated, their name for it says so);
- **unfrozen**: a fresh model trained from scratch (W&P's protocol).

Reported per regime, as Meister et al. report one adversary: the λ with the
largest train-set JSD among adversaries whose train-set TVD is at most
`max_train_tvd` — chosen from training data only — with its test JSD from the
base attention and its test accuracy against the base model's.
"""

import os

import ml_collections
import numpy as np

from attn_jax.core import atomic_io
from attn_jax.core.errors import TrainingError
from attn_jax.core.registry import EXPERIMENTS, Section
from attn_jax.experiments.experiment import DIVERGED, Experiment, comma_floats
from attn_jax.experiments.consistent_adversary import (adversary_rows, adversary_targets,
                                                       check_schedule, choose_by_training_data,
                                                       member_name)
from attn_jax.plots import meister_figures
from attn_jax.stages.stage import params_digest
from attn_jax.training.consistency_loss import consistency_objective
from attn_jax.training.evaluation import evaluate_probs

REGIMES = ('frozen', 'unfrozen')


def _defaults(dataset, encoder, variant) -> ml_collections.ConfigDict:
  del dataset, encoder
  smoke = variant == 'smoke'
  # Meister et al. ran W&P's adversary code, so W&P's schedule (run_adversarial.sh:
  # 80 epochs, patience 10 on the training loss); at 40 the frozen λ >= 0.1 were
  # still lowering their training loss at the last epoch.
  return ml_collections.ConfigDict({
      'regimes': ','.join(REGIMES), 'lambdas': '0.1' if smoke else '1e-3,1e-2,0.1,1',
      'epochs': 2 if smoke else 80, 'patience': 2 if smoke else 10, 'max_train_tvd': 0.05})


def _lambdas(section) -> list[float]:
  return comma_floats(section.lambdas)


def _regimes(section) -> list[str]:
  return [r.strip() for r in section.regimes.split(',') if r.strip()]


def _check(section, cfg):
  del cfg
  problem = check_schedule(section)
  if problem:
    return problem
  regimes = _regimes(section)
  if not regimes or not set(regimes) <= set(REGIMES) or len(set(regimes)) != len(regimes):
    return f'regimes={section.regimes!r} must name some of {", ".join(REGIMES)}, none twice'
  if section.max_train_tvd < 0:
    return 'max_train_tvd must be >= 0'
  return None


def _run(ctx):
  s = ctx.section
  values = _lambdas(s)
  targets = adversary_targets(ctx)
  base_probs = targets[ctx.split_name][0]
  base = evaluate_probs(ctx.split.labels, base_probs)
  summary = {'n': len(ctx.split), 'lambdas': values, 'regimes': {}, 'training_seconds': 0.0,
             'base': {'accuracy': float(base['accuracy']), 'f1_pos': float(base['f1_pos'])}}
  arrays = {'base_probs': base_probs}
  for regime in _regimes(s):
    frozen = regime == 'frozen'
    member = ctx.member_config(**{
        'train.epochs': s.epochs, 'train.patience': s.patience, 'train.select_by': 'train_loss',
        'train.skip_first_epoch': False, 'train.update_only': 'attention' if frozen else None})
    configs = {member_name(lam): member for lam in values}
    for name, lam in zip(configs, values):  # what the config alone cannot say about the model
      atomic_io.write_json(os.path.join(ctx.group_dir(regime), name, 'objective.json'), {
          'objective': f'W&P model-consistent adversary, Meister et al. {regime} regime (App. C.1)',
          'lambda': lam, 'starts_from': 'the base model' if frozen else 'fresh parameters',
          'base_params_sha256_16': params_digest(ctx.params)})
    trained = ctx.train(regime, configs, consistency_objective(values, targets),
                        initial=(lambda m: ctx.params) if frozen else None)
    rows, probs, jsd = adversary_rows(ctx, trained, values, targets)
    if not probs:
      raise TrainingError(DIVERGED.format(what=f'every {regime} adversary'))
    for row in rows:
      if 'failed' not in row:
        row['delta_accuracy'] = row['accuracy'] - summary['base']['accuracy']
    lam, why = choose_by_training_data(rows, s.max_train_tvd)
    chosen = next(r for r in rows if r['lambda'] == lam)
    summary['regimes'][regime] = {'rows': rows, 'chosen_lambda': lam, 'why': why, 'chosen': chosen,
                                  'training_seconds': round(trained.seconds, 1)}
    summary['training_seconds'] += round(trained.seconds, 1)
    arrays[f'{regime}_probs'], arrays[f'{regime}_jsd'] = np.stack(probs), np.stack(jsd)
  return arrays, summary


ADVERSARY_REGIMES = EXPERIMENTS.register(Experiment(
    name='adversary_regimes', paper='meister', order=60, section=Section(_defaults, _check), run=_run,
    figures=lambda arrays, summary, directory: meister_figures.regimes_scatter(summary, directory)))
