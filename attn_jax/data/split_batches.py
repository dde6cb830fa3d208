"""The batches of a split, flat or hierarchical as its documents are.

`bucketing(split, growth, max_tokens, hierarchical)` says how a split is
padded: flat bucket lengths (J&W's layout), or `SentenceBuckets` for a
model that reads sentences (S&S's HAN). `train_batches` and `eval_batches`
take it and pick the layout, so the trainer, the evaluation and the stages
need not know which model they batch for.
"""

from typing import Iterator, NamedTuple, Optional, Sequence, Union

import numpy as np

from attn_jax.data import batching, hierarchical
from attn_jax.data.batching import Batch
from attn_jax.data.dataset import EncodedSplit


class CappedLengths(tuple):
  """Flat bucket lengths (a tuple, as everywhere) that also carry the most
  padded words a training batch may hold (`batching.split_to_fit`)."""
  max_tokens: Optional[int] = None

  @classmethod
  def make(cls, lengths, max_tokens: Optional[int]) -> 'CappedLengths':
    out = cls(lengths)
    out.max_tokens = max_tokens
    return out


class SentenceBuckets(NamedTuple):
  sentences: tuple[int, ...]  # padded sentence counts S
  words: tuple[int, ...]      # padded sentence lengths W
  max_tokens: int             # most B × S × W slots in a batch
  max_sentence_words: Optional[int] = None  # training: most B × longest sentence (S&S's HAN cap)


Buckets = Union[tuple, SentenceBuckets]


def bucketing(splits: Sequence[EncodedSplit], growth: float, max_tokens: Optional[int],
              sentences: bool, max_sentence_words: Optional[int] = None) -> Buckets:
  """Bucket lengths covering every document of `splits`; `max_tokens` caps
  a training batch's padded slots (None: flat batches uncapped, 20,000 for
  sentences), `max_sentence_words` a hierarchical training batch's
  documents × longest sentence."""
  if not sentences:
    lengths = batching.bucket_lengths(max(max(len(r) for r in s.rows) for s in splits), growth)
    return CappedLengths.make(lengths, max_tokens) if max_tokens else lengths
  max_tokens = max_tokens or 20_000
  for s in splits:
    if s.sentence_lengths is None:
      raise ValueError('a hierarchical model needs documents with sentences: this dataset has none '
                       '(S&S datasets: imdb_ratings, 20news_topics)')
  most_sentences = max(max(len(x) for x in s.sentence_lengths) for s in splits)
  longest = max(max(int(np.max(x)) for x in s.sentence_lengths) for s in splits)
  return SentenceBuckets(batching.bucket_lengths(most_sentences, growth, multiple=4),
                         batching.bucket_lengths(longest, growth), max_tokens, max_sentence_words)


def train_batches(split: EncodedSplit, batch_size: int, buckets: Buckets, pos_weight: float,
                  seed: int, epoch: int, ties: str = 'random') -> list[Batch]:
  """One epoch's batches; `ties` orders the flat batches' equal noisy lengths
  (batching.noisy_length_order); S&S's hierarchical batches keep theirs."""
  if isinstance(buckets, SentenceBuckets):
    return hierarchical.train_batches(split.sequences, split.sentence_lengths, split.labels,
                                      batch_size, buckets.max_tokens, buckets.sentences,
                                      buckets.words, seed, epoch, buckets.max_sentence_words)
  return batching.train_batches(split.rows, split.labels, batch_size, buckets, pos_weight,
                                seed, epoch, ties=ties, max_tokens=getattr(buckets, 'max_tokens', None),
                                item_lengths=_item_lengths(split))


def eval_batches(split: EncodedSplit, batch_size: int, buckets: Buckets) -> Iterator[Batch]:
  if isinstance(buckets, SentenceBuckets):
    return hierarchical.eval_batches(split.sequences, split.sentence_lengths, split.labels,
                                     batch_size, buckets.max_tokens, buckets.sentences, buckets.words)
  return batching.eval_batches(split.rows, split.labels, batch_size, buckets, _item_lengths(split))


def _item_lengths(split: EncodedSplit) -> Optional[np.ndarray]:
  """A paired split's passage lengths (its rows hold the query too); None: the rows'."""
  return None if split.queries is None else split.lengths


def count_train_batches(split: EncodedSplit, batch_size: int, buckets: Buckets) -> int:
  """Batches per epoch (hierarchical: those of the unshuffled order, near each epoch's)."""
  if isinstance(buckets, SentenceBuckets):
    return hierarchical.count_batches(split.sentence_lengths, batch_size, buckets.max_tokens,
                                      buckets.sentences, buckets.words, buckets.max_sentence_words)
  cap = getattr(buckets, 'max_tokens', None)
  if cap:
    order = np.argsort(split.lengths, kind='stable')
    return sum(len(batching.split_to_fit(order[i:i + batch_size], split.lengths - 2, cap))
               for i in range(0, len(order), batch_size))
  return -(-len(split) // batch_size)
