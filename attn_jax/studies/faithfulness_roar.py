"""ROAR and recursive ROAR (issue 79; `attn_jax.experiments.roar`) on J&W's
BiLSTM + tanh rows: for each seed's model, each measure's top k % of words
masked in every split and a model retrained per (measure, k), 3 seeds a row.

    python -m attn_jax.studies run roar --only='sst_*' --one-at-a-time
    python -m attn_jax.studies report roar --root=workdirs/roar --save=results/roar --readme=docs/faithfulness.md

k = 10, 30, 50, 70 and 90 % (Madsen et al. ran every 10 %; five points are
what the CPU here allows for two rows, and the experiment's default is
their nine), plus k = 0 (the row's own model) and 100 % (every word masked).
Measures: attention, gradient norm, gradient × input, integrated gradients,
leave-one-out and random (`roar.MEASURES_DEFAULT`). Each arm is the J&W
grid's row of the same config (`--reuse=workdirs/jw_grid` lends its trained
models where they exist).
"""

from attn_jax.studies.arms import Arm

ANALYSES = ''  # the experiments train and evaluate; no analysis stage of the base model is needed
FRACTIONS = '0.1,0.3,0.5,0.7,0.9'
_EXPERIMENTS = {'experiments': 'roar,recursive_roar', 'experiment.roar.fractions': FRACTIONS,
                'experiment.recursive_roar.fractions': FRACTIONS}
DATASETS = ('sst', 'babi1', 'babi2', 'imdb')  # the order: cheapest first after SST
ARMS = tuple(Arm(f'{d}_bilstm_tanh', d, 'bilstm', {'model.attention': 'tanh', **_EXPERIMENTS})
             for d in DATASETS)
