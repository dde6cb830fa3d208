"""Running the stages a config asks for, in order, with what they require."""

from typing import Callable

import ml_collections

from attn_jax import config as config_lib
from attn_jax.core.registry import STAGES, with_requirements
from attn_jax.data.dataset import EncodedSplit
from attn_jax.models import Model
from attn_jax.stages import store
from attn_jax.stages.context import AnalysisContext
from attn_jax.stages.runner import run_stage


def with_requirements_of(names) -> tuple[str, ...]:
  """`names` plus the stages they need, in running order."""
  return with_requirements(STAGES, names)


def limit_split(split: EncodedSplit, max_docs) -> EncodedSplit:
  if max_docs is None or max_docs >= len(split):
    return split
  return split.head(max_docs)


def run_analyses(model: Model, params, splits: dict[str, EncodedSplit], cfg: ml_collections.ConfigDict,
                 out_dir: str, data_fingerprint: str, log: Callable[[str], None] = print,
                 also: tuple = ()) -> dict:
  """Runs the stages `cfg.analyses` names, the stages of `also` (which the
  run's experiments read) and what they need, with results under `out_dir`;
  returns {stage: summary}."""
  names = with_requirements_of(config_lib.analyses(cfg) + tuple(also))
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
