"""Token <-> id mapping, built as J&W's `Vectorizer` builds it (`preprocess/vectorizer.py`)."""

import collections
import dataclasses
import json
from typing import Iterable, Sequence

import numpy as np

from attn_jax.core import atomic_io
from attn_jax.core.errors import CheckpointError

PAD, UNK, SOS, EOS = 0, 1, 2, 3
SPECIALS = ('<PAD>', '<UNK>', '<SOS>', '<EOS>')


@dataclasses.dataclass(frozen=True)
class Vocabulary:
  """Ids 0-3 are PAD, UNK, SOS, EOS; words follow in sorted order."""
  tokens: tuple[str, ...]

  def __post_init__(self):
    object.__setattr__(self, '_ids', {t: i for i, t in enumerate(self.tokens)})

  @classmethod
  def build(cls, docs: Iterable[Sequence[str]], min_df: int,
            count_tokens: bool = False) -> 'Vocabulary':
    """Words in at least `min_df` documents (document frequency, as sklearn's
    CountVectorizer), sorted, after the four specials. With `count_tokens`,
    words seen at least `min_df` times (gensim's `min_count`, S&S's)."""
    df = collections.Counter()
    for doc in docs:
      df.update(doc if count_tokens else set(doc))
    return cls(SPECIALS + tuple(sorted(w for w, c in df.items() if c >= min_df)))

  def __len__(self) -> int:
    return len(self.tokens)

  def encode(self, doc: Sequence[str]) -> np.ndarray:
    """`[SOS] + ids (UNK for unknown words) + [EOS]` as int32 [len(doc) + 2]."""
    ids = [SOS] + [self._ids.get(w, UNK) for w in doc] + [EOS]
    return np.asarray(ids, dtype=np.int32)

  def decode(self, ids: Iterable[int]) -> list[str]:
    return [self.tokens[int(i)] for i in ids]

  def save(self, path: str) -> None:
    atomic_io.write_json(path, list(self.tokens))

  @classmethod
  def load(cls, path: str) -> 'Vocabulary':
    with open(path) as f:
      return cls.from_tokens(json.load(f), path)

  @classmethod
  def from_tokens(cls, tokens, where: str = 'vocabulary') -> 'Vocabulary':
    if not isinstance(tokens, list) or tuple(tokens[:4]) != SPECIALS:
      raise CheckpointError(f'{where} is not an attn-jax vocabulary (it must start with {SPECIALS})')
    return cls(tuple(tokens))
