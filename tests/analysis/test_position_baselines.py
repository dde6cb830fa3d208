"""The rankings that read no model (`position_baselines`) against plain
float64 loops: later words first, the last statement first, and a random
ranking of word types against the mean over every order of the types."""

import itertools

import numpy as np
import pytest

from attn_jax.analysis import evidence_ranking as ev, position_baselines as pb
from analysis_helpers import naive_average_precision


def naive_statements(separators, n_words):
  """Statement index of positions 1..n: separators strictly before, counted one by one."""
  index, out = 0, [0.0] * (n_words + 2)
  for t in range(1, n_words + 1):
    out[t] = float(index)
    if separators[t]:
      index += 1
  return out


def _case(seed, batch=10, width=16, kinds=4):
  rng = np.random.default_rng(seed)
  lengths = rng.integers(3, width + 1, size=batch)  # with SOS and EOS
  words = pb.words_mask(lengths, width)
  evidence = (rng.random((batch, width)) < 0.3) | ~words  # outside the words: must be ignored
  evidence[np.arange(batch), rng.integers(1, lengths - 1)] = True  # one evidence word at least
  evidence[0] = ~words[0]  # but a document without evidence words
  separators = rng.random((batch, width)) < 0.25
  types = rng.integers(0, kinds, size=(batch, width))
  return lengths, words, evidence, separators, types


def _per_doc(fn, lengths):
  return np.array([fn(i, int(n) - 2) for i, n in enumerate(lengths)])


def test_later_words_first_matches_a_float64_loop():
  lengths, words, evidence, _, _ = _case(0)
  got = pb.baseline_average_precision(evidence, words)['later_words_first']
  want = _per_doc(lambda i, n: naive_average_precision(np.arange(words.shape[1], dtype=np.float64),
                                                       evidence[i], n), lengths)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  assert np.isnan(want).sum() == 1
  np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-6, atol=1e-6)


def test_the_last_statement_first_matches_a_float64_loop():
  lengths, words, evidence, separators, _ = _case(1)
  statements = pb.statements_from_separators(separators, words)
  for i, n in enumerate(lengths):
    assert list(statements[i, 1:n - 1]) == naive_statements(separators[i], n - 2)[1:n - 1]
    assert (statements[i][~words[i]] == -1).all()
  got = pb.baseline_average_precision(evidence, words, separators=separators)['last_statement_first']
  want = _per_doc(lambda i, n: naive_average_precision(np.array(naive_statements(separators[i], n)),
                                                       evidence[i], n), lengths)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-6, atol=1e-6)


def test_a_separator_ties_with_the_statement_it_ends():
  # SOS, 'a b .' 'c .' 'd', EOS: statements 0 0 0 | 1 1 | 2
  separators = np.array([[False, False, False, True, False, True, False, False]])
  words = pb.words_mask(np.array([8]), 8)
  assert pb.statements_from_separators(separators, words).tolist() == [[-1, 0, 0, 0, 1, 1, 2, -1]]
  evidence = np.array([[False, False, False, False, True, False, False, False]])  # 'c'
  # ranked: 'd' (1 word), then 'c .' tied: precision at the tie 1/3
  ap = pb.baseline_average_precision(evidence, words, separators=separators)['last_statement_first']
  assert ap[0] == pytest.approx(1 / 3)


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_random_word_types_is_the_mean_over_every_order_of_the_types(seed):
  lengths, words, evidence, _, types = _case(10 + seed, batch=6, width=12, kinds=4)
  mean, error = pb.random_type_average_precision(types, evidence, words, draws=4000, seed=seed)
  for i, n in enumerate(lengths):
    n = int(n) - 2
    kinds = sorted(set(types[i, 1:n + 1].tolist()))
    values = []
    for order in itertools.permutations(range(len(kinds))):
      rank = {k: r for k, r in zip(kinds, order)}  # all occurrences of a type share its rank
      scores = np.array([0.0] + [float(rank[k]) for k in types[i, 1:n + 1]] + [0.0])
      values.append(naive_average_precision(scores, evidence[i], n))
    exact = float(np.mean(values))
    if np.isnan(exact):
      assert np.isnan(mean[i])
      continue
    assert error[i] < 0.01
    assert abs(mean[i] - exact) < 5 * error[i] + 1e-12, (i, mean[i], exact, error[i])


def test_one_draw_of_types_is_the_ap_of_its_ranking():
  # with one type order per draw, each draw's AP is the AP function's of that order's scores
  lengths, words, evidence, _, types = _case(20, batch=5, width=10, kinds=3)
  for i, n in enumerate(lengths):
    mean, _ = pb.random_type_average_precision(types[i:i + 1], evidence[i:i + 1], words[i:i + 1], draws=1,
                                               seed=7)
    kinds = np.unique(types[i][words[i]])
    order = np.argsort(np.random.default_rng([7, 0]).random((1, len(kinds))), axis=1)[0]
    rank = {int(kinds[k]): len(kinds) - position for position, k in enumerate(order)}  # drawn first: highest
    scores = np.array([float(rank.get(int(t), 0)) for t in types[i]])
    want = naive_average_precision(scores, evidence[i], int(n) - 2)
    np.testing.assert_allclose(mean[0], want, rtol=1e-9, equal_nan=True)


def test_distinct_words_make_random_types_the_random_ranking_of_words():
  lengths = np.array([30, 20, 12])
  words = pb.words_mask(lengths, 30)
  evidence = np.zeros((3, 30), bool)
  evidence[0, 3:9], evidence[1, [1, 5, 6]], evidence[2, 10] = True, True, True
  types = np.broadcast_to(np.arange(30), (3, 30))  # every word its own type
  mean, error = pb.random_type_average_precision(types, evidence, words, draws=20000)
  exact = ev.chance_average_precision(evidence[:, 1:].sum(1), lengths - 2)
  assert np.all(np.abs(mean - exact) < 5 * error)
  overall, overall_error = pb.mean_with_error(mean, error)
  assert overall == pytest.approx(mean.mean()) and overall_error == pytest.approx(np.sqrt((error ** 2).sum()) / 3)


def test_chunks_do_not_change_the_ap():
  lengths, words, evidence, _, _ = _case(3, batch=9)
  scores = np.random.default_rng(3).normal(size=words.shape)
  whole = pb.average_precision(scores, evidence, words)
  np.testing.assert_array_equal(pb.average_precision(scores, evidence, words, pairs_per_chunk=1), whole)
