"""The params a model starts from: fresh, with pretrained word vectors when
the config names some (J&W start from fastText vectors)."""

import os

import jax
import ml_collections
import numpy as np

from attn_jax.core import atomic_io
from attn_jax.data.dataset import Dataset
from attn_jax.data.vocabulary import UNK
from attn_jax.data.word_vectors import load_word_vectors
from attn_jax.models import Model
from attn_jax.training import trainer
from attn_jax.vectors import IN_DOMAIN, describe, ensure_vectors


def embeddings_path(cfg: ml_collections.ConfigDict, dataset: Dataset, log) -> str | None:
  """The word-vector file the config names (`in_domain`: built if missing)."""
  if cfg.model.embeddings_file == IN_DOMAIN:
    return ensure_vectors(cfg, dataset.vocab, log)
  return cfg.model.embeddings_file


_VECTORS: dict = {}


def _word_vectors(path: str, vocab, dim: int):
  """`load_word_vectors`, parsed once per file for the models of a program
  (a copy each time: callers change it)."""
  key = (os.path.abspath(path), os.path.getmtime(path), vocab.tokens, dim)
  if key not in _VECTORS:
    _VECTORS.clear()
    _VECTORS[key] = load_word_vectors(path, vocab, dim)
  matrix, found = _VECTORS[key]
  return matrix.copy(), found


def pretrained_matrix(cfg: ml_collections.ConfigDict, dataset: Dataset, log) -> tuple[np.ndarray, dict] | None:
  """The embedding matrix the config's word vectors give, before training
  (float32 [len(vocab), embed_dim]), and a record of it; None when the config
  trains embeddings from scratch.

  Words the file lacks start at zero (J&W's torchtext loading). With
  `model.shuffle_embeddings` the rows of the words found are permuted among
  those words (same norms and coverage, no word's own vector), and with
  `model.embeddings_norm` they are scaled to that mean L2 norm (same
  directions): controls for what in the vectors matters. With
  `model.embeddings_unit_rows` every row found is scaled to L2 norm 1, as
  S&S's preparation stored them (UNK's too, when the vectors have one).
  """
  path = embeddings_path(cfg, dataset, log)
  if not path:
    return None
  matrix, found = _word_vectors(path, dataset.vocab, cfg.model.embed_dim)
  built = _built_with(cfg, path)
  log(f'pretrained vectors: {found} of {len(dataset.vocab)} vocabulary words found in {path}'
      + ('' if built is None else f' (built with {built["workers"]} thread'
         + ('s: not bit-for-bit reproducible)' if built['workers'] > 1 else ': bit-reproducible)')))
  rows = np.flatnonzero(np.any(matrix != 0, axis=1))
  if cfg.model.shuffle_embeddings:
    matrix[rows] = matrix[np.random.default_rng(cfg.seed).permutation(rows)]
  if cfg.model.embeddings_norm and len(rows):
    matrix[rows] *= cfg.model.embeddings_norm / np.linalg.norm(matrix[rows], axis=1).mean()
  if cfg.model.get('embeddings_unit_rows', False) and len(rows):
    matrix[rows] /= np.linalg.norm(matrix[rows], axis=1, keepdims=True)
  return matrix, {
      'file': os.path.abspath(path), 'vocabulary': len(dataset.vocab), 'found': found,
      'coverage': found / max(len(dataset.vocab) - 4, 1),
      'mean_norm_found': float(np.linalg.norm(matrix[rows], axis=1).mean()) if len(rows) else None,
      'shuffled': bool(cfg.model.shuffle_embeddings), 'rescaled_to': cfg.model.embeddings_norm,
      'unit_rows': bool(cfg.model.get('embeddings_unit_rows', False)),
      'unk_from_vectors': bool(np.any(matrix[UNK] != 0)),
      **({} if built is None else {'in_domain': built})}


def _built_with(cfg: ml_collections.ConfigDict, path: str) -> dict | None:
  """How the in-domain vectors at `path` were built (threads, sha256); None
  for a file the config names itself."""
  if cfg.model.embeddings_file != IN_DOMAIN:
    return None
  info = describe(path) or {}
  threads = info.get('workers', 1)
  return {'workers': threads, 'bit_reproducible': threads == 1, 'sha256': info.get('sha256')}


def initial_params(model: Model, cfg: ml_collections.ConfigDict, dataset: Dataset, log,
                   workdir: str | None = None):
  """Fresh params, with pretrained word vectors when the config names some
  (`pretrained_matrix`); their record goes to `workdir/embeddings.json`."""
  params = model.init(trainer.init_key(cfg.seed))
  pretrained = pretrained_matrix(cfg, dataset, log)
  if pretrained is None:
    return params
  matrix, record = pretrained
  if workdir is not None:
    atomic_io.write_json(os.path.join(workdir, 'embeddings.json'), record)
  return {**params, 'embedding': {'table': jax.numpy.asarray(matrix)}}
