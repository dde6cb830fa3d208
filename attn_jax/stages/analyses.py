"""Running the stages a config asks for, in order, with what they require."""

from typing import Callable

import ml_collections
import numpy as np

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


def sample_indices(num_docs: int, sample_docs: int, sample_seed: int) -> np.ndarray:
  """`analysis.sample_docs`: which of a split's `num_docs` documents are
  analysed, int64 [min(sample_docs, num_docs)] in split order. The draw
  depends only on the split's size and `sample_seed` (not on the model's seed),
  so every model of a study, and J&W's code given the same indices
  (benchmarks/jw_inputs.py), sees the same documents."""
  if sample_docs >= num_docs:
    return np.arange(num_docs, dtype=np.int64)
  rng = np.random.default_rng(sample_seed)
  return np.sort(rng.choice(num_docs, size=sample_docs, replace=False)).astype(np.int64)


def limit_split(split: EncodedSplit, max_docs, sample_docs=None, sample_seed: int = 0) -> EncodedSplit:
  """The documents analysed: the first `max_docs`, or a seeded sample of
  `sample_docs` (`sample_indices`); the whole split when neither is set."""
  if sample_docs is not None:
    return split.take(sample_indices(len(split), sample_docs, sample_seed))
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
  a = cfg.analysis
  ctx = AnalysisContext(model, params, limit_split(splits[split_name], a.max_docs, a.get('sample_docs'),
                                                   a.get('sample_seed', 0)),
                        split_name, cfg, data_fingerprint, out_dir)
  summaries, folders = {}, {}
  for name in names:
    stage = STAGES[name]
    summaries[name] = run_stage(ctx, stage, log, {r: folders[r] for r in stage.requires})
    folders[name] = store.result_dir(out_dir, summaries[name]['key'])
  return summaries
