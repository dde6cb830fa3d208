"""The batch order as a random factor: J&W grid rows whose five models each
draw their own batch order, as five runs of J&W's code do.

The J&W grid (`jw_grid`) trains a configuration's five model seeds as one
program (attn_jax.workdirs.model_axis), and they share its batch order
(`train.batch_seed` 0): their interval leaves out the batch order's
randomness, which every seed there shares. Each run of J&W's own code
(benchmarks/original_code/jain_wallace_reference.py) seeds NumPy's global generator, which draws its
noisy length sort and batch shuffle, so its five seeds have five batch
orders. This study trains, for the grid rows where the two implementations
disagreed, model seed k with batch seed k for k = 1..4 (one model per arm,
`<row>_batches<k>`); with the grid's seed 0 (model seed 0, batch seed 0)
they are five models whose initial parameters AND batch orders both vary.
Its report (kind 'batch_seeds', `rows`) sets per row and statistic the grid's
interval (shared order), this one (independent orders) and J&W's code's,
with Welch's test of each against J&W's code.

The vectors are the grid's (vectors seed 0) in every arm: only the batch
order is added.
"""

from attn_jax.tables.study_seeds import arm_row  # noqa: F401  (the arms' names, read back)
from attn_jax.studies.arms import Arm

# J&W's code from scratch: nn.Embedding's default N(0, 1) (as the fidelity study's scratch_1 arms).
SCRATCH = {'model.embeddings_file': None, 'model.embed_init_std': 1.0}
BATCH_SEEDS = (1, 2, 3, 4)  # 0 is the J&W grid's seed 0


def grid_row(dataset: str, encoder: str, attention: str, suffix: str = '') -> str:
  """The J&W grid's arm of the same configuration (attn_jax.studies.jain_wallace_grid);
  `suffix` '_scratch' names the grid folder's from-scratch rows."""
  return f'{dataset}_{encoder}_{attention}{suffix}'


# The rows where attn-jax (all three fixes) and J&W's code disagreed on a τ,
# and one that agreed (SST BiLSTM + tanh) as a control; cheapest first:
# (dataset, encoder, attention, row-name suffix, overrides, batch seeds).
# IMDB from scratch has 3 seeds a side (J&W's loops are slow on IMDB), so 2 arms.
ROWS = (('sst', 'average', 'tanh', '', {}, BATCH_SEEDS),
        ('sst', 'average', 'dot', '', {}, BATCH_SEEDS),
        ('sst', 'cnn', 'tanh', '', {}, BATCH_SEEDS),
        ('20news', 'average', 'tanh', '', {}, BATCH_SEEDS),
        ('20news', 'cnn', 'dot', '', {}, BATCH_SEEDS),
        ('sst', 'bilstm', 'tanh', '', {}, BATCH_SEEDS),
        ('imdb', 'bilstm', 'tanh', '_scratch', SCRATCH, (1, 2)))
ANALYSES = 'gradient,loo,kendall'  # the three τ (accuracy comes with every model)

ARMS = tuple(Arm(f'{grid_row(dataset, encoder, attention, suffix)}_batches{k}', dataset, encoder,
                 {**overrides, 'model.attention': attention, 'seed': k, 'train.batch_seed': k})
             for dataset, encoder, attention, suffix, overrides, seeds in ROWS for k in seeds)
