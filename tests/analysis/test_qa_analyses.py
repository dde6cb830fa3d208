"""J&W's analyses on their QA/NLI model (more than two classes, a query kept
fixed), each against a float64 loop over one unpadded document at a time:
the gradient of the predicted class's probability, leave-one-out as the L1
distance of the output distributions, permutations and adversaries by the
total variation distance."""

import functools
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from attn_jax.analysis import gradient_importance, leave_one_out
from attn_jax.analysis.adversarial_search import adversarial_loss
from attn_jax.analysis.attention_permutation import permutation_test, word_permutations
from attn_jax.models import build_model, qa
from attn_jax.analysis import loo as loo_lib
from attn_jax.stages import stage
from attn_jax.stages.feature_importance import loo_chunks
from analysis_helpers import to_f64, x64_lengths
from conftest import tiny_model_config
from test_adversarial import naive_jsd

CLASSES = 6
VOCAB = 30


def qa_setup_config(encoder='bilstm', attention='tanh'):
  cfg = tiny_model_config(encoder, attention)
  cfg.query, cfg.classes = True, CLASSES
  return cfg


def qa_setup(encoder='bilstm', attention='tanh', seed=1):
  model = build_model(qa_setup_config(encoder, attention), VOCAB)
  return model, model.init(jax.random.PRNGKey(seed))


def documents(seed=0):
  """Passages of 5, 1 and 7 words with queries of 2, 3 and 1."""
  rng = np.random.default_rng(seed)
  text = lambda n: np.array([2, *rng.integers(4, VOCAB, size=n), 3], np.int32)
  passages = [text(n) for n in (5, 1, 7)]
  queries = [text(n) for n in (2, 3, 1)]
  rows, lengths = qa.query_rows(passages, queries)
  return passages, queries, jnp.asarray(rows), jnp.asarray(lengths)


@functools.partial(jax.jit, static_argnums=0)
def _forward(model, params, row, length):
  return model.forward(params, row, length)


@functools.partial(jax.jit, static_argnums=0)
def _decode(model, params, states, alpha):
  return model.decode(params, states, alpha)


@functools.partial(jax.jit, static_argnums=(0, 4))
def _probability_gradient(model, params, row, length, chosen):
  """∂p_chosen/∂e of one row with α detached, and e."""
  e = model.embed(params, row)
  mask = model.attention_mask(row, length)

  def prob(e):
    states = model.encode(params, e, length)
    alpha = jax.lax.stop_gradient(model.attend(params, states, mask))
    return jax.nn.softmax(model.decode(params, states, alpha))[0, chosen]
  return jax.grad(prob)(e), e


def one(model, p64, passage, query):
  """Forward of one unpadded row, in float64 (inside x64; jitted only to
  cache the compilation per length)."""
  row = np.concatenate([passage, query])[None]
  return _forward(model, p64, jnp.asarray(row), x64_lengths([len(passage)]))


def softmax(z):
  z = np.asarray(z, np.float64)
  e = np.exp(z - z.max())
  return e / e.sum()


# The BiLSTM's reference compiles for minutes: with the whole suite (heavy; CI margin).
@pytest.mark.parametrize('encoder', ['cnn', pytest.param('bilstm', marks=pytest.mark.heavy)])
def test_gradient_is_of_the_predicted_class_probability_with_attention_detached(encoder):
  model, params = qa_setup(encoder)
  passages, queries, rows, lengths = documents()
  got = np.asarray(gradient_importance(model, params, rows, lengths))
  with jax.enable_x64(True):
    p64 = to_f64(params)
    for b, (passage, query) in enumerate(zip(passages, queries)):
      row = jnp.asarray(np.concatenate([passage, query])[None])
      chosen = int(np.argmax(one(model, p64, passage, query).logits[0]))
      g, e = _probability_gradient(model, p64, row, x64_lengths([len(passage)]), chosen)
      g, e = np.asarray(g)[0], np.asarray(e)[0]
      want = [abs(g[t] @ e[t]) for t in range(1, len(passage) - 1)]
      np.testing.assert_allclose(got[b, 1:len(passage) - 1], want, rtol=1e-4, atol=1e-7)
      assert not got[b, len(passage) - 1:].any() and got[b, 0] == 0.0


@pytest.mark.parametrize('encoder', ['bilstm', 'cnn', 'average'])  # each family's passage variant path
def test_leave_one_out_is_the_l1_change_of_the_distribution_with_the_query_kept(encoder):
  """By the passage encoder's variant path, which a QA model declares (the
  query is the same in every variant)."""
  model, params = qa_setup(encoder)
  passages, queries, rows, lengths = documents(seed=2)
  assert {'deletion_states', 'replacement_states'} <= model.capabilities
  for mode in ('delete', 'replace'):
    assert loo_lib.fast_path(model, mode, windows=False) == 'states'
    loo_lib.check_fast_path(model, params, rows, lengths, mode=mode)
    got = leave_one_out(model, params, rows, lengths, mode=mode)
    with jax.enable_x64(True):
      p64 = to_f64(params)
      for b, (passage, query) in enumerate(zip(passages, queries)):
        full = softmax(one(model, p64, passage, query).logits[0])
        np.testing.assert_allclose(got.probs[b], full, atol=1e-5)
        for t in range(1, len(passage) - 1):
          if mode == 'delete':
            changed = np.delete(passage, t)
          else:
            changed = passage.copy()
            changed[t] = 0
          without = softmax(one(model, p64, changed, query).logits[0])
          np.testing.assert_allclose(got.importance[b, t], np.abs(without - full).sum(), atol=1e-5)
  assert float(got.importance.max()) > 1e-4


def test_permutations_are_scored_by_total_variation():
  model, params = qa_setup('average', 'dot')
  passages, queries, rows, lengths = documents(seed=3)
  keys = jax.random.split(jax.random.PRNGKey(4), 3)
  out = permutation_test(model, params, rows, lengths, keys, num_permutations=5)
  perms = np.asarray(word_permutations(keys, lengths, rows.shape[1], 5))
  with jax.enable_x64(True):
    p64 = to_f64(params)
    for b, (passage, query) in enumerate(zip(passages, queries)):
      fwd = one(model, p64, passage, query)
      full = softmax(fwd.logits[0])
      width = len(passage) + len(query)
      alpha = np.asarray(fwd.alpha[0])
      tvds = []
      for perm in perms[b]:
        permuted = np.array([alpha[perm[t]] if t < len(passage) else 0.0 for t in range(width)])
        logits = _decode(model, p64, fwd.hidden, jnp.asarray(permuted[None]))
        tvds.append(0.5 * np.abs(softmax(logits[0]) - full).sum())
      np.testing.assert_allclose(out.differences[b], tvds, atol=2e-6)
      np.testing.assert_allclose(out.median[b], np.median(tvds), atol=2e-6)


def test_the_adversarial_loss_holds_the_l1_change_of_the_distribution():
  model, params = qa_setup('average', 'tanh')
  _, _, rows, lengths = documents(seed=5)
  fwd = model.forward(params, rows, lengths)
  ell = (3.0 * np.random.default_rng(1).normal(size=(3, 4, rows.shape[1]))).astype(np.float32)
  probs = jax.nn.softmax(fwd.logits, axis=-1)
  decode = lambda h, adv: jax.vmap(lambda a: model.decode(params, h, a), in_axes=1, out_axes=1)(adv)
  got = adversarial_loss(jnp.asarray(ell), fwd.hidden, fwd.alpha, fwd.mask, probs, decode,
                         hinge_epsilon=0.01, output_weight=500.0, probabilities=model.probabilities)
  mask = np.asarray(fwd.mask)
  loss = hinges = 0.0
  for b in range(3):
    words = np.flatnonzero(mask[b])
    advs = []
    for k in range(4):
      adv = np.zeros(rows.shape[1])
      adv[words] = softmax(ell[b, k, words])
      advs.append(adv)
      states = jax.tree.map(lambda x: x[b:b + 1], fwd.hidden)
      out = softmax(_decode(model, params, states, jnp.asarray(adv[None], jnp.float32))[0])
      hinge = max(np.abs(out - np.asarray(probs[b], np.float64)).sum() - 0.01, 0.0)
      hinges += hinge
      loss += -naive_jsd(adv, np.asarray(fwd.alpha[b], np.float64)) + 500.0 * hinge
    pairs = [naive_jsd(a, c) for a in advs for c in advs]
    loss -= sum(pairs) / len(pairs)
  assert hinges > 1e-4
  np.testing.assert_allclose(float(got), loss, rtol=1e-4)


def test_a_qa_models_long_passage_re_encodes_its_rows_with_the_query_kept():
  """Under a budget no document fits, the stage re-encodes a passage's
  variant rows a chunk at a time; that gives the fast path's numbers."""
  model, params = qa_setup('bilstm')
  _, _, rows, lengths = documents(seed=2)
  cfg = ml_collections.ConfigDict({'model': qa_setup_config('bilstm').to_dict(), 'analysis': {
      'loo': {'mode': 'delete', 'docs_per_chunk': 4, 'max_chunk_bytes': 1}}})
  ctx = stage.AnalysisContext(model, params, None, 'test', cfg, '', '')
  assert loo_chunks(ctx, SimpleNamespace(tokens=np.asarray(rows), lengths=np.asarray(lengths))) == (1, 1)
  fast = leave_one_out(model, params, rows, lengths)
  chunked = leave_one_out(model, params, rows, lengths, reencode=True, rows_per_chunk=2)
  np.testing.assert_allclose(chunked.importance, fast.importance, atol=1e-6)
