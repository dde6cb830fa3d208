"""What an analysis stage is (`Stage`, the record it registers) and what it
works on (`AnalysisContext`: one trained model and one split)."""

import collections
import dataclasses
import functools
import hashlib
import json
from typing import Any, Callable, Iterator, Optional

import jax
import ml_collections
import numpy as np

from attn_jax.analysis import measure
from attn_jax.core import sharding
from attn_jax.core.registry import Section
from attn_jax.data import split_batches
from attn_jax.data.batching import Batch
from attn_jax.data.dataset import EncodedSplit
from attn_jax.models import Model


def params_digest(params) -> str:
  """A short hash of every parameter value: results are keyed by it."""
  digest = hashlib.sha256()
  for path, leaf in jax.tree_util.tree_leaves_with_path(params):
    digest.update(jax.tree_util.keystr(path).encode())
    digest.update(np.ascontiguousarray(np.asarray(leaf)).tobytes())
  return digest.hexdigest()[:16]


# Jitted analysis functions by (name, model config, analysis settings): the
# models of a sweep or grid share an architecture, so their analyses reuse one
# compilation instead of compiling again per model.
_JITTED: collections.OrderedDict = collections.OrderedDict()
_JITTED_MAX = 64
# XLA's temporary bytes of a jitted function at given argument shapes
# (`AnalysisContext.temp_bytes`), by the function's key and the shapes.
_TEMP_BYTES: dict = {}


@dataclasses.dataclass
class AnalysisContext:
  """A restored model, the split under analysis and the analysis config.

  `split` is already cut to `analysis.max_docs`; row i of every result
  array is document i of it.
  """
  model: Model
  params: Any
  split: EncodedSplit
  split_name: str
  cfg: ml_collections.ConfigDict  # the whole run config
  data_fingerprint: str
  out_dir: str  # results go to <out_dir>/analyses/ (the workdir unless --output_dir)

  @functools.cached_property
  def digest(self) -> str:
    return params_digest(self.params)

  @property
  def settings(self) -> ml_collections.ConfigDict:
    return self.cfg.analysis

  @functools.cached_property
  def max_length(self) -> int:
    """The longest document's positions: tokens, or sentences for a HAN (its items)."""
    if self.model.hierarchical:
      return max(len(x) for x in self.split.sentence_lengths)
    return int(self.split.lengths.max())

  @property
  def buckets(self) -> split_batches.Buckets:
    return split_batches.bucketing([self.split], self.settings.bucket_growth,
                                   self.cfg.data.get('max_batch_tokens'), self.model.hierarchical)

  def batches(self, batch_size: Optional[int] = None) -> Iterator[Batch]:
    """Length-sorted batches of `batch_size` documents (`analysis.batch_size`;
    fewer for a HAN's batches of many sentences, see `attn_jax.data.hierarchical`)."""
    return split_batches.eval_batches(self.split, batch_size or self.settings.batch_size,
                                      self.buckets)

  def num_batches(self, batch_size: Optional[int] = None) -> int:
    if self.model.hierarchical:
      return sum(1 for _ in self.batches(batch_size))
    return -(-len(self.split) // (batch_size or self.settings.batch_size))

  def jit(self, name: str, make: Callable[[], Callable]) -> Callable:
    """`jax.jit(make())`, built once per model architecture and settings, its
    batch rows split over `mesh` when there is more than one device.

    `make` may read only `self.model` and `self.settings`: the key is their
    configs and the params' shapes, not this context.
    """
    key, mesh = self._jit_key(name), self.mesh
    if key not in _JITTED:
      _JITTED[key] = jax.jit(make()) if mesh is None else sharding.RowParallel(make(), mesh)
      while len(_JITTED) > _JITTED_MAX:
        _JITTED.popitem(last=False)
    _JITTED.move_to_end(key)
    return _JITTED[key]

  def _jit_key(self, name: str) -> tuple:
    shapes = jax.tree.map(lambda x: tuple(np.shape(x)), self.params)
    return (name, json.dumps(self.cfg.model.to_dict(), sort_keys=True, default=str), str(shapes),
            json.dumps(self.settings.to_dict(), sort_keys=True, default=str), self.mesh)

  def temp_bytes(self, name: str, make: Callable[[], Callable], *args) -> Optional[int]:
    """XLA's temporary bytes (its memory analysis of the compiled program:
    everything it allocates beside arguments and outputs) of
    `self.jit(name, make)` at these arguments' shapes; None where the
    function is split over devices or the backend does not say.

    The compilation is the one a call with these shapes then uses (JAX
    caches it), so measuring before running costs no second compile.
    """
    fn = self.jit(name, make)
    if not hasattr(fn, 'lower'):
      return None
    key = (self._jit_key(name), str(jax.tree.map(lambda x: (tuple(np.shape(x)), str(np.asarray(x).dtype)), args)))
    if key not in _TEMP_BYTES:
      analysis = fn.lower(self.params, *args).compile().memory_analysis()
      _TEMP_BYTES[key] = None if analysis is None else int(analysis.temp_size_in_bytes)
    return _TEMP_BYTES[key]

  @property
  def mesh(self):
    """The devices a batch's documents are split over (None: one device)."""
    return sharding.mesh(sharding.device_count(self.cfg.get('devices')), 'docs')

  def keys(self, stream: int, index: np.ndarray) -> jax.Array:
    """[B] PRNG keys, one per document index (filler rows get document 0's):
    a document's randomness does not depend on its batch."""
    base = jax.random.fold_in(jax.random.PRNGKey(self.settings.seed), stream)
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(np.maximum(index, 0).astype(np.uint32))


Arrays = dict[str, np.ndarray]


@dataclasses.dataclass(frozen=True)
class Stage:
  """An analysis declared by name in `config.analyses`.

  compute: (ctx, batch) -> {name: [B, ...]} rows for the batch's documents
    (filler rows included; the runner drops them). None for stages that only
    combine the results of `requires`.
  positional: names of computed arrays whose last axis is the position; the
    runner pads it to the split's longest document (a set, or a
    `measure.Names` that follows the measures registered for the stage).
  finalize: (ctx, arrays, inputs) -> (arrays, summary); `inputs` maps each
    required stage to its arrays.
  figures: (arrays, inputs, summary, directory) -> written paths.
  cost: batch -> relative work, for the progress bar's time estimate.
  batch_size: analysis config -> documents per batch, where the stage's
    best differs from `analysis.batch_size` (results do not depend on it).
  version: bumped whenever the stage's computation changes, so results of
    an older attn-jax are recomputed, not reused.
  paper: whose analysis it is (a key of `attn_jax.papers.PAPERS`).
  order: where it runs among the stages (after those it requires).
  section: its `config.analysis.<name>` section (defaults, choices, checks):
    its signature. Every key of it keys the results but its `runtime` keys,
    and its `added` keys at their old value (`key_settings`).
  any_model: it runs on every model — multi-class, and S&S's HAN, whose
    items are sentences; False: models over words only.
  multi_class: it runs on flat models of more than two classes too (J&W's
    measures as their QA and NLI code takes them); False: binary only.
  needs_evidence: it reads each document's known evidence (a dataset that
    declares `evidence`: bAbI's supporting facts).
  check: (ctx, batch) -> None, run on the first batch a run computes: where
    the stage takes a fast path the model's capabilities allow, it compares
    it with the exact path and raises (one line) if they differ.
  kept: (arrays, summary) -> {name: array}: small per-document arrays the
    runner writes to `stage_store.KEPT` beside results.npz (hashed with it)
    and `report --save` copies with the summary, so results/ keeps them
    (e.g. the evidence stage's per-question AP, float16); None: nothing.
  keyed_measures: the array names of the registered measures it stored
    (`Measure.stored_as`) when its results were first keyed; None: it
    stores none. Its key names the measures only once they differ
    (`measure.key_items`), so a measure registered for it later gives new
    results a new key and leaves the saved ones where they are.
  measures: () -> the names of the measures it stores now, where they are
    not those naming it in `Measure.stored_as` (the `eraser` stage scores
    every registered measure); None: those. Read when its key is made.
  """
  name: str
  paper: str
  order: int
  finalize: Callable
  figures: Callable
  compute: Optional[Callable[[AnalysisContext, Batch], Arrays]] = None
  positional: frozenset = frozenset()
  requires: tuple = ()
  cost: Callable[[Batch], float] = lambda batch: float(np.sum(batch.index >= 0))
  version: int = 1
  batch_size: Callable[[ml_collections.ConfigDict], Optional[int]] = lambda settings: None
  section: Section = Section()
  any_model: bool = False
  multi_class: bool = False
  needs_evidence: bool = False
  check: Optional[Callable[[AnalysisContext, Batch], None]] = None
  kept: Optional[Callable[[Arrays, dict], Arrays]] = None
  keyed_measures: Optional[tuple] = None
  measures: Optional[Callable[[], tuple]] = None

  def key_settings(self, analysis: ml_collections.ConfigDict) -> dict:
    """The values of its section that change its results: its key's `settings`.

    Args:
      analysis: the run's `config.analysis`.

    Returns:
      `section.key_items` of `analysis.<name>` ({} for a stage without a
      section), and `measures` where the registered measures it stores are
      no longer `keyed_measures`.
    """
    values = analysis.get(self.name)
    items = self.section.key_items(values.to_dict()) if isinstance(values, ml_collections.ConfigDict) else {}
    if self.keyed_measures is not None:
      items.update(measure.key_items(self.name, self.keyed_measures,
                                     None if self.measures is None else self.measures()))
    return items


def predicted_classes(probs: np.ndarray) -> np.ndarray:
  """[N] ŷ of binary models -> 1 where ŷ > 0.5; [N, C] distributions -> argmax."""
  probs = np.asarray(probs)
  return (probs.argmax(axis=-1) if probs.ndim == 2 else probs > 0.5).astype(np.int32)


def class_groups(predicted: np.ndarray, probs: np.ndarray) -> dict[str, np.ndarray]:
  """The rows J&W summarise a statistic over: all, and by predicted class —
  'neg' and 'pos' for binary models; 'class c' for fewer than four classes
  (their QA plots split by class only then); none beyond 'overall' for more."""
  groups = {'overall': np.ones(len(predicted), bool)}
  if np.ndim(probs) == 1:
    groups.update(neg=predicted == 0, pos=predicted == 1)
  elif np.shape(probs)[-1] < 4:
    groups.update({f'class {c}': predicted == c for c in range(np.shape(probs)[-1])})
  return groups
