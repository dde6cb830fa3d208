"""Analysis stages, declared by name in `config.analyses` and run by `run.py`.

Like big_vision's evaluators: each stage is registered here under its name,
reads its settings from `config.analysis`, and writes
`<out>/analyses/<name>/<split>-<N>docs-<key>/{results.npz, summary.json,
*.png, *.svg}` (`attn_jax.stages.store`). J&W's stages (gradient, loo,
kendall, attention, permutation, adversarial), S&S's (erasure) and Meister et
al.'s (importance, state_importance).
"""

from typing import Callable

import ml_collections

from attn_jax import config as config_lib
from attn_jax.data.dataset import EncodedSplit
from attn_jax.models import Model
from attn_jax.stages.adversarial import ADVERSARIAL
from attn_jax.stages.attention import ATTENTION
from attn_jax.stages.context import AnalysisContext
from attn_jax.stages.erasure import ERASURE
from attn_jax.stages.feature_importance import GRADIENT, KENDALL, LOO
from attn_jax.stages.importance import IMPORTANCE
from attn_jax.stages.permutation import PERMUTATION
from attn_jax.stages import store
from attn_jax.stages.runner import Stage, run_stage
from attn_jax.stages.state_importance import STATE_IMPORTANCE

STAGES: dict[str, Stage] = {s.name: s for s in (GRADIENT, LOO, KENDALL, ATTENTION, PERMUTATION,
                                                ADVERSARIAL, ERASURE, IMPORTANCE, STATE_IMPORTANCE)}
assert tuple(STAGES) == config_lib.ANALYSES


def with_requirements(names) -> tuple[str, ...]:
  """`names` plus the stages they need, in running order."""
  wanted = set(names)
  for name in names:
    wanted.update(STAGES[name].requires)
  return tuple(n for n in STAGES if n in wanted)


def limit_split(split: EncodedSplit, max_docs) -> EncodedSplit:
  if max_docs is None or max_docs >= len(split):
    return split
  return EncodedSplit(split.sequences[:max_docs], split.labels[:max_docs], split.ids[:max_docs])


def run_analyses(model: Model, params, splits: dict[str, EncodedSplit], cfg: ml_collections.ConfigDict,
                 out_dir: str, data_fingerprint: str, log: Callable[[str], None] = print,
                 also: tuple = ()) -> dict:
  """Runs the stages `cfg.analyses` names, the stages of `also` (which the
  run's experiments read) and what they need, with results under `out_dir`;
  returns {stage: summary}."""
  names = with_requirements(config_lib.analyses(cfg) + tuple(also))
  if not names:
    return {}
  split_name = cfg.analysis.split
  ctx = AnalysisContext(model, params, limit_split(splits[split_name], cfg.analysis.max_docs),
                        split_name, cfg, data_fingerprint, out_dir)
  summaries, folders = {}, {}
  for name in names:
    stage = STAGES[name]
    summaries[name] = run_stage(ctx, stage, log, {r: folders[r] for r in stage.requires})
    folders[name] = store.result_dir(out_dir, summaries[name]['key'])
  return summaries


__all__ = ['STAGES', 'AnalysisContext', 'Stage', 'run_analyses', 'run_stage', 'store',
           'with_requirements']
