"""Experiment `guides`: W&P's diagnostic MLP with imposed attention (§3.4).

A non-contextual model — the token-wise `tanh(W e + b)` encoder (J&W's
`average`) with an output layer on Σ_t α_t h_t — trained with a fixed guide
α, or its own attention: UNIFORM (1/n on the words), TRAINED MLP (its own
learned attention, the base config's scorer and projection), BASE (the base
model's attention on each document) and ADVERSARY (the attention of a
model-consistent adversary, experiment `consistent_adversary`). The four
train as one program; a guide reaches the model through the same
`decode(params, h, α)` as any α and receives no gradient. A guide model sees
the guide's train-set attention while training and its test-set attention
when tested. W&P Table 3.

Which adversary: `adversary_lambda`, or by default the λ whose adversary
has the largest train-set mean JSD from the base attention among those whose
train-set mean TVD (½|Δŷ|) is at most `max_train_tvd` — chosen from training
data only (the smallest-TVD adversary if none qualifies). With
`every_adversary`, one more model per other trained λ is guided by that λ's
adversary (members `adversary_<λ>`), in the same program: the guided F1
along the adversaries' JSD from the base attention, which says how much of
W&P's ADVERSARY row depends on how disjoint the chosen adversary is. Each
adversary's row also says where its test-set attention sits against the base
model's (`attention_focus`): how peaked, how much mass they share, and which
words it attends most — what the non-contextual MLP is left to read.
"""

import collections
import os

import ml_collections
import numpy as np
from ml_collections import config_dict

from attn_jax.analysis.attention_focus import attention_focus
from attn_jax.core import atomic_io
from attn_jax.core.errors import CheckpointError, ConfigError, TrainingError
from attn_jax.core.registry import EXPERIMENTS, Section
from attn_jax.experiments.experiment import DIVERGED, Experiment, metrics_row
from attn_jax.experiments.consistent_adversary import adversary_workdir, choose_by_training_data, lambdas
from attn_jax.core.registry import ENCODERS
from attn_jax.plots import wiegreffe_pinter_figures
from attn_jax.workdirs.restore import restore
from attn_jax.training.guided import guided_objective, uniform_alpha

# (name, guide index: -1 = the model's own attention, else the guide arrays' row)
GUIDE_INDICES = (('uniform', 0), ('trained_mlp', -1), ('base', 1), ('adversary', 2))


def _defaults(dataset, encoder, variant) -> ml_collections.ConfigDict:
  del dataset, encoder
  return ml_collections.ConfigDict({
      'encoder': 'average', 'hidden_dim': 8 if variant == 'smoke' else 128,
      'adversary_lambda': config_dict.placeholder(float), 'max_train_tvd': 0.05,
      'every_adversary': False})


def _check(section, cfg):
  if section.encoder not in ENCODERS:
    return f'encoder={section.encoder!r} is not an encoder; choose from {", ".join(ENCODERS)}'
  if section.hidden_dim < 2 or (cfg.model.attention == 'tanh' and section.hidden_dim % 2):
    return f'hidden_dim={section.hidden_dim} must be an even number >= 2 (tanh attention halves it)'
  if section.max_train_tvd < 0:
    return 'max_train_tvd must be >= 0'
  if section.adversary_lambda is not None:
    trained = lambdas(cfg.experiment.consistent_adversary)
    if not any(np.isclose(section.adversary_lambda, lam) for lam in trained):
      return (f'adversary_lambda={section.adversary_lambda:g} is not among '
              f'experiment.consistent_adversary.lambdas ({cfg.experiment.consistent_adversary.lambdas})')
  return None


def choose_adversary(section, adversary_summary: dict) -> tuple[float, str]:
  """(λ, why) of the adversary whose attention guides (see the module docstring)."""
  rows = [r for r in adversary_summary['rows'] if 'failed' not in r]
  if section.adversary_lambda is not None:
    if not any(np.isclose(r['lambda'], section.adversary_lambda) for r in rows):
      trained = ', '.join(f'{r["lambda"]:g}' for r in rows)
      raise ConfigError(f'experiment.guides.adversary_lambda={section.adversary_lambda:g} is not '
                        f'among the trained adversaries ({trained})')
    return section.adversary_lambda, 'experiment.guides.adversary_lambda'
  return choose_by_training_data(rows, section.max_train_tvd)


def _adversary_row(adversary_summary: dict, lam: float) -> dict:
  """The λ sweep's numbers of the adversary for `lam` (its test and train JSD, TVD)."""
  row = next(r for r in adversary_summary['rows'] if np.isclose(r['lambda'], lam))
  return {'adversary_lambda': lam, **{f'adversary_{k}': row.get(k) for k in
                                      ('mean_jsd', 'mean_tvd', 'train_mean_jsd', 'train_mean_tvd')}}


def focus_summary(alpha: np.ndarray, base_alpha: np.ndarray, split, words, top: int = 5) -> dict:
  """`attention_focus` of `alpha` against `base_alpha` on `split`, as means
  over its documents, and the `top` words `alpha` attends most often (word,
  share of documents)."""
  f = attention_focus(alpha, base_alpha, split.lengths)
  argmax = np.asarray(f.argmax)
  counts = collections.Counter(words[int(seq[i])] for seq, i in zip(split.sequences, argmax))
  return {'mean_max_alpha': float(np.mean(f.max_alpha)),
          'mean_shared_mass': float(np.mean(f.shared_mass)),
          'same_argmax_share': float(np.mean(f.same_argmax)),
          'argmax_last_word_share': float(np.mean(f.argmax_is_last_word)),
          'argmax_words': [[w, c / len(split)] for w, c in counts.most_common(top)]}


def _run(ctx):
  s = ctx.section
  _, adversary_summary = ctx.inputs['consistent_adversary']
  lam, why = choose_adversary(s, adversary_summary)
  others = [r['lambda'] for r in adversary_summary['rows'] if 'failed' not in r
            and not np.isclose(r['lambda'], lam)] if s.every_adversary else []
  adversaries = []
  for one in [lam] + others:
    try:
      adversaries.append(restore(adversary_workdir(ctx.out_dir, adversary_summary, one)))
    except CheckpointError as e:
      raise TrainingError(f'the adversary for λ={one:g} cannot be restored ({e}); rerun '
                          'experiment consistent_adversary') from e
  guide_indices = GUIDE_INDICES + tuple((f'adversary_{one:g}', 3 + k) for k, one in enumerate(others))
  lambda_of = {'adversary': lam, **{f'adversary_{one:g}': one for one in others}}
  splits = sorted({'train', ctx.cfg.train.select_on, ctx.split_name})
  guides = {}
  for split in splits:
    data = ctx.dataset.splits[split]
    _, base_alpha = ctx.outputs(ctx.model, ctx.params, split)
    guides[split] = [uniform_alpha(data.lengths, base_alpha.shape[1]), base_alpha]
    guides[split] += [ctx.outputs(a.model, a.params, split)[1] for a in adversaries]
  member = ctx.member_config(**{'model.encoder': s.encoder, 'model.hidden_dim': s.hidden_dim})
  objective = guided_objective([g for _, g in guide_indices], guides)
  for name, _ in guide_indices:
    atomic_io.write_json(os.path.join(ctx.group_dir('guided'), name, 'objective.json'),
                         {'objective': 'W&P diagnostic model with imposed attention (§3.4)',
                          'guide': name, 'adversary_lambda': lambda_of.get(name)})
  trained = ctx.train('guided', {name: member for name, _ in guide_indices}, objective)
  test, words = ctx.dataset.splits[ctx.split_name], ctx.dataset.vocab.tokens
  test_guides = guides[ctx.split_name]
  focus = {name: focus_summary(test_guides[index], test_guides[1], test, words)
           for name, index in guide_indices if index >= 1}  # the base model and each adversary
  rows, probs = [], []
  for (name, index), params, selection in zip(guide_indices, trained.params, trained.selections):
    if params is None:
      raise TrainingError(DIVERGED.format(what=f'the {name}-guided model'))
    metrics, p = ctx.evaluate(trained.model, params, ctx.split_name, objective,
                              {'guide': np.int32(index)})
    extra = _adversary_row(adversary_summary, lambda_of[name]) if name in lambda_of else {}
    if name in focus:
      extra['attention_focus'] = focus[name]
    rows.append({'guide': name, **metrics_row(metrics), 'selected_epoch': selection['epoch'], **extra})
    probs.append(p)
  summary = {'n': len(ctx.split), 'rows': rows, 'adversary_lambda': lam, 'adversary_choice': why,
             'encoder': s.encoder, 'hidden_dim': s.hidden_dim,
             'training_seconds': round(trained.seconds, 1)}
  return {'probs': np.stack(probs), 'labels': np.asarray(ctx.split.labels)}, summary


GUIDES = EXPERIMENTS.register(Experiment(
    name='guides', paper='wp', order=40, run=_run,
    section=Section(_defaults, _check, added={'every_adversary': False}),
    requires=('consistent_adversary',),
    figures=lambda arrays, summary, directory: wiegreffe_pinter_figures.guide_bars(summary, directory)))
