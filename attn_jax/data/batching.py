"""Length-bucketed, padded batches (J&W's `model/modelUtils.py`: `BatchHolder` and noisy sort).

Every batch has exactly `batch_size` rows and a length from a short list of
bucket lengths, so a jitted step compiles once per bucket. Rows that only
fill a short last batch have weight 0 and index -1.

Documents with sentences (S&S's HAN) are batched as documents × sentences ×
words (`hierarchical`): both dimensions are bucketed, and a batch holds at
most `max_tokens` padded word slots, so its rows are a power of two up to
`batch_size` (S&S's AllenNLP iterator also capped tokens per batch).
"""

import math
from typing import Iterator, NamedTuple, Optional, Sequence

import numpy as np

from attn_jax.data.vocabulary import EOS, PAD, SOS, UNK


class Batch(NamedTuple):
  """Flat: tokens [B, L], lengths [B]. Hierarchical: tokens [B, S, W] (the
  words of each sentence, no SOS/EOS), lengths [B, S] (words per sentence,
  0 for padding sentences, which come last)."""
  tokens: np.ndarray   # [B, L] int32, right-padded with PAD (0)
  lengths: np.ndarray  # [B] int32, full lengths including SOS and EOS
  labels: np.ndarray   # [B] float32: 0 or 1; the class index for multi-class data
  weights: np.ndarray  # [B] float32: loss weight; 0 for filler rows
  index: np.ndarray    # [B] int32: position in the split; -1 for filler rows


def pad_texts(texts: Sequence[Sequence[int]], multiple: int = 16) -> tuple[np.ndarray, np.ndarray]:
  """Word ids of each text -> one batch in the layout every analysis expects.

  Row b is `[SOS] w_1 .. w_n [EOS] PAD ..` (SOS = 2, EOS = 3, PAD = 0,
  UNK = 1 for a word the vocabulary lacks), `lengths[b] = n + 2`, and the
  items an analysis scores are the words, positions 1 .. n
  (`attn_jax.models.masks.attention_mask`).

  Args:
    texts: B lists of word ids, without SOS and EOS; each at least one word.
    multiple: the width is the longest row rounded up to this (fewer
      shapes to compile across calls).

  Returns:
    (tokens [B, L] int32, lengths [B] int32), L the longest row (n + 2)
    rounded up to `multiple`.

  Raises:
    ValueError: a text without words, or an id that is one of the specials
      PAD, SOS or EOS (UNK is a word id).

  Example:
    tokens, lengths = pad_texts([[5, 9, 7], [4, 1]])
    # tokens [2, 16]: [2, 5, 9, 7, 3, 0, ..], [2, 4, 1, 3, 0, ..]; lengths [5, 4]
  """
  rows = [np.asarray(t, dtype=np.int32).reshape(-1) for t in texts]
  for i, row in enumerate(rows):
    if not len(row):
      raise ValueError(f'text {i} has no words; every row needs at least one')
    if np.any(np.isin(row, (PAD, SOS, EOS))):
      raise ValueError(f'text {i} holds a PAD, SOS or EOS id ({PAD}, {SOS}, {EOS}): pass the word ids '
                       'alone; pad_texts adds SOS and EOS')
  lengths = np.asarray([len(r) + 2 for r in rows], dtype=np.int32)
  width = -(-int(lengths.max()) // multiple) * multiple
  tokens = np.full((len(rows), width), PAD, dtype=np.int32)
  for b, row in enumerate(rows):
    tokens[b, :len(row) + 2] = np.concatenate([[SOS], row, [EOS]])
  return tokens, lengths


def bucket_lengths(max_length: int, growth: float = 1.25, multiple: int = 8) -> tuple[int, ...]:
  """Padded lengths: multiples of `multiple` growing by about `growth`, the
  last one >= `max_length`."""
  buckets = [multiple]
  while buckets[-1] < max_length:
    buckets.append(max(buckets[-1] + multiple,
                       int(math.ceil(buckets[-1] * growth / multiple)) * multiple))
  return tuple(buckets)


def make_batch(sequences: Sequence[np.ndarray], labels: np.ndarray, index: np.ndarray,
               batch_size: int, buckets: Sequence[int], pos_weight: float = 1.0,
               lengths: Optional[np.ndarray] = None) -> Batch:
  """Pads `sequences[index]` into one batch of `batch_size` rows.

  `lengths`: the rows' item lengths where a row holds more than its
  document (a passage, then its query: `models.qa.query_rows`); None: each
  row's own length.
  """
  n = len(index)
  widths = [len(sequences[i]) for i in index]
  filler = (SOS, UNK, EOS) * (1 if lengths is None else 2)  # one real token (and one of query), weight 0
  batch_lengths = np.full(batch_size, 3, dtype=np.int32)
  batch_lengths[:n] = widths if lengths is None else lengths[index]
  width = next(b for b in buckets if b >= max(widths + [len(filler)]))
  tokens = np.zeros((batch_size, width), dtype=np.int32)
  tokens[n:, :len(filler)] = filler
  for row, i in enumerate(index):
    tokens[row, :widths[row]] = sequences[i]
  batch_labels = np.zeros(batch_size, dtype=np.float32)
  batch_labels[:n] = labels[index]
  weights = np.zeros(batch_size, dtype=np.float32)
  weights[:n] = np.where(batch_labels[:n] == 1, pos_weight, 1.0)
  batch_index = np.full(batch_size, -1, dtype=np.int32)
  batch_index[:n] = index
  return Batch(tokens, batch_lengths, batch_labels, weights, batch_index)


TIES = ('random', 'stable')


def noisy_length_order(lengths: np.ndarray, rng: np.random.Generator, noise: float = 0.1,
                       ties: str = 'stable') -> np.ndarray:
  """Indices sorted by `L + randint(floor(-noise L), ceil(noise L))`.

  ties: 'random' puts documents of equal noisy length in random order, as
  J&W's `np.argsort` (an unstable sort) leaves them in no particular order;
  'stable' keeps the split's own order among them. The split's order can
  group the labels (SST's train file, 20 Newsgroups' by newsgroup): with
  'stable' many batches then hold one class (SST: 8.5 % of the batches, the
  positive fraction's spread over batches 0.38 against 0.10), which slowed
  the first epoch against J&W's code (dev ROC-AUC 0.866 against 0.897 from the
  same initial weights). 'stable' is what attn-jax trained with before
  2026-11-26.
  """
  low = np.floor(-noise * lengths).astype(np.int64)
  high = np.ceil(noise * lengths).astype(np.int64)
  jitter = rng.integers(low, np.maximum(high, low + 1))
  if ties == 'stable':
    return np.argsort(lengths + jitter, kind='stable')
  shuffled = rng.permutation(len(lengths))
  return shuffled[np.argsort((lengths + jitter)[shuffled], kind='stable')]


def train_batches(sequences: Sequence[np.ndarray], labels: np.ndarray, batch_size: int,
                  buckets: Sequence[int], pos_weight: float, seed: int, epoch: int,
                  ties: str = 'random', max_tokens: Optional[int] = None,
                  item_lengths: Optional[np.ndarray] = None) -> list[Batch]:
  """One epoch of J&W training batches: noisy length sort (`ties`:
  `noisy_length_order`), contiguous chunks of `batch_size`, chunks in
  shuffled order, each cut to fit `max_tokens` (`split_to_fit`; rows stay
  `batch_size`, the rest filler). Depends only on (seed, epoch, ties).
  `item_lengths`: as `make_batch`'s `lengths` (sorted by them: J&W sort
  QA batches by the passage's length)."""
  rng = np.random.default_rng([seed, epoch])
  lengths = np.array([len(s) for s in sequences]) if item_lengths is None else np.asarray(item_lengths)
  order = noisy_length_order(lengths, rng, ties=ties)
  chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
  pieces = [piece for c in rng.permutation(len(chunks))
            for piece in split_to_fit(chunks[c], lengths - 2, max_tokens)]
  return [make_batch(sequences, labels, piece, batch_size, buckets, pos_weight, item_lengths)
          for piece in pieces]


def split_to_fit(chunk: np.ndarray, words: np.ndarray, max_tokens: Optional[int]) -> list[np.ndarray]:
  """`chunk` cut, in order, into batches of at most `max_tokens` padded
  words (documents × the longest one's words): AllenNLP's
  `maximum_samples_per_batch`, which S&S's FLAN set to 20,000 — long
  documents train in smaller batches, so an epoch has more steps. None: the
  chunk whole."""
  if not max_tokens:
    return [chunk]
  out, start, longest = [], 0, 0
  for i, doc in enumerate(chunk):
    longest = max(longest, int(words[doc]))
    if longest * (i + 1 - start) > max_tokens and i > start:
      out.append(chunk[start:i])
      start, longest = i, int(words[doc])
  out.append(chunk[start:])
  return out


def eval_batches(sequences: Sequence[np.ndarray], labels: np.ndarray, batch_size: int,
                 buckets: Sequence[int], item_lengths: Optional[np.ndarray] = None) -> Iterator[Batch]:
  """Batches in length order (least padding), every document once
  (`item_lengths`: as `make_batch`'s `lengths`)."""
  order = np.argsort([len(s) for s in sequences], kind='stable')
  for i in range(0, len(order), batch_size):
    yield make_batch(sequences, labels, order[i:i + batch_size], batch_size, buckets,
                     lengths=item_lengths)
