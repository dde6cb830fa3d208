"""Tiny models, padded batches and float64 single-document references for
the tests of `attn_jax.analysis`."""

import functools
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.data.vocabulary import EOS, SOS
from attn_jax.models import build_model
from conftest import tiny_model_config

VOCAB = 30
LENGTHS = (7, 3, 9)  # with SOS and EOS: 5, 1 and 7 words


def setup(encoder='bilstm', attention='tanh', projection='softmax', seed=1):
  model = build_model(tiny_model_config(encoder, attention, projection), VOCAB)
  return model, model.init(jax.random.PRNGKey(seed))


def documents(lengths=LENGTHS, seed=0):
  """[SOS] w .. w [EOS] with words drawn from ids 4 .. VOCAB − 1 (no PAD/UNK)."""
  rng = np.random.default_rng(seed)
  return [np.array([SOS, *rng.integers(4, VOCAB, size=n - 2), EOS], np.int32) for n in lengths]


def pad(docs, width=None):
  """Right-padded [B, W] int32 tokens (PAD = 0) and [B] int32 lengths."""
  width = width or max(len(d) for d in docs)
  tokens = np.zeros((len(docs), width), np.int32)
  for row, doc in enumerate(docs):
    tokens[row, :len(doc)] = doc
  return jnp.asarray(tokens), jnp.asarray([len(d) for d in docs], dtype=jnp.int32)


def to_f64(params):
  """Call inside `jax.enable_x64(True)`."""
  return jax.tree.map(lambda x: jnp.asarray(np.asarray(x), jnp.float64), params)


@functools.partial(jax.jit, static_argnums=0)
def _forward(model, params, tokens, lengths):
  return model.forward(params, tokens, lengths)


def single(model, params64, doc):
  """Forward of one unpadded document (call inside x64 with float64 params;
  jitted only to cache the compilation per length)."""
  return _forward(model, params64, jnp.asarray(np.asarray(doc, np.int32)[None]),
                  x64_lengths([len(doc)]))


def x64_lengths(lengths):
  """Lengths as the default int (int64 under x64, as the models' own aranges)."""
  return jnp.asarray(np.asarray(lengths, np.int64))


def sigmoid(z):
  return 1.0 / (1.0 + np.exp(-z))


def js_binary(z1, z2):
  """JS divergence of [1 − σ(z1), σ(z1)] and [1 − σ(z2), σ(z2)] in float64."""
  p = np.array([1 - sigmoid(z1), sigmoid(z1)])
  q = np.array([1 - sigmoid(z2), sigmoid(z2)])
  m = (p + q) / 2
  kl = lambda a, b: sum(x * np.log(x / y) for x, y in zip(a, b) if x > 0)
  return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def naive_average_precision(scores, evidence, n_words):
  """sklearn's definition, one document: Σ over thresholds of Δrecall × precision."""
  s = [float(x) for x in scores[1:n_words + 1]]
  e = [bool(x) for x in evidence[1:n_words + 1]]
  relevant = sum(e)
  if relevant == 0:
    return float('nan')
  total = 0.0
  for threshold in sorted(set(s), reverse=True):
    at = [i for i in range(n_words) if s[i] >= threshold]
    new = [i for i in range(n_words) if s[i] == threshold and e[i]]
    total += len(new) / relevant * sum(e[i] for i in at) / len(at)
  return total


# ERASER (`eraser_metrics`): one document, one measure, one fraction, by the definitions.

def naive_count(n, fraction, rounding='floor', min_words=0):
  exact = Fraction(str(fraction)) * n
  count = {'floor': math.floor(exact), 'ceil': math.ceil(exact), 'round': math.floor(exact + Fraction(1, 2))}
  return min(max(count[rounding], min_words), n)


def naive_top(scores, count):
  """The `count` highest-scored of n words (indices 0 .. n − 1), ties to the earlier, in document order."""
  return sorted(sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:count])


def naive(distribution, words, scores, fraction, **counting):
  """(comprehensiveness, sufficiency, count) of one document, one measure, one fraction."""
  full = distribution(words)
  predicted = int(np.argmax(full))
  top = naive_top(scores, naive_count(len(words), fraction, **counting))
  without = distribution(np.delete(words, top))
  alone = distribution(np.asarray(words)[top])
  return full[predicted] - without[predicted], full[predicted] - alone[predicted], len(top)
