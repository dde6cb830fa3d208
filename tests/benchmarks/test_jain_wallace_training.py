"""benchmarks/original_code/jain_wallace_training.py: J&W's `Trainer.train` loop
run epoch by epoch gives what their loop gives, and a seed stopped between
epochs (or after writing an epoch's line but before its checkpoint) resumes to
the same weights, saved model and `epoch.txt` as an uninterrupted one.

The model here is a small stand-in with J&W's model's shape (modules and an
AMSGrad Adam as attributes, `sklearn.utils.shuffle`-style batch order from
NumPy's global state, dropout from PyTorch's, `save_values` into a
time-named folder), in both data layouts: QA (P, Q, A) and classification (X, y).
"""

import itertools
import os
import random
import sys
import types

import numpy as np
import pytest
import helpers

torch = pytest.importorskip(
    'torch', reason='needs PyTorch, the [original_code] extra (pip install -e ".[original_code]"); CI installs [test] only')
sys.path.insert(0, os.path.join(helpers.ROOT, 'benchmarks', 'original_code'))
import jain_wallace_training  # pylint: disable=g-import-not-at-top,wrong-import-position

_NAMES = itertools.count()


class StandIn:
  """J&W's `Model` in miniature (their `Question_Answering.Model` /
  `Binary_Classification.Model` layout)."""

  def __init__(self, basepath, qa):
    self.qa = qa
    self.Pencoder = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Dropout(0.3))
    self.decoder = torch.nn.Linear(8, 3)
    params = list(self.Pencoder.parameters()) + list(self.decoder.parameters())
    self.optim = torch.optim.Adam(params, weight_decay=1e-5, amsgrad=True)
    self.dirname = os.path.join(basepath, 'exp', f'model_{next(_NAMES)}')  # their time.ctime() name

  def _fit(self, x, y):
    self.Pencoder.train()
    order = np.random.permutation(len(x))  # their batch order: NumPy's global state
    for start in range(0, len(x), 4):
      batch = order[start:start + 4]
      logits = self.decoder(self.Pencoder(torch.tensor(x[batch])))
      loss = torch.nn.functional.cross_entropy(logits, torch.tensor(y[batch]))
      self.optim.zero_grad()
      loss.backward()
      self.optim.step()

  def train(self, data, y=None):
    self._fit(*((data.P, data.A) if self.qa else (data, y)))

  def evaluate(self, data):
    self.Pencoder.eval()
    x = data.P if self.qa else data
    with torch.no_grad():
      probabilities = torch.softmax(self.decoder(self.Pencoder(torch.tensor(x))), -1).numpy()
    return list(probabilities), None

  def save_values(self, save_model=True):
    os.makedirs(self.dirname, exist_ok=True)
    if save_model:
      torch.save({'enc': self.Pencoder.state_dict(), 'dec': self.decoder.state_dict()},
                 os.path.join(self.dirname, 'model.th'))
    return self.dirname


def _data(qa, seed):
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(30, 4)).astype(np.float32)
  y = rng.randint(0, 3, 30)
  if qa:
    return types.SimpleNamespace(P=x, Q=x, A=y)
  return types.SimpleNamespace(X=x, y=y)


def _trainer(basepath, qa, seed=0):
  random.seed(seed)
  np.random.seed(seed)
  torch.manual_seed(seed)
  model = StandIn(basepath, qa)
  accuracy = lambda truth, predicted: {'accuracy': float((predicted.argmax(-1) == truth).mean())}
  return types.SimpleNamespace(model=model, metrics=accuracy, display_metrics=False)


def _their_loop(trainer, train_data, dev_data, n_iters, save_on_metric):
  """J&W's `Trainer.train` as their code has it (TrainerQA; TrainerBC calls
  `model.train(X, y)` and `evaluate(X)`), for the equivalence below."""
  best_metric = 0.0
  for i in range(n_iters):
    if hasattr(train_data, 'A'):
      trainer.model.train(train_data)
      predictions, _ = trainer.model.evaluate(dev_data)
      metrics = trainer.metrics(dev_data.A, np.array(predictions))
    else:
      trainer.model.train(train_data.X, train_data.y)
      predictions, _ = trainer.model.evaluate(dev_data.X)
      metrics = trainer.metrics(dev_data.y, np.array(predictions))
    metric = metrics[save_on_metric]
    save_model = metric > best_metric and i > 0
    if save_model:
      best_metric = metric
    dirname = trainer.model.save_values(save_model=save_model)
    with open(dirname + '/epoch.txt', 'a') as f:
      f.write(str(metrics) + '\n')


def _outcome(trainer):
  saved = torch.load(os.path.join(trainer.model.dirname, 'model.th'))
  with open(os.path.join(trainer.model.dirname, 'epoch.txt')) as f:
    log = f.read()
  weights = {**trainer.model.Pencoder.state_dict(), **trainer.model.decoder.state_dict()}
  return saved, log, weights


def _assert_same(a, b):
  (saved_a, log_a, weights_a), (saved_b, log_b, weights_b) = a, b
  assert log_a == log_b
  for part in ('enc', 'dec'):
    for k in saved_a[part]:
      assert torch.equal(saved_a[part][k], saved_b[part][k]), (part, k)
  for k in weights_a:
    assert torch.equal(weights_a[k], weights_b[k]), k


@pytest.mark.parametrize('qa', [True, False], ids=['qa', 'classification'])
def test_the_epoch_loop_is_jws_and_a_stopped_seed_resumes_to_the_same_model(tmp_path, qa):
  train_data, dev_data = _data(qa, 1), _data(qa, 2)
  theirs = _trainer(str(tmp_path / 'theirs'), qa)
  _their_loop(theirs, train_data, dev_data, 6, 'accuracy')
  assert len(open(os.path.join(theirs.model.dirname, 'epoch.txt')).readlines()) == 6

  whole = _trainer(str(tmp_path / 'whole'), qa)
  result = jain_wallace_training.train(whole, train_data, dev_data, 6, 'accuracy', str(tmp_path / 'whole'))
  assert result['done'] and result['resumed_at'] == []
  _assert_same(_outcome(whole), _outcome(theirs))

  state = str(tmp_path / 'cut')
  first = _trainer(state, qa)
  assert not jain_wallace_training.train(first, train_data, dev_data, 6, 'accuracy', state, stop_after=2)['done']
  # Killed in epoch 3, after its line reached epoch.txt but before its checkpoint:
  with open(os.path.join(first.model.dirname, 'epoch.txt'), 'a') as f:
    f.write("{'accuracy': 0.0}\n")
  np.random.seed(123)  # a new process: other random states, another model folder, other weights
  second = _trainer(state, qa, seed=99)
  assert not jain_wallace_training.train(second, train_data, dev_data, 6, 'accuracy', state, stop_after=4)['done']
  third = _trainer(state, qa, seed=7)
  result = jain_wallace_training.train(third, train_data, dev_data, 6, 'accuracy', state)
  assert result['done'] and result['resumed_at'] == [2, 4]
  assert third.model.dirname == first.model.dirname
  _assert_same(_outcome(third), _outcome(theirs))

  jain_wallace_training.clear(state)
  assert not os.path.exists(os.path.join(state, jain_wallace_training.STATE_FILE))
