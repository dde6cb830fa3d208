"""What every analysis stage works on: one trained model and one split."""

import dataclasses
import functools
import hashlib
from typing import Any, Callable, Iterator

import jax
import ml_collections
import numpy as np

from attn_jax.data.batching import Batch, bucket_lengths, eval_batches
from attn_jax.data.dataset import EncodedSplit
from attn_jax.models import Model


def params_digest(params) -> str:
  """A short hash of every parameter value: results are keyed by it."""
  digest = hashlib.sha256()
  for path, leaf in jax.tree_util.tree_leaves_with_path(params):
    digest.update(jax.tree_util.keystr(path).encode())
    digest.update(np.ascontiguousarray(np.asarray(leaf)).tobytes())
  return digest.hexdigest()[:16]


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
  workdir: str
  _jitted: dict = dataclasses.field(default_factory=dict)

  @functools.cached_property
  def digest(self) -> str:
    return params_digest(self.params)

  @property
  def settings(self) -> ml_collections.ConfigDict:
    return self.cfg.analysis

  @functools.cached_property
  def max_length(self) -> int:
    return int(self.split.lengths.max())

  def batches(self) -> Iterator[Batch]:
    buckets = bucket_lengths(self.max_length, self.settings.bucket_growth)
    return eval_batches(self.split.sequences, self.split.labels, self.settings.batch_size, buckets)

  def num_batches(self) -> int:
    return -(-len(self.split) // self.settings.batch_size)

  def jit(self, name: str, make: Callable[[], Callable]) -> Callable:
    """`jax.jit(make())`, built once per context."""
    if name not in self._jitted:
      self._jitted[name] = jax.jit(make())
    return self._jitted[name]

  def keys(self, stream: int, index: np.ndarray) -> jax.Array:
    """[B] PRNG keys, one per document index (filler rows get document 0's):
    a document's randomness does not depend on its batch."""
    base = jax.random.fold_in(jax.random.PRNGKey(self.settings.seed), stream)
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(np.maximum(index, 0).astype(np.uint32))
