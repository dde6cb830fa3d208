"""Experiments that train more models on top of a trained one.

Declared by name in `config.experiments` (comma-separated) and run by
`run.py` after the analysis stages, on each trained model of the run:

    python run.py --config=configs/sst_bilstm.py \
        --config.experiments=uniform,seeds,consistent_adversary,guides

Each lives in its own module and owns its section `config.experiment.<name>`
(its defaults, checks and results); this registry is the only list of them.
Results go to `<out>/experiments/<name>/<key>/` (`attn_jax.experiments.store`).
The W&P experiments (Wiegreffe & Pinter 2019, ALGORITHMS.md §C): `uniform`
(§C.1), `seeds` (§C.2), `consistent_adversary` (§C.4) and `guides` (§C.3).
Meister et al.'s (2021, ALGORITHMS.md §E): `sparsegen_sweep` (Table 2,
Figure 3) and `adversary_regimes` (Table 5).
"""

import difflib
from typing import Callable

import ml_collections
import tqdm

from attn_jax.errors import ConfigError
from attn_jax.experiments.adversary_regimes import ADVERSARY_REGIMES
from attn_jax.experiments.base import Experiment
from attn_jax.experiments.consistent_adversary import CONSISTENT_ADVERSARY
from attn_jax.experiments.guides import GUIDES
from attn_jax.experiments.runner import run_experiment
from attn_jax.experiments.seeds import SEEDS
from attn_jax.experiments.sparsegen_sweep import SPARSEGEN_SWEEP
from attn_jax.experiments.store import load_summaries
from attn_jax.experiments.uniform import UNIFORM

# In running order: an experiment comes after those it reads.
EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (UNIFORM, SEEDS, CONSISTENT_ADVERSARY, GUIDES,
                                                           SPARSEGEN_SWEEP, ADVERSARY_REGIMES)}


def default_sections(dataset: str, encoder: str, variant: str) -> ml_collections.ConfigDict:
  """`config.experiment`: every experiment's own section of defaults."""
  return ml_collections.ConfigDict({name: e.defaults(dataset, encoder, variant)
                                    for name, e in EXPERIMENTS.items()})


def names(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The experiments `cfg.experiments` asks for, with those they read, in running order.

  Raises:
    ConfigError: an unknown name.
  """
  asked = [n.strip() for n in cfg.experiments.split(',') if n.strip()]
  for name in asked:
    if name not in EXPERIMENTS:
      close = difflib.get_close_matches(name, EXPERIMENTS, n=1)
      hint = f' (did you mean {close[0]!r}?)' if close else ''
      raise ConfigError(f'unknown experiment {name!r}{hint} in --config.experiments; choose from '
                        f'{", ".join(EXPERIMENTS)} (comma-separated, or empty for none)')
  wanted = set(asked)
  for name in reversed(list(EXPERIMENTS)):
    if name in wanted:
      wanted.update(EXPERIMENTS[name].requires)
  return tuple(n for n in EXPERIMENTS if n in wanted)


def check(cfg: ml_collections.ConfigDict) -> None:
  """Raises ConfigError for an unknown experiment or an invalid section value."""
  for name in names(cfg):
    problem = EXPERIMENTS[name].check(cfg.experiment[name], cfg)
    if problem:
      raise ConfigError(f'experiment.{name}: {problem}')


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


__all__ = ['EXPERIMENTS', 'Experiment', 'check', 'default_sections', 'load_summaries', 'names',
           'run_experiments', 'stage_requirements']
