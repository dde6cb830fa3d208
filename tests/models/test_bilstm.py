"""The BiLSTM against naive per-sequence loops (float64), and its hand-written VJP."""

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.models.encoders.bilstm import BiLSTMEncoder, lstm_scan, reverse_within_length


def sigmoid(x):
  return 1.0 / (1.0 + np.exp(-x))


def naive_lstm(xs, w_ih, w_hh, b):
  """One direction over the rows of xs [T, D], plain numpy loop."""
  hidden = w_hh.shape[0]
  h, c, out = np.zeros(hidden), np.zeros(hidden), []
  for x in xs:
    gates = x @ w_ih + h @ w_hh + b
    i, f, g, o = np.split(gates, 4)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    out.append(h)
  return np.array(out)


def test_bilstm_matches_a_loop_over_each_sequence():
  rng = np.random.default_rng(0)
  lengths = np.array([7, 3, 5])
  embedded = rng.normal(size=(3, 9, 4)).astype(np.float32)
  embedded[np.arange(9)[None, :] >= lengths[:, None]] = 0.0
  encoder = BiLSTMEncoder(hidden=6)
  params = encoder.init(jax.random.PRNGKey(0), jnp.asarray(embedded), jnp.asarray(lengths))
  out = np.asarray(encoder.apply(params, jnp.asarray(embedded), jnp.asarray(lengths)))
  p = {k: np.asarray(v, np.float64) for k, v in params['params'].items()}
  for row, n in enumerate(lengths):
    xs = embedded[row, :n].astype(np.float64)
    bias = p['bias'] + p['bias_hh']  # PyTorch's two biases, summed in the gates
    forward = naive_lstm(xs, p['w_ih'][0], p['w_hh'][0], bias[0])
    backward = naive_lstm(xs[::-1], p['w_ih'][1], p['w_hh'][1], bias[1])[::-1]
    np.testing.assert_allclose(out[row, :n], np.concatenate([forward, backward], -1), atol=2e-6)
    assert np.abs(out[row, n:]).max() == 0.0


def test_reverse_within_length_reverses_the_prefix_and_is_an_involution():
  x = jnp.arange(12, dtype=jnp.float32).reshape(2, 6)
  lengths = jnp.array([4, 6])
  r = reverse_within_length(x, lengths)
  np.testing.assert_array_equal(r, [[3, 2, 1, 0, 4, 5], [11, 10, 9, 8, 7, 6]])
  np.testing.assert_array_equal(reverse_within_length(r, lengths), x)


def loop_lstm(gates_x, w_hh):
  """Time-major [L, Z, B, 4H] -> [L, Z, B, H] with a Python loop (autodiff reference)."""
  z, b, four_h = gates_x.shape[1:]
  h = c = jnp.zeros((z, b, four_h // 4), gates_x.dtype)
  out = []
  for t in range(gates_x.shape[0]):
    i, f, g, o = jnp.split(gates_x[t] + jnp.einsum('zbh,zhg->zbg', h, w_hh), 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    out.append(h)
  return jnp.stack(out)


def test_lstm_scan_value_and_gradient_match_autodiff_of_a_loop():
  with jax.enable_x64(True):
    rng = np.random.default_rng(1)
    gates_x = jnp.asarray(rng.normal(size=(6, 2, 3, 20)))
    w_hh = jnp.asarray(rng.normal(size=(2, 5, 20)) * 0.5)
    weights = jnp.asarray(rng.normal(size=(6, 2, 3, 5)))
    np.testing.assert_allclose(lstm_scan(gates_x, w_hh), loop_lstm(gates_x, w_hh), atol=1e-12)

    def loss(f):
      return lambda g, w: jnp.sum(f(g, w) * weights)

    fast = jax.grad(loss(lstm_scan), argnums=(0, 1))(gates_x, w_hh)
    slow = jax.grad(loss(loop_lstm), argnums=(0, 1))(gates_x, w_hh)
    for a, b in zip(fast, slow):
      np.testing.assert_allclose(a, b, atol=1e-10)


def loop_bilstm(params, embedded, lengths):
  """The whole encoder with Python loops per row and direction (autodiff reference)."""
  rows = []
  for row, n in enumerate(lengths):
    xs = embedded[row, :n]
    directions = []
    for z, seq in ((0, xs), (1, xs[::-1])):
      bias = params['bias'][z] + (params['bias_hh'][z] if 'bias_hh' in params else 0.0)
      gates_x = (seq @ params['w_ih'][z] + bias[None, :])[:, None, None, :]
      out = loop_lstm(gates_x, params['w_hh'][z][None])[:, 0, 0]
      directions.append(out if z == 0 else out[::-1])
    hidden = jnp.concatenate(directions, -1)
    rows.append(jnp.pad(hidden, ((0, embedded.shape[1] - n), (0, 0))))
  return jnp.stack(rows)


def test_bilstm_encoder_gradients_match_autodiff_of_loops():
  """Reverse mode through the within-length reversal, the barrier and the masks."""
  with jax.enable_x64(True):
    rng = np.random.default_rng(2)
    lengths = np.array([6, 2, 4])
    embedded = jnp.asarray(rng.normal(size=(3, 7, 4)))
    encoder = BiLSTMEncoder(hidden=3)
    params = jax.tree.map(lambda x: jnp.asarray(x, jnp.float64),
                          encoder.init(jax.random.PRNGKey(0), embedded.astype(jnp.float32),
                                       jnp.asarray(lengths))['params'])
    weights = jnp.asarray(rng.normal(size=(3, 7, 6)))

    def fast(p, e):
      return jnp.sum(encoder.apply({'params': p}, e, jnp.asarray(lengths)) * weights)

    def slow(p, e):
      return jnp.sum(loop_bilstm(p, e, lengths) * weights)

    np.testing.assert_allclose(fast(params, embedded), slow(params, embedded), rtol=1e-12)
    g_fast = jax.grad(fast, argnums=(0, 1))(params, embedded)
    g_slow = jax.grad(slow, argnums=(0, 1))(params, embedded)
    for a, b in zip(jax.tree.leaves(g_fast), jax.tree.leaves(g_slow)):
      np.testing.assert_allclose(a, b, atol=1e-10)


def test_two_biases_are_pytorchs_each_drawn_and_each_given_the_whole_gradient():
  """PyTorch's nn.LSTM (J&W's) has an input and a recurrent bias, each drawn
  U(±1/√H) and each a parameter: both get the gates' whole gradient, so under
  Adam their sum moves about twice as far as one vector would."""
  rng = np.random.default_rng(1)
  lengths = jnp.asarray([5, 3])
  embedded = jnp.asarray(rng.normal(size=(2, 5, 4)), jnp.float32)
  two, one = BiLSTMEncoder(hidden=16), BiLSTMEncoder(hidden=16, biases=1)
  p2 = two.init(jax.random.PRNGKey(0), embedded, lengths)['params']
  p1 = one.init(jax.random.PRNGKey(0), embedded, lengths)['params']
  assert set(p2) == {'w_ih', 'w_hh', 'bias', 'bias_hh'} and set(p1) == {'w_ih', 'w_hh', 'bias'}
  bound = 1 / np.sqrt(16)
  for b in (p2['bias'], p2['bias_hh']):
    assert np.abs(np.asarray(b)).max() <= bound and np.asarray(b).std() > bound / 3
  assert not np.allclose(p2['bias'], p2['bias_hh'])  # drawn apart
  # One vector holding the sum computes the same states.
  folded = {**{k: p2[k] for k in ('w_ih', 'w_hh')}, 'bias': p2['bias'] + p2['bias_hh']}
  np.testing.assert_allclose(one.apply({'params': folded}, embedded, lengths),
                             two.apply({'params': p2}, embedded, lengths), atol=1e-6)
  grads = jax.grad(lambda p: jnp.sum(two.apply({'params': p}, embedded, lengths) ** 2))(p2)
  np.testing.assert_allclose(grads['bias'], grads['bias_hh'], rtol=1e-6)
  assert np.abs(np.asarray(grads['bias'])).max() > 0
