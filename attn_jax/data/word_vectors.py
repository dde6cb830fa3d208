"""Pretrained word vectors from a word2vec / fastText text file."""

import numpy as np

from attn_jax.data.vocabulary import Vocabulary
from attn_jax.core.errors import DataError


def load_word_vectors(path: str, vocab: Vocabulary, dim: int) -> tuple[np.ndarray, int]:
  """Embedding matrix for `vocab` from a `word v_1 ... v_dim` text file.

  An optional `count dim` header line (fastText `.vec`) is skipped. Words
  missing from the file, and PAD, get the zero vector, as J&W's torchtext
  loading did (`Vectorizer.extract_embeddings_from_torchtext`).

  Returns:
    (float32 [len(vocab), dim] matrix, number of vocabulary words found).

  Raises:
    DataError: missing or empty file, a line of the wrong width, a
      non-number, or a dimension other than `dim`.
  """
  ids = {w: i for i, w in enumerate(vocab.tokens)}
  matrix = np.zeros((len(vocab), dim), dtype=np.float32)
  found = 0
  try:
    f = open(path, encoding='utf-8', errors='replace')
  except OSError as e:
    raise DataError(f'word vector file {path!r} cannot be read ({e}); fix '
                    '--config.model.embeddings_file or leave it empty to train '
                    'embeddings from scratch') from e
  vectors = 0
  with f:
    for number, line in enumerate(f, 1):
      parts = line.rstrip().split(' ')
      if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
        continue
      if len(parts) != dim + 1:
        raise DataError(
            f'{path}:{number}: {len(parts) - 1} numbers after the word, expected {dim} '
            f'(--config.model.embed_dim={dim}); set embed_dim to the file\'s dimension '
            'or check the file is in word2vec/fastText text format')
      vectors += 1
      index = ids.get(parts[0])
      if index is None or index == 0:
        continue
      try:
        matrix[index] = np.asarray(parts[1:], dtype=np.float32)
      except ValueError as e:
        raise DataError(f'{path}:{number}: not a number in the vector of {parts[0]!r}') from e
      found += 1
  if not vectors:  # an empty file (a build cut off, a full disk): embeddings would start from zeros unsaid
    raise DataError(f'word vector file {path!r} holds no vectors (empty, or only a header): rebuild it '
                    '(python -m attn_jax.vectors DATASET, or delete it and rerun, which builds it), or leave '
                    '--config.model.embeddings_file empty to train embeddings from scratch')
  if not np.isfinite(matrix).all():
    raise DataError(f'{path}: contains NaN or infinite values')
  return matrix, found
