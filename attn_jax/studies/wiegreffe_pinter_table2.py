"""W&P's Table 2 on SST with seeds, beside W&P's own code on the same inputs:
BiLSTM + tanh with learned attention against the same model with uniform
attention (α = 1/n over the words; W&P §3.2, ALGORITHMS.md §C.1), 5 seeds
each, test F1 (positive class) as mean ± 95 % CI.

    python -m attn_jax.studies run wp_table2 --reuse=workdirs/jw_grid_fixed
    python -m attn_jax.studies report wp_table2 --root=workdirs/wp_table2 --save=results/wp_table2

The learned arm is the J&W grid's `sst_bilstm_tanh` (same config: `--reuse`
of a grid root lends its trained models). `benchmarks/original_code/wiegreffe_pinter_reference.py` runs
W&P's code on this arm's inputs and writes `<reference>/sst_{learned,
uniform}_{test,dev}sel/seed<k>/summary.json`: `testsel` is W&P's script (its
snapshot keeps the epoch with the best *test* ROC-AUC), `devsel` their trainer
given attn-jax's dev split to select on, as attn-jax does. The report tests
attn-jax against `devsel` (the same protocol) with the equivalence test
(TOST) and shows `testsel` beside, and per implementation the gap learned −
uniform with the same test.
"""

from attn_jax.studies.arms import Arm

ANALYSES = ''  # test F1 only (eval.json)
ARMS = (
    Arm('sst_learned', 'sst', 'bilstm', {'model.attention': 'tanh'}),
    Arm('sst_uniform', 'sst', 'bilstm', {'model.attention': 'tanh', 'model.projection': 'uniform'}),
)
