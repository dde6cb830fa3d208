"""Experiments that train more models on top of a trained one.

Declared by name in `config.experiments` (comma-separated) and run by
`run.py` after the analysis stages, on each trained model of the run:

    python run.py --config=configs/sst_bilstm.py \
        --config.experiments=uniform,seeds,consistent_adversary,guides

Each lives in its own module, registers itself in
`attn_jax.core.registry.EXPERIMENTS` with its paper and owns its section
`config.experiment.<name>` (its defaults, checks and results); nothing here
lists them. Results go to `<out>/experiments/<name>/<key>/`
(`attn_jax.experiments.experiment_store`). The W&P experiments (Wiegreffe & Pinter 2019):
`uniform` (§3.2), `seeds` (§3.3), `consistent_adversary` (§4) and `guides`
(§3.4). Meister et al.'s (2021):
`sparsegen_sweep` (Table 2, Figure 3) and `adversary_regimes` (Table 5).
"""

from attn_jax.core.registry import EXPERIMENTS
from attn_jax.experiments.experiment import Experiment
from attn_jax.experiments.experiment_runner import names, run_experiments, stage_requirements
from attn_jax.experiments.experiment_store import load_summaries

__all__ = ['EXPERIMENTS', 'Experiment', 'load_summaries', 'names', 'run_experiments', 'stage_requirements']
