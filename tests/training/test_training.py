"""Loss, optimiser, train step and a tiny end-to-end run."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from attn_jax.core import environment
from attn_jax.workdirs import initial_params as initial_params_lib
from attn_jax.data.batching import make_batch
from attn_jax.models import build_model
from attn_jax.training import loss as loss_lib
from attn_jax.training import optimizer as optimizer_lib
from attn_jax.training import step as step_lib
from conftest import tiny_model_config
import helpers


def test_weighted_bce_is_a_weighted_sum():
  logits = jnp.array([2.0, -1.0, 0.5])
  labels = jnp.array([1.0, 0.0, 1.0])
  weights = jnp.array([3.0, 1.0, 0.0])
  p = 1 / (1 + np.exp(-np.array([2.0, -1.0, 0.5])))
  expected = -3.0 * np.log(p[0]) - 1.0 * np.log(1 - p[1])
  np.testing.assert_allclose(loss_lib.weighted_bce_sum(logits, labels, weights), expected, rtol=1e-6)


@pytest.mark.usefixtures('optax_promotion')
@pytest.mark.parametrize('decay_attention', [False, True])
def test_weight_decay_spares_the_attention_parameters_unless_told(decay_attention):
  """J&W's classifier gives its attention no weight decay; their QA/NLI model
  decays every parameter (`train.decay_attention`, on for a model with a query)."""
  model = build_model(tiny_model_config(), 30)
  params = model.init(jax.random.PRNGKey(0))
  cfg = helpers.synthetic_config().train
  cfg.weight_decay, cfg.decay_attention = 0.1, decay_attention
  tx = optimizer_lib.make_optimizer(cfg)
  zeros = jax.tree.map(jnp.zeros_like, params)
  updates, _ = tx.update(zeros, tx.init(params), params)
  for name, subtree in updates.items():
    for update, param in zip(jax.tree.leaves(subtree), jax.tree.leaves(params[name])):
      if name == 'attention' and not decay_attention:
        assert float(jnp.abs(update).max()) == 0.0
      else:
        # L2 decay enters the gradient (wd * p) before Adam normalises it, so the
        # first step is -lr * sign(p) (PyTorch Adam), not AdamW's -lr * wd * p.
        big = jnp.abs(param) > 1e-3
        np.testing.assert_allclose(jnp.where(big, update, 0.0),
                                   jnp.where(big, -cfg.learning_rate * jnp.sign(param), 0.0),
                                   rtol=1e-3, atol=1e-9)


@pytest.mark.usefixtures('optax_promotion')
def test_the_attention_scorer_steps_attention_lr_scale_times_further():
  model = build_model(tiny_model_config(), 30)
  params = model.init(jax.random.PRNGKey(0))
  cfg = helpers.synthetic_config().train
  cfg.weight_decay, cfg.attention_lr_scale = 0.0, 10.0
  tx = optimizer_lib.make_optimizer(cfg)
  ones = jax.tree.map(jnp.ones_like, params)
  updates, _ = tx.update(ones, tx.init(params), params)
  # Adam's first step is -lr * sign(g) for every parameter: 10 lr on the scorer.
  for name, subtree in updates.items():
    lr = cfg.learning_rate * (10.0 if name == 'attention' else 1.0)
    for update in jax.tree.leaves(subtree):
      np.testing.assert_allclose(update, -lr, rtol=1e-4)


def test_a_qa_model_decays_its_attention_and_a_classifier_does_not():
  from attn_jax import config as config_lib  # pylint: disable=g-import-not-at-top
  assert config_lib.default_config('babi1', 'average').train.decay_attention
  assert config_lib.default_config('snli', 'bilstm').train.decay_attention
  assert not config_lib.default_config('sst', 'bilstm').train.decay_attention


def batch(seed=0):
  rng = np.random.default_rng(seed)
  docs = [np.array([2] + list(rng.integers(4, 30, size=rng.integers(3, 10))) + [3], np.int32) for _ in range(8)]
  return make_batch(docs, rng.integers(0, 2, 8).astype(np.float32), np.arange(8), 8, (16,), 1.5)


@pytest.mark.usefixtures('optax_promotion')
def test_train_step_lowers_the_loss_on_a_batch():
  model = build_model(tiny_model_config(), 30)
  tx = optimizer_lib.make_optimizer(helpers.synthetic_config().train)
  state = step_lib.init_state(tx, model.init(jax.random.PRNGKey(0)))
  step = jax.jit(step_lib.make_train_step(model, tx))
  b = batch()
  first = None
  for _ in range(150):
    state, loss = step(state, b)
    first = float(loss) if first is None else first
  assert float(loss) < 0.5 * first and int(state.step) == 150


@pytest.mark.usefixtures('optax_promotion')
def test_several_seeds_train_as_one_vmapped_program():
  model = build_model(tiny_model_config(), 30)
  tx = optimizer_lib.make_optimizer(helpers.synthetic_config().train)
  states = [step_lib.init_state(tx, model.init(jax.random.PRNGKey(s))) for s in (0, 1)]
  stacked = jax.tree.map(lambda *x: jnp.stack(x), *states)
  train_step = step_lib.make_train_step(model, tx)
  b = batch(1)
  together, losses = jax.jit(jax.vmap(train_step, in_axes=(0, None)))(stacked, b)
  for i, state in enumerate(states):
    alone, loss = jax.jit(train_step)(state, b)
    np.testing.assert_allclose(losses[i], loss, rtol=1e-5)
    for a, t in zip(jax.tree.leaves(alone.params), jax.tree.leaves(together.params)):
      np.testing.assert_allclose(t[i], a, atol=1e-6)


@pytest.mark.usefixtures('optax_promotion')
def test_tiny_run_lowers_the_loss_and_writes_its_results(tmp_path, monkeypatch):
  from attn_jax.training import trainer  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(trainer, 'ESTIMATE_AFTER_SECONDS', 0.0)  # say it after the first compiled step
  cfg = helpers.synthetic_config(train__epochs=4, data__max_docs_per_split=None)
  logs = []
  results = helpers.run(cfg, tmp_path, logs)
  said = [line for line in logs if line.startswith('training: about ')]
  assert len(said) == 1 and 'steps/s, measured on the steps so far' in said[0], logs
  # The rate it measured says, before the next training of this model starts, how long it will take.
  logs.clear()
  helpers.run(cfg, tmp_path / 'again', logs)
  assert any(re.match(r'training: [\d,]+ steps, about .* an earlier training of this model measured here', line)
             for line in logs), logs
  records = helpers.history(tmp_path)
  assert len(records) == 4 and records[-1]['train_loss'] < records[0]['train_loss']
  for key in ('accuracy', 'f1_pos', 'roc_auc', 'pr_auc', 'selected_epoch'):
    assert key in results
  assert results['selected_epoch'] >= 1  # epoch 0 is never selected
  assert results['trained_in'] == [environment.describe()]  # where it trained, once: nothing resumed
  for name in ('config.json', 'vocab.json', 'data.json', 'eval.json', 'metrics.jsonl',
               'predictions_test.npz', 'training_curves.png', 'training_curves.svg'):
    assert (tmp_path / name).exists(), name
  with np.load(tmp_path / 'predictions_test.npz') as f:
    assert f['probs'].shape == (48,) and f['labels'].shape == (48,)


def test_a_word_vector_file_initialises_the_embeddings(tmp_path):
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  cfg = helpers.synthetic_config()
  data = load_dataset(cfg.data)
  words = ['good0', 'bad1', 'w0003']
  rows = {w: np.arange(cfg.model.embed_dim, dtype=np.float32) * (i + 1) for i, w in enumerate(words)}
  (tmp_path / 'vectors.vec').write_text(
      f'{len(rows)} {cfg.model.embed_dim}\n'
      + ''.join(w + ' ' + ' '.join(f'{x:g}' for x in v) + '\n' for w, v in rows.items()))
  cfg.model.embeddings_file = str(tmp_path / 'vectors.vec')
  model = build_model(cfg.model, len(data.vocab))
  table = initial_params_lib.initial_params(model, cfg, data, lambda _: None)['embedding']['table']
  for word, vector in rows.items():
    np.testing.assert_array_equal(table[data.vocab.encode([word])[1]], vector)
  assert not np.asarray(table[data.vocab.encode(['w0004'])[1]]).any()  # not in the file: zero


def _torch_amsgrad_loop(gradients, lr, weight_decay, b1=0.9, b2=0.999, eps=1e-8):
  """torch.optim.Adam(amsgrad=True)'s documented algorithm, float64 loops."""
  p = np.zeros_like(gradients[0], dtype=np.float64)
  m, v, v_max = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
  for t, g in enumerate(gradients, 1):
    g = g + weight_decay * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    v_max = np.maximum(v_max, v)
    p = p - (lr / (1 - b1 ** t)) * m / (np.sqrt(v_max) / np.sqrt(1 - b2 ** t) + eps)
  return p


def _decaying_gradients(steps=60, seed=0):
  rng = np.random.default_rng(seed)
  return [rng.normal(size=7) * s for s in np.geomspace(10.0, 0.1, steps)]


def _run(tx, gradients):
  x = jnp.zeros(gradients[0].shape, jnp.float32)
  state = tx.init(x)
  for g in gradients:
    updates, state = tx.update(jnp.asarray(g, jnp.float32), state, x)
    x = optax.apply_updates(x, updates)
  return np.asarray(x)


def test_torch_amsgrad_is_pytorchs_rule():
  gradients = _decaying_gradients()
  expected = _torch_amsgrad_loop(gradients, lr=1e-3, weight_decay=0.0)
  np.testing.assert_allclose(_run(optimizer_lib.torch_amsgrad(1e-3), gradients), expected,
                             rtol=2e-5, atol=1e-9)


@pytest.mark.usefixtures('optax_promotion')
def test_optax_amsgrad_is_not_pytorchs_rule():
  # optax's AMSGrad keeps the max of the bias-corrected moment: on decaying
  # gradients its steps fall behind (the deviation found against J&W's code).
  gradients = _decaying_gradients()
  expected = _torch_amsgrad_loop(gradients, lr=1e-3, weight_decay=0.0)
  assert np.abs(_run(optax.amsgrad(1e-3), gradients) - expected).max() > 1e-3


def test_the_jw_optimizer_with_decay_is_torch_adam_amsgrad_with_weight_decay():
  cfg = helpers.synthetic_config().train
  cfg.optimizer, cfg.weight_decay, cfg.learning_rate = 'torch_amsgrad', 0.01, 1e-3
  tx = optimizer_lib.make_optimizer(cfg)
  gradients = _decaying_gradients(40, seed=1)
  params = {'encoder': jnp.zeros(7), 'attention': jnp.zeros(7)}
  state = tx.init(params)
  for g in gradients:
    grads = {'encoder': jnp.asarray(g, jnp.float32), 'attention': jnp.asarray(g, jnp.float32)}
    updates, state = tx.update(grads, state, params)
    params = optax.apply_updates(params, updates)
  np.testing.assert_allclose(params['encoder'], _torch_amsgrad_loop(gradients, 1e-3, 0.01), rtol=2e-5, atol=1e-9)
  np.testing.assert_allclose(params['attention'], _torch_amsgrad_loop(gradients, 1e-3, 0.0), rtol=2e-5, atol=1e-9)


def test_torch_amsgrad_equals_torch_itself_when_installed():
  torch = pytest.importorskip(
      'torch', reason='needs PyTorch, the [bench] extra (pip install -e ".[bench]"); CI installs [test] only')
  gradients = _decaying_gradients(50, seed=2)
  p = torch.zeros(7, dtype=torch.float64, requires_grad=True)
  opt = torch.optim.Adam([p], lr=1e-3, weight_decay=0.01, amsgrad=True)
  for g in gradients:
    opt.zero_grad()
    p.grad = torch.tensor(g)
    opt.step()
  np.testing.assert_allclose(_torch_amsgrad_loop(gradients, 1e-3, 0.01), p.detach().numpy(), rtol=1e-12)
