"""Experiments that train more models on top of a trained one.

Declared by name in `config.experiments` (comma-separated) and run by
`run.py` after the analysis stages, on each trained model of the run:

    python run.py --config=configs/sst_bilstm.py \
        --config.experiments=uniform,seeds,consistent_adversary,guides

Each lives in its own module, registers itself in
`attn_jax.core.registry.EXPERIMENTS` with its paper and owns its section
`config.experiment.<name>` (its defaults, checks and results); nothing here
lists them. Results go to `<out>/experiments/<name>/<key>/`
(`attn_jax.experiments.store`). The W&P experiments (Wiegreffe & Pinter 2019,
ALGORITHMS.md §C): `uniform` (§C.1), `seeds` (§C.2), `consistent_adversary`
(§C.4) and `guides` (§C.3). Meister et al.'s (2021, ALGORITHMS.md §E):
`sparsegen_sweep` (Table 2, Figure 3) and `adversary_regimes` (Table 5).
"""

from typing import Callable

import ml_collections
import tqdm

from attn_jax import config as config_lib
from attn_jax.core.registry import EXPERIMENTS
from attn_jax.experiments.base import Experiment
from attn_jax.experiments.runner import run_experiment
from attn_jax.experiments.store import load_summaries


def names(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The experiments `cfg.experiments` asks for, with those they read, in running order."""
  return config_lib.experiments(cfg)


def stage_requirements(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The analysis stages the experiments of `cfg` read from the base model."""
  return tuple(sorted({s for n in names(cfg) for s in EXPERIMENTS[n].stages}))


def run_experiments(model, params, cfg, dataset, out_dir: str, stage_folders: dict,
                    log: Callable[[str], None] = print) -> dict:
  """Runs the experiments `cfg.experiments` names on one trained model;
  returns {name: summary}. `stage_folders` maps analysis stages to the result
  folders this run made or verified."""
  done, summaries = {}, {}
  # Each experiment's training shows its own bar with time left; this one
  # counts the experiments, the one running named in its description.
  bar = tqdm.tqdm(total=len(names(cfg)), unit='experiment', dynamic_ncols=True,
                  disable=not cfg.train.progress)
  with bar:
    for name in names(cfg):
      bar.set_description(f'experiment {name}')
      exp = EXPERIMENTS[name]
      done[name] = run_experiment(exp, model, params, cfg, dataset, out_dir,
                                  {s: stage_folders[s] for s in exp.stages},
                                  {r: done[r] for r in exp.requires}, log)
      summaries[name] = done[name][1]
      bar.update()
  return summaries


__all__ = ['EXPERIMENTS', 'Experiment', 'load_summaries', 'names', 'run_experiments', 'stage_requirements']
