"""Vocabulary and batches."""

import numpy as np
import pytest

from attn_jax.data import batching
from attn_jax.data.vocabulary import EOS, PAD, SOS, UNK, Vocabulary
from attn_jax.core.errors import CheckpointError


def test_vocabulary_uses_document_frequency_and_sorted_words(tmp_path):
  vocab = Vocabulary.build([['b', 'a', 'a'], ['b', 'c'], ['c', 'd']], min_df=2)
  assert vocab.tokens == ('<PAD>', '<UNK>', '<SOS>', '<EOS>', 'b', 'c')
  np.testing.assert_array_equal(vocab.encode(['c', 'a', 'b']), [SOS, 5, UNK, 4, EOS])
  vocab.save(str(tmp_path / 'v.json'))
  assert Vocabulary.load(str(tmp_path / 'v.json')) == vocab
  (tmp_path / 'bad.json').write_text('["a", "b"]')
  with pytest.raises(CheckpointError):
    Vocabulary.load(str(tmp_path / 'bad.json'))


def test_bucket_lengths_cover_the_longest_document():
  buckets = batching.bucket_lengths(402)
  assert buckets[0] == 8 and buckets[-1] >= 402 and all(b % 8 == 0 for b in buckets)
  assert all(b2 > b1 for b1, b2 in zip(buckets, buckets[1:])) and len(buckets) < 20


def test_make_batch_pads_and_fills_with_weightless_rows():
  seqs = [np.array([SOS, 5, 6, EOS]), np.array([SOS, 7, EOS])]
  batch = batching.make_batch(seqs, np.array([1, 0]), np.array([0, 1]), 4, (8, 16), pos_weight=3.0)
  assert batch.tokens.shape == (4, 8) and batch.tokens[0, 4:].tolist() == [PAD] * 4
  assert batch.lengths.tolist() == [4, 3, 3, 3]
  assert batch.weights.tolist() == [3.0, 1.0, 0.0, 0.0] and batch.index.tolist() == [0, 1, -1, -1]


def test_train_batches_are_a_deterministic_noisy_length_sort():
  rng = np.random.default_rng(0)
  seqs = [np.array([SOS] + [9] * int(n) + [EOS]) for n in rng.integers(1, 100, size=203)]
  labels = rng.integers(0, 2, size=203)
  buckets = batching.bucket_lengths(102)
  epoch0 = batching.train_batches(seqs, labels, 32, buckets, 1.0, seed=0, epoch=0)
  again = batching.train_batches(seqs, labels, 32, buckets, 1.0, seed=0, epoch=0)
  epoch1 = batching.train_batches(seqs, labels, 32, buckets, 1.0, seed=0, epoch=1)
  assert len(epoch0) == 7
  seen = np.concatenate([b.index[b.index >= 0] for b in epoch0])
  assert sorted(seen.tolist()) == list(range(203))
  assert all((a.tokens == b.tokens).all() for a, b in zip(epoch0, again))
  assert any(a.tokens.shape != b.tokens.shape or (a.tokens != b.tokens).any() for a, b in zip(epoch0, epoch1))
  within = np.mean([b.lengths[b.index >= 0].std() for b in epoch0])
  overall = np.array([len(s) for s in seqs]).std()
  assert within < 0.3 * overall  # random batches would have within ≈ overall


def test_eval_batches_visit_every_document_once():
  seqs = [np.array([SOS] + [9] * n + [EOS]) for n in (5, 1, 9, 3, 7)]
  batches = list(batching.eval_batches(seqs, np.zeros(5), 2, (8, 16)))
  assert sorted(np.concatenate([b.index[b.index >= 0] for b in batches]).tolist()) == [0, 1, 2, 3, 4]


def test_equal_lengths_are_batched_in_random_order_not_the_splits():
  # A split whose file groups the labels (SST's train file, 20 Newsgroups by
  # newsgroup) and whose documents are of few lengths: J&W's unstable sort
  # mixes the labels within a batch; a stable sort keeps the groups.
  rng = np.random.default_rng(1)
  n = 640
  seqs = [np.array([SOS] + [9] * int(k) + [EOS]) for k in rng.integers(18, 22, size=n)]
  labels = np.repeat([1, 0], n // 2)
  buckets = batching.bucket_lengths(30)

  def spread(ties):
    batches = batching.train_batches(seqs, labels, 32, buckets, 1.0, seed=0, epoch=0, ties=ties)
    return np.std([b.labels[b.index >= 0].mean() for b in batches])

  assert spread('stable') > 0.3  # most batches hold one class
  assert spread('random') < 0.15  # about binomial(32, 1/2) / 32 = 0.09
  again = batching.train_batches(seqs, labels, 32, buckets, 1.0, seed=0, epoch=0, ties='random')
  first = batching.train_batches(seqs, labels, 32, buckets, 1.0, seed=0, epoch=0, ties='random')
  assert all((a.index == b.index).all() for a, b in zip(first, again))  # still (seed, epoch)'s
