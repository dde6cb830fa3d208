"""ROAR's masking (`roar_masking`) against naive Python loops: ranks by score
(ties by position, NaN last, words only), recursive ranks (the previous mask
first), counts in integers, the masked tokens; and `RankTable`'s batches."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.analysis import roar_masking
from attn_jax.training import masked_training


def naive_ranks(scores, length, first=()):
  """A loop: the words 1 .. length − 2, `first` ones first by position, the
  rest by score descending (ties: earlier first; NaN last)."""
  words = list(range(1, length - 1))
  def key(t):
    s = float(scores[t])
    return (0 if t in first else 1, 0.0 if t in first else (math.inf if math.isnan(s) else -s), t)
  order = sorted(words, key=key)
  ranks = [roar_masking.NOT_RANKED] * len(scores)
  for r, t in enumerate(order):
    ranks[t] = r
  return ranks


def naive_count(n, p, q, rounding):
  exact = p * n / q
  return min(n, {'floor': math.floor(exact), 'ceil': math.ceil(exact), 'round': math.floor(exact + 0.5)}[rounding])


@pytest.fixture
def batch():
  rng = np.random.default_rng(0)
  lengths = np.array([9, 5, 3, 12])
  scores = rng.integers(0, 4, size=(4, 12)).astype(np.float64)  # many ties
  scores[0, 3] = np.nan
  return scores, lengths


def test_ranks_equal_a_loop(batch):
  scores, lengths = batch
  got = np.asarray(roar_masking.word_ranks(jnp.asarray(scores, jnp.float32), jnp.asarray(lengths)))
  for b, length in enumerate(lengths):
    assert list(got[b]) == naive_ranks(scores[b], length)


def test_recursive_ranks_put_the_previous_mask_first(batch):
  scores, lengths = batch
  first = np.zeros(scores.shape, bool)
  first[0, [2, 7]] = True
  first[3, [10]] = True
  got = np.asarray(roar_masking.word_ranks(jnp.asarray(scores, jnp.float32), jnp.asarray(lengths),
                                           first=jnp.asarray(first)))
  for b, length in enumerate(lengths):
    assert list(got[b]) == naive_ranks(scores[b], length, set(np.flatnonzero(first[b])))


@pytest.mark.parametrize('rounding', ['floor', 'ceil', 'round'])
def test_counts_and_masks_equal_a_loop(batch, rounding):
  scores, lengths = batch
  ranks = roar_masking.word_ranks(jnp.asarray(scores, jnp.float32), jnp.asarray(lengths))
  tokens = np.arange(4 * 12, dtype=np.int32).reshape(4, 12) + 10
  for p, q in ((1, 10), (3, 10), (1, 2), (9, 10), (1, 1)):
    masked = np.asarray(roar_masking.masked_words(ranks, jnp.asarray(lengths), p, q, rounding))
    out = np.asarray(roar_masking.mask_tokens(jnp.asarray(tokens), jnp.asarray(masked), 7))
    for b, length in enumerate(lengths):
      count = naive_count(length - 2, p, q, rounding)
      expected = naive_ranks(scores[b], length)
      want = [r < count for r in expected]
      assert list(masked[b]) == want
      assert list(out[b]) == [7 if w else t for w, t in zip(want, tokens[b])]


def test_a_larger_fraction_masks_a_superset():
  rng = np.random.default_rng(1)
  scores, lengths = rng.normal(size=(3, 20)), jnp.asarray([20, 14, 7])
  ranks = roar_masking.word_ranks(jnp.asarray(scores, jnp.float32), lengths)
  masks = [np.asarray(roar_masking.masked_words(ranks, lengths, p, 10)) for p in range(1, 10)]
  for smaller, larger in zip(masks, masks[1:]):
    assert np.all(larger | ~smaller) and larger.sum() >= smaller.sum()


def test_an_unknown_rounding_is_refused():
  with pytest.raises(ValueError, match='rounding'):
    roar_masking.fraction_count(jnp.asarray([5]), 1, 2, 'nearest')


def test_a_rank_table_gives_each_document_its_rows_whatever_the_batch():
  rows = [np.array([[5, 0, 1, 5], [5, 1, 0, 5]]), np.array([[5, 0, 5], [5, 0, 5]]),
          np.array([[5, 2, 0, 1, 5, 9], [5, 0, 1, 2, 5, 9]])]
  table = masked_training.RankTable.from_rows(rows)
  got = table.batch(np.array([2, -1, 0]), 7)  # a filler row, and padding past each row
  assert got.shape == (2, 3, 7)
  np.testing.assert_array_equal(got[:, 0, :6], rows[2])
  assert np.all(got[:, 0, 6:] == roar_masking.NOT_RANKED) and np.all(got[:, 1] == roar_masking.NOT_RANKED)
  np.testing.assert_array_equal(got[:, 2, :4], rows[0])
  assert np.all(got[:, 2, 4:] == roar_masking.NOT_RANKED)
