"""The Transformer's attention, all of it (`attn_jax.models.self_attention`,
`attn_jax.tables.meister_heads`): every view's weights and statistics on a
tiny random two-head, two-layer Transformer against float64 references
computed one unpadded document, one head, one query and one word at a time
with plain loops — the attention weights recomputed from the params, not
read from flax."""

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import attn_jax as aj
from attn_jax import analysis
from attn_jax.explain import GRADIENT_ATTACHED
from attn_jax.models import build_model, heads
from attn_jax.models.interface import InterfaceError
from attn_jax.models.self_attention import SelfAttention
from attn_jax.tables import meister_heads as mh
from analysis_helpers import VOCAB, documents, pad, to_f64, x64_lengths
from conftest import tiny_model_config

LENGTHS = (9, 3, 6, 12)  # 7, 1, 4 and 10 words; batches of 3: the second is filled up
HEADS, LAYERS = 2, 2


@pytest.fixture(scope='module')
def tiny():
  cfg = tiny_model_config('transformer', 'dot', 'softmax')
  cfg.transformer_heads, cfg.transformer_layers = HEADS, LAYERS
  model = build_model(cfg, VOCAB)
  params = model.init(jax.random.PRNGKey(3))
  rng = np.random.default_rng(0)
  # Larger query and key weights than the initialisation's: peaked rows, so a
  # wrong row, head or normalisation shows.
  def sharpen(path, x):
    named = any(k in jax.tree_util.keystr(path) for k in ("'query'", "'key'"))
    return jnp.asarray(rng.normal(0, 1.5, x.shape), x.dtype) if named else x
  params = jax.tree_util.tree_map_with_path(sharpen, params)
  return model, params, documents(LENGTHS, seed=5)


def _softmax(x):
  x = np.asarray(x, np.float64)
  e = np.exp(x - x.max())
  return e / e.sum()


def naive_layers(model, params, doc):
  """[K][heads] n × n weights of one unpadded document in float64, from the params: row q is
  softmax_k(q_q · k_k / √d) over the document's n positions."""
  n = len(doc)
  with jax.enable_x64(True), jax.numpy_dtype_promotion('standard'):
    p64 = to_f64(params)
    tokens, lengths = jnp.asarray(np.asarray(doc, np.int32)[None]), x64_lengths([n])
    embedded = model.embed(p64, tokens)
    states = np.asarray(model.encode_layers(p64, embedded, lengths))[:, 0]  # [K, n, H]
    encoder = p64['encoder']
    x0 = np.asarray(embedded[0]) @ np.asarray(encoder['input_projection']['kernel']) + np.asarray(
        encoder['input_projection']['bias'])
    from attn_jax.models.encoders.transformer import sinusoidal_positions  # pylint: disable=g-import-not-at-top
    x0 = x0 + sinusoidal_positions(n, x0.shape[1])
  out = []
  for k in range(LAYERS):
    x = x0 if k == 0 else states[k - 1]
    a = encoder[f'layer{k}_attention']
    proj = lambda name, h, t: np.asarray(x[t]) @ np.asarray(a[name]['kernel'][:, h]) + np.asarray(a[name]['bias'][h])
    layer = []
    for h in range(HEADS):
      w = np.zeros((n, n))
      for q in range(n):
        qv = proj('query', h, q)
        logits = [float(np.dot(qv, proj('key', h, t))) / math.sqrt(len(qv)) for t in range(n)]
        w[q] = _softmax(logits)
      layer.append(w)
    out.append(layer)
  return out


def _over_words(row, n):
  """The row on the words 1 .. n − 2, renormalised, as a list."""
  words = [float(row[i]) for i in range(1, n - 1)]
  total = sum(words)
  return [v / total for v in words]


def _readings(m, n):
  """(sos, received, rows) of one n × n matrix, each over the words, renormalised."""
  received = [sum(float(m[q, t]) for q in range(1, n - 1)) / (n - 2) for t in range(n)]
  return _over_words(m[0], n), _over_words(received, n), [_over_words(m[q], n) for q in range(1, n - 1)]


def naive_views(layers, n):
  """{view name: weights over the words} and {rows/<matrix>: [word rows over the words]}.
  A layer's mean over heads is the mean of its heads' readings (each already over the words),
  as `heads.mean_over_heads` averages the heads' α; the rollout mixes the raw weights."""
  readings = {}
  for k in range(LAYERS):
    per_head = [_readings(layers[k][h], n) for h in range(HEADS)]
    for h in range(HEADS):
      readings[f'layer{k}/head{h}'] = per_head[h]
    readings[f'layer{k}/mean'] = (
        [sum(r[0][i] for r in per_head) / HEADS for i in range(n - 2)],
        [sum(r[1][i] for r in per_head) / HEADS for i in range(n - 2)],
        [[sum(r[2][q][i] for r in per_head) / HEADS for i in range(n - 2)] for q in range(n - 2)])
  rollout = np.eye(n)
  for k in range(LAYERS):
    mixed = 0.5 * (sum(layers[k]) / HEADS) + 0.5 * np.eye(n)
    mixed = np.array([row / row.sum() for row in mixed])
    step = np.zeros((n, n))
    for i in range(n):
      for j in range(n):
        step[i, j] = sum(mixed[i, t] * rollout[t, j] for t in range(n))
    rollout = step
  readings['rollout'] = _readings(rollout, n)
  views, rows = {}, {}
  for name, (sos, received, word_rows) in readings.items():
    views[f'sos/{name}'], views[f'received/{name}'], rows[f'rows/{name}'] = sos, received, word_rows
  return views, rows


def _entropy(p):
  if len(p) < 2:
    return math.nan
  return -sum(x * math.log(x) for x in p if x > 0) / math.log(len(p))


def _near_zero(p):
  return sum(1 for x in p if x < mh.NEAR_ZERO / len(p)) / len(p)


def _pooling(model, params, doc):
  """The model's own α over the words of one unpadded document, in float64."""
  n = len(doc)
  with jax.enable_x64(True), jax.numpy_dtype_promotion('standard'):
    fwd = model.forward(to_f64(params), jnp.asarray(np.asarray(doc, np.int32)[None]), x64_lengths([n]))
    return [float(v) for v in np.asarray(fwd.alpha)[0, 1:n - 1]]


def _nanmean(values):
  finite = [v for v in values if not math.isnan(v)]
  return sum(finite) / len(finite) if finite else None


@pytest.fixture(scope='module')
def computed(tiny):
  model, params, docs = tiny
  arrays = mh.document_arrays(model, params, docs, batch_size=3)
  return arrays, mh.summarise(arrays)


def test_every_view_and_statistic_against_the_float64_loops(tiny, computed):
  model, params, docs = tiny
  arrays, summary = computed
  per_view = {}
  for b, doc in enumerate(docs):
    n = len(doc)
    views, rows = naive_views(naive_layers(model, params, doc), n)
    views['pooling'] = _pooling(model, params, doc)
    # τ by scipy, document by document, on the arrays the table reads: the weights are checked against
    # the float64 loops just above, the measures in test_importance.py (τ jumps where float32 and float64
    # order two nearly equal values differently, so it is not compared across precisions)
    measures = {m: arrays['measures'][m][b, 1:n - 1] for m, _ in mh.MEASURES}
    for name, weights in views.items():
      np.testing.assert_allclose(arrays['alpha'][name][b, 1:n - 1], weights, atol=2e-5, err_msg=f'{name} doc {b}')
      assert np.all(arrays['alpha'][name][b, n - 1:] == 0) and arrays['alpha'][name][b, 0] == 0
      entry = per_view.setdefault(name, {'entropy': [], 'near_zero': [], **{m: [] for m, _ in mh.MEASURES}})
      entry['entropy'].append(_entropy(weights))
      entry['near_zero'].append(_near_zero(weights))
      for m, _ in mh.MEASURES:
        with warnings.catch_warnings():
          warnings.simplefilter('ignore')  # one word: τ is NaN, as kendall_tau's
          entry[m].append(float(scipy.stats.kendalltau(arrays['alpha'][name][b, 1:n - 1], measures[m]).statistic))
    for name, word_rows in rows.items():
      entry = per_view.setdefault(name, {'entropy': [], 'near_zero': []})
      entropies = [e for e in (_entropy(r) for r in word_rows) if not math.isnan(e)]
      entry['entropy'].append(sum(entropies) / len(entropies) if entropies else math.nan)
      entry['near_zero'].append(sum(_near_zero(r) for r in word_rows) / len(word_rows))
  assert set(per_view) == set(summary) == set(mh.views(model)) | {f'rows/{m}' for m in mh.matrices(model)}
  for name, expected in per_view.items():
    got = summary[name]
    assert got['entropy'] == pytest.approx(_nanmean(expected['entropy']), abs=2e-5), name
    assert got['near_zero'] == pytest.approx(_nanmean(expected["near_zero"]), abs=1e-6), name
    if name.startswith('rows/'):
      assert 'tau' not in got
      continue
    for m, _ in mh.MEASURES:
      assert got['tau'][m] == pytest.approx(_nanmean(expected[m]), abs=1e-6), (name, m)


def test_the_views_are_heads_views_and_the_sos_rollout_is_heads_rollout(tiny, computed):
  model, params, docs = tiny
  arrays, _ = computed
  tokens = np.zeros((len(docs), 16), np.int32)
  for b, d in enumerate(docs):
    tokens[b, :len(d)] = d
  lengths = jnp.asarray([len(d) for d in docs], jnp.int32)
  ours = heads.rollout(SelfAttention(model, LAYERS - 1, 'sos')).forward(params, jnp.asarray(tokens), lengths)
  np.testing.assert_allclose(np.asarray(ours.alpha), arrays['alpha']['sos/rollout'][:, :16], atol=1e-6)
  fwd = model.forward(params, jnp.asarray(tokens), lengths)
  np.testing.assert_allclose(np.asarray(ours.logits), np.asarray(fwd.logits), atol=1e-6)  # read-only: the model's
  assert 'imposes_attention' not in heads.head(SelfAttention(model, 0), 1).capabilities
  with pytest.raises(InterfaceError, match='layer 2 of a Transformer with 2'):
    SelfAttention(model, 2)
  with pytest.raises(InterfaceError, match='no self-attention layers'):
    SelfAttention(build_model(tiny_model_config('bilstm', 'tanh', 'softmax'), VOCAB))


def _seed(arm, seed, value):
  views = {'pooling': {'entropy': value, 'near_zero': 0.0, 'zero': 0.0, 'largest': 0.1,
                       'tau': {m: value for m, _ in mh.MEASURES}},
           'sos/layer0/head0': {'entropy': value, 'near_zero': 0.5, 'zero': 0.0, 'largest': 0.2,
                                'tau': {m: -value for m, _ in mh.MEASURES}},
           'sos/layer0/mean': {'entropy': value, 'near_zero': 0.5, 'zero': 0.0, 'largest': 0.2,
                               'tau': {m: -value for m, _ in mh.MEASURES}},
           'rows/rollout': {'entropy': value, 'near_zero': 0.25, 'zero': 0.0, 'largest': 0.3}}
  return {'arm': arm, 'seed': seed, 'workdir': f'w/{arm}/{seed}', 'params': seed, 'documents': 3,
          'dataset': 'sst', 'projection': 'softmax', 'heads': 1, 'layers': 1, 'views': views}


def test_seeds_become_intervals_a_row_per_view_and_a_rerun_keeps_them(tmp_path):
  path = str(tmp_path / 'out' / 'heads.json')
  results = mh.read(path)
  results['seeds'] = {f'arm/seed{i}': _seed('arm', f'seed{i}', v) for i, v in enumerate((0.5, 0.7, 0.9))}
  mh.write(path, results)
  again = mh.read(path)
  assert again['seeds'] == results['seeds']
  arm = mh.over_seeds(again['seeds'])['arm']
  assert arm['seeds'] == 3 and arm['views']['pooling']['entropy']['mean'] == pytest.approx(0.7)
  expected = scipy.stats.t.ppf(0.975, 2) * 0.2 / math.sqrt(3)
  assert arm['views']['pooling']['tau/g_y_x']['half_width'] == pytest.approx(expected)
  table, notes = mh.rows({'arms': mh.over_seeds(again['seeds'])})
  views = [row[2] for row in table[1:]]
  # one head: its mean is the head, shown once
  assert views == ["pooling α (the model's attention)", 'layer 1, head 1 (the mean: one head)', 'rollout']
  assert table[3][3] == 'rows' and table[3][7] == '–'
  assert table[2][6] == '0.200 ± 0.000' and table[2][7] == f'-0.700 ± {expected:.3f}'
  assert any('below 0.01/n' in n for n in notes)


def test_explain_reads_the_rollout_with_the_models_own_attached_gradient(tiny):
  """The rollout's α is the view's; its gradient, attached, is the model's own
  and so the same under the mean view."""
  model, params, docs = tiny
  texts = [' '.join(f'w{int(t)}' for t in doc[1:-1]) for doc in docs]  # a document holds SOS and EOS
  vocab = {f'w{i}': i for i in range(4, VOCAB)}
  attention = SelfAttention(model, LAYERS - 1, 'sos')
  roll = aj.explain(heads.rollout(attention), texts, params=params, vocab=vocab)
  mean = aj.explain(heads.mean_over_heads(attention), texts, params=params, vocab=vocab)
  tokens, lengths = pad(docs)
  alpha = np.asarray(heads.rollout(attention).forward(params, tokens, lengths).alpha)
  attached = np.asarray(analysis.gradient_importance(model, params, tokens, lengths, detach_attention=False))
  for b, (doc, r, m) in enumerate(zip(docs, roll, mean)):
    n = len(doc) - 2
    assert r.gradient_label == m.gradient_label == GRADIENT_ATTACHED
    np.testing.assert_allclose(r.alpha, alpha[b, 1:n + 1], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(r.gradient, attached[b, 1:n + 1], rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(r.gradient, m.gradient, rtol=1e-5, atol=1e-8)
  # two views' α beside one gradient (a one-word text has α = 1 under both)
  assert max(np.max(np.abs(r.alpha - m.alpha)) for r, m in zip(roll, mean)) > 1e-3
