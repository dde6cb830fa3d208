"""J&W's `Trainer.train`, epoch by epoch, resumable inside training.

J&W's trainers (`Trainers/TrainerBC.py`, `Trainers/TrainerQA.py`) run all
epochs in one call: a seed killed in epoch 60 of bAbI's 100 (about 2 h on one
core) loses them all, and a session or a GPU chunk shorter than one seed's
training never finishes it. `train` is their loop step for step — train one
epoch, the dev metrics, save on a strictly better `save_on_metric` never at
epoch 0, `save_values`, a line in `epoch.txt` — with a checkpoint after each
epoch: every module's and optimizer's state, the Python, NumPy and PyTorch
random states (their batch order is `sklearn.utils.shuffle` on NumPy's global
state; dropout draws from PyTorch's), the best metric so far, the model folder
and `epoch.txt`'s length. A resumed seed therefore gives the numbers an
uninterrupted one gives (`tests/benchmarks/test_jain_wallace_training.py`).
Imported by the children (attn-jax is not imported here).
"""

import os
import random
import time

STATE_FILE = 'attn_jax_training_state.pt'


def epoch_metrics(trainer, train_data, dev_data) -> dict:
  """One epoch of J&W's `Trainer.train`: train on `train_data`, then the metrics
  on `dev_data`. QA's data (`TrainerQA`) holds passages, questions and answers
  (P, Q, A); classification's (`TrainerBC`) holds X and y."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  model = trainer.model
  if hasattr(train_data, 'A'):
    model.train(train_data)
    predictions, _ = model.evaluate(dev_data)
    return trainer.metrics(dev_data.A, np.array(predictions))
  model.train(train_data.X, train_data.y)
  predictions, _ = model.evaluate(dev_data.X)
  return trainer.metrics(dev_data.y, np.array(predictions))


def _parts(model) -> tuple:
  """The model's modules and optimizers by attribute name (J&W's models hold
  them as attributes: `encoder`/`decoder` or `Pencoder`/`Qencoder`/`decoder`,
  and one or three Adam optimizers)."""
  import torch  # pylint: disable=g-import-not-at-top
  modules = {k: v for k, v in vars(model).items() if isinstance(v, torch.nn.Module)}
  optimizers = {k: v for k, v in vars(model).items() if isinstance(v, torch.optim.Optimizer)}
  return modules, optimizers


def _save_state(model, path: str, state: dict) -> None:
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  modules, optimizers = _parts(model)
  state = {**state, 'dirname': model.dirname,
           'modules': {k: m.state_dict() for k, m in modules.items()},
           'optimizers': {k: o.state_dict() for k, o in optimizers.items()},
           'random': {'python': random.getstate(), 'numpy': np.random.get_state(),
                      'torch': torch.get_rng_state(),
                      'cuda': torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}}
  torch.save(state, path + '.tmp')
  os.replace(path + '.tmp', path)  # a kill mid-write leaves the previous epoch's state


def _restore_state(model, path: str) -> dict:
  """Puts the checkpoint at `path` into `model` and the random generators;
  returns its counters (epoch, best metric, seconds, resumed_at)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  state = torch.load(path, weights_only=False)
  modules, optimizers = _parts(model)
  for k, m in modules.items():
    m.load_state_dict(state['modules'][k])
  for k, o in optimizers.items():
    o.load_state_dict(state['optimizers'][k])
  model.dirname = state['dirname']
  random.setstate(state['random']['python'])
  np.random.set_state(state['random']['numpy'])
  torch.set_rng_state(state['random']['torch'])
  if state['random']['cuda'] is not None and torch.cuda.is_available():
    torch.cuda.set_rng_state_all(state['random']['cuda'])
  log = os.path.join(model.dirname, 'epoch.txt')
  if os.path.exists(log) and os.path.getsize(log) > state['log_bytes']:
    with open(log, 'r+') as f:  # a line written after the checkpoint: its epoch runs again
      f.truncate(state['log_bytes'])
  return {k: state[k] for k in ('epoch', 'best_metric', 'seconds', 'resumed_at', 'log_bytes')}


def train(trainer, train_data, dev_data, epochs: int, save_on_metric: str, state_dir: str,
          stop_after: int = None) -> dict:
  """J&W's `Trainer.train(train_data, dev_data, n_iters=epochs, save_on_metric)`,
  resumable: continues from `state_dir/STATE_FILE` when a killed call left one.

  Args:
    trainer: J&W's `Trainer` (BC or QA), built after seeding.
    train_data, dev_data: their data holders.
    epochs: their `n_iters`.
    save_on_metric: 'roc_auc' (classification) or 'accuracy' (QA).
    state_dir: where the checkpoint lives (not J&W's experiment folder, whose
      entries their `get_latest_model` lists as model folders).
    stop_after: stop (as a kill would) after this many epochs in all; for tests.

  Returns:
    {'seconds': training seconds over every call, 'resumed_at': [epochs done
    when each resuming call began], 'done': whether all epochs ran}.
  """
  model, path = trainer.model, os.path.join(state_dir, STATE_FILE)
  counters = {'epoch': 0, 'best_metric': 0.0, 'seconds': 0.0, 'resumed_at': [], 'log_bytes': 0}
  if os.path.exists(path):
    counters = _restore_state(model, path)
    counters['resumed_at'] = counters['resumed_at'] + [counters['epoch']]
    print(f'resuming J&W training after epoch {counters["epoch"]} of {epochs}', flush=True)
  tick = time.time()
  for i in range(counters['epoch'], epochs):
    if stop_after is not None and i >= stop_after:
      break
    metrics = epoch_metrics(trainer, train_data, dev_data)
    if trainer.display_metrics:
      from Transparency.common_code.metrics import print_metrics  # pylint: disable=g-import-not-at-top
      print_metrics(metrics)
    metric = metrics[save_on_metric]
    save_model = bool(metric > counters['best_metric'] and i > 0)
    if save_model:
      counters['best_metric'] = metric
    print(('Model Saved on ' if save_model else 'Model not saved on '), save_on_metric, metric, flush=True)
    dirname = model.save_values(save_model=save_model)
    with open(os.path.join(dirname, 'epoch.txt'), 'a') as f:
      f.write(str(metrics) + '\n')
    counters.update(epoch=i + 1, log_bytes=os.path.getsize(os.path.join(dirname, 'epoch.txt')))
    _save_state(model, path, {**counters, 'seconds': counters['seconds'] + time.time() - tick})
  seconds = counters['seconds'] + time.time() - tick
  done = counters['epoch'] >= epochs
  return {'seconds': round(seconds, 1), 'resumed_at': counters['resumed_at'], 'done': done}


def clear(state_dir: str) -> None:
  """Removes the checkpoint once the trained model is evaluated (it holds the
  optimizer's state too: several times the model's size)."""
  path = os.path.join(state_dir, STATE_FILE)
  if os.path.exists(path):
    os.remove(path)
