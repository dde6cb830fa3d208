"""J&W's attention permutation (`permute_attn`) against a loop over permutations in float64."""

import collections

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.analysis import attention_permutation as permutation, permutation_test, permute_attention, word_permutations
from analysis_helpers import documents, pad, setup, sigmoid, single, to_f64

WIDTH = 11


# Only the decoder sees a permutation: the cheap bag-of-words encoder will do.
ENCODER = 'average'
permutations_of = jax.jit(word_permutations, static_argnums=(2, 3))


def keys_for(n, seed=0):
  return jax.random.split(jax.random.PRNGKey(seed), n)


def test_each_row_permutes_the_words_and_fixes_everything_else():
  lengths = jnp.array([7, 3, 9, 4], dtype=jnp.int32)
  perms = np.asarray(permutations_of(keys_for(4), lengths, WIDTH, 30))
  assert perms.shape == (4, 30, WIDTH) and perms.dtype == np.int32
  for b, n in enumerate(np.asarray(lengths)):
    for row in perms[b]:
      assert sorted(row[1:n - 1]) == list(range(1, n - 1))
      assert row[0] == 0 and list(row[n - 1:]) == list(range(n - 1, WIDTH))
  assert len({tuple(row) for row in perms[2]}) > 25  # 7 words: 5040 orders, 30 draws
  other = np.asarray(permutations_of(keys_for(4, seed=1), lengths, WIDTH, 30))
  assert not np.array_equal(other[2], perms[2])


def test_documents_wider_than_the_packed_sort_are_permuted_too():
  width = 2**permutation.POSITION_BITS + 20  # past the packed sort's positions
  lengths = jnp.array([width - 3, 6], dtype=jnp.int32)
  perms = np.asarray(permutations_of(keys_for(2), lengths, width, 3))
  for b, n in enumerate(np.asarray(lengths)):
    for row in perms[b]:
      assert sorted(row[1:n - 1]) == list(range(1, n - 1))
      assert row[0] == 0 and list(row[n - 1:]) == list(range(n - 1, width))
  assert not np.array_equal(perms[0, 0], np.arange(width))


def test_a_documents_permutations_do_not_depend_on_its_batch_or_padding():
  lengths = jnp.array([7, 3, 9, 4], dtype=jnp.int32)
  keys = keys_for(4)
  perms = np.asarray(permutations_of(keys, lengths, WIDTH, 10))
  for b, n in enumerate(np.asarray(lengths)):
    alone = np.asarray(permutations_of(keys[b:b + 1], lengths[b:b + 1], WIDTH + 5, 10))
    np.testing.assert_array_equal(alone[0, :, :n], perms[b, :, :n])
  order = jnp.array([2, 0, 3, 1])
  shuffled = permutations_of(keys[order], lengths[order], WIDTH, 10)
  np.testing.assert_array_equal(shuffled, perms[np.asarray(order)])


def test_permutations_of_three_words_are_uniform():
  perms = np.asarray(permutations_of(keys_for(1), jnp.array([5], dtype=jnp.int32), 6, 1200))
  counts = collections.Counter(tuple(row[1:4]) for row in perms[0])
  assert len(counts) == 6  # expected 200 each, sd ≈ 13
  assert all(150 < c < 250 for c in counts.values()), counts


def test_permutation_test_matches_decoding_one_permuted_alpha_at_a_time():
  model, params = setup(ENCODER)
  docs = documents(seed=2)
  tokens, lengths = pad(docs, WIDTH)
  keys = keys_for(len(docs), seed=3)
  out = permutation_test(model, params, tokens, lengths, keys, num_permutations=6)
  perms = np.asarray(permutations_of(keys, lengths, WIDTH, 6))
  theta = np.asarray(params['decoder']['output']['kernel'], np.float64)[:, 0]
  bias = float(params['decoder']['output']['bias'][0])
  with jax.enable_x64(True):
    p64 = to_f64(params)
    for b, doc in enumerate(docs):
      n = len(doc)
      fwd = single(model, p64, doc)
      hidden, alpha = np.asarray(fwd.hidden[0]), np.asarray(fwd.alpha[0])
      y = sigmoid(theta @ (alpha @ hidden) + bias)
      diffs = []
      for perm in perms[b]:
        permuted = np.array([alpha[perm[t]] for t in range(n)])  # α'_t = α_{π(t)}
        diffs.append(abs(sigmoid(theta @ (permuted @ hidden) + bias) - y))
      np.testing.assert_allclose(out.probs[b], y, atol=2e-6)
      np.testing.assert_allclose(out.differences[b], diffs, atol=2e-6)
      np.testing.assert_allclose(out.median[b], np.median(diffs), atol=2e-6)
  np.testing.assert_allclose(out.median, np.median(np.asarray(out.differences), axis=-1), rtol=1e-6)
  assert float(out.differences[2].max()) > 1e-4  # the 7-word document does move


def test_uniform_attention_is_invariant_to_every_permutation():
  model, params = setup(ENCODER, projection='uniform')
  tokens, lengths = pad(documents(seed=4), WIDTH)
  out = permutation_test(model, params, tokens, lengths, keys_for(3), num_permutations=6)
  assert float(out.differences.max()) < 1e-6
  # The same with a uniform α imposed on a softmax model's hidden states.
  model, params = setup(ENCODER)
  fwd = model.forward(params, tokens, lengths)
  words = fwd.mask.astype(jnp.float32)
  uniform = words / jnp.sum(words, axis=-1, keepdims=True)
  perms = permutations_of(keys_for(3), lengths, WIDTH, 6)
  assert float(permute_attention(model, params, fwd.hidden, uniform, perms).differences.max()) < 1e-6
  assert float(permute_attention(model, params, fwd.hidden, fwd.alpha, perms).differences.max()) > 1e-4
