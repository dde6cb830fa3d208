"""Documents × sentences × words batches for S&S's HAN (§3).

A document is stored flat (`[SOS] w_1 .. w_n [EOS]`, as every other model
reads it) with its sentence lengths; a batch cuts the words back into
sentences: tokens [B, S, W] (PAD beyond each sentence and after the last
sentence), lengths [B, S] (0 for padding sentences). S and W are bucketed;
B is a power of two up to `batch_size`, the largest that keeps B × S × W
within `max_tokens`, so one long document never makes a batch of 64 of its
size. Documents are ordered by their longest sentence's bucket, then by
their number of sentences (noisy in training, as J&W's sort), so a batch
pads little in both dimensions.
"""

from typing import Iterator, Optional, Sequence

import numpy as np

from attn_jax.data.batching import Batch, noisy_length_order

ROW_SIZES = tuple(2 ** k for k in range(12))


def _bucket(value: int, buckets: Sequence[int]) -> int:
  return next(b for b in buckets if b >= value)


def _rows(count: int, batch_size: int) -> int:
  """The smallest power of two >= count, at most batch_size."""
  return min(next(r for r in ROW_SIZES if r >= count), batch_size)


def make_batch(sequences, sentence_lengths, labels, index: np.ndarray, rows: int,
               sentence_buckets: Sequence[int], word_buckets: Sequence[int]) -> Batch:
  """Pads documents `index` into one [rows, S, W] batch; filler rows have one
  one-word sentence (UNK), weight 0 and index -1."""
  n = len(index)
  sents = [np.asarray(sentence_lengths[i]) for i in index]
  width_s = _bucket(max(len(x) for x in sents), sentence_buckets)
  width_w = _bucket(max(int(x.max()) for x in sents), word_buckets)
  tokens = np.zeros((rows, width_s, width_w), dtype=np.int32)
  lengths = np.zeros((rows, width_s), dtype=np.int32)
  tokens[n:, 0, 0] = 1  # UNK: filler rows read one word
  lengths[n:, 0] = 1
  for row, (i, sl) in enumerate(zip(index, sents)):
    words = np.asarray(sequences[i])[1:-1]
    starts = np.concatenate([[0], np.cumsum(sl)[:-1]])
    for s, (start, count) in enumerate(zip(starts, sl)):
      tokens[row, s, :count] = words[start:start + count]
    lengths[row, :len(sl)] = sl
  batch_labels = np.zeros(rows, dtype=np.float32)
  batch_labels[:n] = labels[index]
  weights = np.zeros(rows, dtype=np.float32)
  weights[:n] = 1.0
  batch_index = np.full(rows, -1, dtype=np.int32)
  batch_index[:n] = index
  return Batch(tokens, lengths, batch_labels, weights, batch_index)


def _shape_keys(sentence_lengths, word_buckets):
  """(longest sentence's bucket, sentence count) of every document."""
  longest = np.array([_bucket(int(np.max(x)), word_buckets) for x in sentence_lengths])
  count = np.array([len(x) for x in sentence_lengths])
  return longest, count


def _groups(order: np.ndarray, sentence_lengths, batch_size: int, max_tokens: int,
            sentence_buckets, word_buckets, max_sentence_words: Optional[int] = None) -> list[np.ndarray]:
  """Consecutive documents of `order`, cut where a batch would exceed
  `batch_size` rows or `max_tokens` padded words (rows rounded up to a power
  of two), or — with `max_sentence_words` — where documents × the batch's
  longest sentence (in words) would pass it (S&S's AllenNLP iterator:
  `maximum_samples_per_batch: ["list_num_tokens", 2000]`). A document bigger
  than the caps alone is a batch of its own."""
  groups, current, max_s, max_w, longest = [], [], 0, 0, 0
  for i in order:
    sl = sentence_lengths[i]
    s = max(max_s, _bucket(len(sl), sentence_buckets))
    w = max(max_w, _bucket(int(np.max(sl)), word_buckets))
    words = max(longest, int(np.max(sl)))
    if current and (len(current) == batch_size or _rows(len(current) + 1, batch_size) * s * w > max_tokens
                    or (max_sentence_words and (len(current) + 1) * words > max_sentence_words)):
      groups.append(np.asarray(current))
      current, s, w = [], _bucket(len(sl), sentence_buckets), _bucket(int(np.max(sl)), word_buckets)
      words = int(np.max(sl))
    current.append(i)
    max_s, max_w, longest = s, w, words
  if current:
    groups.append(np.asarray(current))
  return groups


def train_batches(sequences, sentence_lengths, labels: np.ndarray, batch_size: int, max_tokens: int,
                  sentence_buckets, word_buckets, seed: int, epoch: int,
                  max_sentence_words: Optional[int] = None) -> list[Batch]:
  """One epoch: documents sorted by (longest-sentence bucket, noisy sentence
  count), cut into batches, batches in shuffled order; depends only on (seed, epoch)."""
  rng = np.random.default_rng([seed, epoch])
  longest, count = _shape_keys(sentence_lengths, word_buckets)
  noisy = np.empty(len(count), dtype=np.int64)
  noisy[noisy_length_order(count, rng)] = np.arange(len(count))  # rank by noisy count
  order = np.lexsort((noisy, longest))
  groups = _groups(order, sentence_lengths, batch_size, max_tokens, sentence_buckets, word_buckets,
                   max_sentence_words)
  return [make_batch(sequences, sentence_lengths, labels, groups[g], _rows(len(groups[g]), batch_size),
                     sentence_buckets, word_buckets) for g in rng.permutation(len(groups))]


def eval_batches(sequences, sentence_lengths, labels: np.ndarray, batch_size: int, max_tokens: int,
                 sentence_buckets, word_buckets) -> Iterator[Batch]:
  """Every document once, in (longest-sentence bucket, sentence count) order."""
  longest, count = _shape_keys(sentence_lengths, word_buckets)
  order = np.lexsort((count, longest))
  for group in _groups(order, sentence_lengths, batch_size, max_tokens, sentence_buckets, word_buckets):
    yield make_batch(sequences, sentence_lengths, labels, group, _rows(len(group), batch_size),
                     sentence_buckets, word_buckets)


def count_batches(sentence_lengths, batch_size: int, max_tokens: int, sentence_buckets,
                  word_buckets, max_sentence_words: Optional[int] = None) -> int:
  longest, count = _shape_keys(sentence_lengths, word_buckets)
  return len(_groups(np.lexsort((count, longest)), sentence_lengths, batch_size, max_tokens,
                     sentence_buckets, word_buckets, max_sentence_words))
