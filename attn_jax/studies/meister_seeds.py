"""Meister et al. (2021) with seeds: the rows of their Tables 1 and 6 —
BiLSTM (additive attention) and Transformer (dot attention), softmax and
sparsemax, on SST and IMDB — plus the BiLSTM's sparsegen λ grid at its two
ends, each 5 seeds with its own batch order, at Meister et al.'s Table 4
learning rates (BiLSTM 1e-4, Transformer 1e-5; weight decay 1e-5, batch 32),
every model analysed by J&W's gradient and leave-one-out and Meister's
`importance` and `state_importance` stages.

    python -m attn_jax.studies run meister_seeds --only='sst_*' --one-at-a-time
    python -m attn_jax.studies report meister_seeds --root=workdirs/meister_seeds --save=results/meister_seeds

Meister et al. publish one model per row, its mean ± sd over test documents;
the report sets attn-jax's mean ± 95 % interval over seeds beside it
(`attn_jax.tables.meister_seeds_report`).
"""

from attn_jax.studies.arms import Arm

ANALYSES = 'gradient,loo,kendall,attention,importance,state_importance'
DATASETS = ('sst', 'imdb')  # cheapest first
# Meister et al., Table 4 (all parameters but the attention's; the attention
# trains without weight decay at the same rate, as every recipe here).
LEARNING_RATES = {'bilstm': 1e-4, 'transformer': 1e-5}
ATTENTIONS = {'bilstm': 'tanh', 'transformer': 'dot'}
# The ends of the λ grid of `experiments.sparsegen_sweep` (Meister's Table 2, Figure 3).
LAMBDA_ENDS = (-64.0, 0.9)


def _arm(dataset: str, encoder: str, projection: str, sparsegen_lambda=None) -> Arm:
  overrides = {'model.attention': ATTENTIONS[encoder], 'model.projection': projection,
               'train.learning_rate': LEARNING_RATES[encoder]}
  name = f'{dataset}_{encoder}_{projection}'
  if sparsegen_lambda is not None:
    overrides['model.sparsegen_lambda'] = sparsegen_lambda
    name += f'{sparsegen_lambda:g}'
  return Arm(name, dataset, encoder, overrides)


ARMS = tuple(arm for d in DATASETS for arm in (
    _arm(d, 'bilstm', 'softmax'), _arm(d, 'bilstm', 'sparsemax'),
    *[_arm(d, 'bilstm', 'sparsegen', lam) for lam in LAMBDA_ENDS],
    _arm(d, 'transformer', 'softmax'), _arm(d, 'transformer', 'sparsemax')))
