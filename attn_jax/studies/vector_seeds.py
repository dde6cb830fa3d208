"""The vectors' own randomness: SST and IMDB BiLSTM + tanh trained from
in-domain skip-gram vectors built with vector seed k, with model seed k, for
k = 0..4, where k = 0 is the J&W grid's seed 0 (vectors seed 0, model seed 0),
so 5 models whose vectors AND model seeds both vary, beside the grid's 5
models that share vector seed 0.

The J&W grid (`jw_grid`) trains each configuration with model seeds 0..4, all
from the one set of vectors gensim builds with `vectors.seed=0`: its intervals
leave out the vectors' randomness, which every seed there shares. This study
trains the four other models, one per arm (`<dataset>_bilstm_tanh_vectors{k}`,
k = 1..4: `vectors.seed=k`, `seed=k`), and its report (attn_jax.tables.study_seeds,
kind 'vector_seeds') sets, per dataset and statistic, the interval over the
grid's five models (model seeds only) beside the interval over the grid's
seed 0 and these four (vectors and model seeds), with the ratio of their
half-widths.

Each arm's model is the grid's model `seed{k}` but for its vectors: the grid's
five models are one program and share its batch order (`train.batch_seed` 0,
attn_jax.workdirs.model_axis), so the arms train with `train.batch_seed=0` too; the
model seed (`seed`: initial parameters and dropout) is set on the config,
which, with one model per arm, has no sweep.
"""

from attn_jax.tables.study_seeds import VECTOR_SEEDS_GRID_ROW as GRID_ARM  # the grid's row of the same configuration
from attn_jax.studies.arms import Arm

DATASETS = ('sst', 'imdb')  # cheapest first
VECTOR_SEEDS = (1, 2, 3, 4)  # 0 is the J&W grid's seed 0
ANALYSES = 'gradient,loo,kendall,attention'  # the three τ
ARMS = tuple(Arm(f'{GRID_ARM.format(dataset=d)}_vectors{k}', d, 'bilstm',
                 {'model.attention': 'tanh', 'vectors.seed': k, 'seed': k, 'train.batch_seed': 0})
             for d in DATASETS for k in VECTOR_SEEDS)
