"""The model axis: M models as one vmapped program equal M separate runs."""

import json
import os

import jax
import numpy as np
import pytest

from attn_jax.workdirs import initial_params as initial_params_lib
from attn_jax.workdirs import model_axis
from attn_jax.core.errors import ConfigError, TrainingError
from attn_jax.workdirs.restore import restore
import helpers

pytestmark = [pytest.mark.usefixtures('optax_promotion'), pytest.mark.slow]  # slow: scheduled first
SWEEP = 'seed=0,1 train.learning_rate=0.003,0.01'
NAMES = ('seed0_learning_rate0.003', 'seed0_learning_rate0.01', 'seed1_learning_rate0.003',
         'seed1_learning_rate0.01')


def separate(tmp_path, seed, lr):
  """The same model trained alone: its own seed and rate, the program's batch order."""
  cfg = helpers.synthetic_config(top__seed=seed, train__learning_rate=lr, train__batch_seed=0)
  workdir = tmp_path / f'alone_{seed}_{lr}'
  helpers.run(cfg, workdir)
  return workdir


@pytest.fixture(scope='module')
def program(tmp_path_factory):
  """Four models as one vmapped program (CPU's default is the loop)."""
  workdir = tmp_path_factory.mktemp('program')
  with jax.numpy_dtype_promotion('standard'):
    results = helpers.run(helpers.synthetic_config(top__sweep=SWEEP, train__model_axis='vmap'), workdir)
  return workdir, results


def test_the_sweep_trains_one_model_per_combination(program):
  workdir, results = program
  assert sorted(os.listdir(workdir / 'checkpoints')) == ['latest']  # the stacked state only
  assert [r['models_in_program'] for r in results] == [4] * 4
  for name in NAMES:
    r = restore(str(workdir / name))  # an ordinary model
    assert r.config.sweep == '' and r.config.train.batch_seed == 0
    assert (workdir / name / 'eval.json').exists() and (workdir / name / 'metrics.jsonl').exists()
  seeds_lrs = {(restore(str(workdir / n)).config.seed, restore(str(workdir / n)).config.train.learning_rate)
               for n in NAMES}
  assert seeds_lrs == {(0, 0.003), (0, 0.01), (1, 0.003), (1, 0.01)}


def test_each_model_equals_its_separate_run(program, tmp_path):
  workdir, _ = program
  for name, (seed, lr) in [(NAMES[1], (0, 0.01)), (NAMES[2], (1, 0.003))]:
    alone = separate(tmp_path, seed, lr)
    together = workdir / name
    assert helpers.history(together)[-1]['epoch'] == helpers.history(alone)[-1]['epoch']
    for a, b in zip(helpers.history(together), helpers.history(alone)):
      assert a['epoch'] == b['epoch']
      np.testing.assert_allclose(a['train_loss'], b['train_loss'], rtol=1e-4)
      np.testing.assert_allclose(a['dev_roc_auc'], b['dev_roc_auc'], atol=1e-6)
    x, y = restore(str(together)), restore(str(alone))
    assert x.selection['epoch'] == y.selection['epoch']
    for p, q in zip(jax.tree.leaves(x.params), jax.tree.leaves(y.params)):
      np.testing.assert_allclose(p, q, atol=2e-5)
    e, f = helpers.eval_without_timing(together), helpers.eval_without_timing(alone)
    for key in ('accuracy', 'roc_auc', 'selected_epoch'):
      np.testing.assert_allclose(e[key], f[key], atol=1e-6)


def test_looped_models_are_bit_identical_to_separate_runs(tmp_path):
  results = helpers.run(helpers.synthetic_config(top__sweep='seed=0,1', train__model_axis='loop'),
                        tmp_path / 'looped')
  alone = separate(tmp_path, 1, helpers.synthetic_config().train.learning_rate)
  assert helpers.history(tmp_path / 'looped' / 'seed1') == helpers.history(alone)
  assert {**results[1], 'models_in_program': 1} == {
      **helpers.eval_without_timing(alone), **{k: results[1][k] for k in helpers.TIMING_KEYS}}
  for p, q in zip(jax.tree.leaves(restore(str(tmp_path / 'looped' / 'seed1')).params),
                  jax.tree.leaves(restore(str(alone)).params)):
    np.testing.assert_array_equal(p, q)


def test_a_rerun_restores_every_model(program):
  workdir, results = program
  logs = []
  again = helpers.run(helpers.synthetic_config(top__sweep=SWEEP, train__model_axis='loop'), workdir, logs)
  assert any('training already finished' in line for line in logs)
  strip = lambda r: {k: v for k, v in r.items() if k not in helpers.TIMING_KEYS}
  assert [strip(r) for r in again] == [strip(r) for r in results]


@pytest.mark.heavy  # CI margin; test_checkpoints.py's NaN check (the whole program) stays quick
def test_a_model_whose_loss_breaks_stops_alone(tmp_path, monkeypatch):
  cfg = helpers.synthetic_config(top__sweep='seed=0,1')
  real = initial_params_lib.initial_params

  def poisoned(model, member_cfg, dataset, log, workdir=None):
    params = real(model, member_cfg, dataset, log, workdir)
    if member_cfg.seed == 1:
      params['embedding']['table'] = params['embedding']['table'].at[5].set(np.inf)
    return params

  monkeypatch.setattr(initial_params_lib, 'initial_params', poisoned)
  logs = []
  with pytest.raises(TrainingError, match=r'1 of 2 models became non-finite.*seed1 \(epoch 1 of'):
    helpers.run(cfg, tmp_path, logs)
  assert (tmp_path / 'seed0' / 'eval.json').exists() and not (tmp_path / 'seed1' / 'eval.json').exists()
  monkeypatch.setattr(initial_params_lib, 'initial_params', real)
  alone = separate(tmp_path, 0, cfg.train.learning_rate)
  together, separately = helpers.eval_without_timing(tmp_path / 'seed0'), helpers.eval_without_timing(alone)
  assert together['models_in_program'] == 2 and together['selected_epoch'] == separately['selected_epoch']
  for key in ('accuracy', 'roc_auc', 'loss'):
    np.testing.assert_allclose(together[key], separately[key], rtol=1e-6)


@pytest.mark.parametrize('sweep, message', [
    ('model.hidden_dim=8,16', 'changes the program itself'),
    ('seed', 'is not KEY=V1,V2'),
    ('seed=0,0', 'repeats a value'),
    ('seed=a,b', "'a' is not a int"),
    ('sed=0,1', "did you mean 'seed'"),
])
def test_bad_sweeps_are_refused_before_any_work(tmp_path, sweep, message):
  with pytest.raises(ConfigError, match=message):
    helpers.run(helpers.synthetic_config(top__sweep=sweep), tmp_path)
  assert not os.listdir(tmp_path)


def test_sweep_values_name_and_configure_each_model():
  cfg = helpers.synthetic_config(top__sweep='seed=3,4 model.embed_init_std=0.1,1.0', top__seed=7)
  values = model_axis.sweep_values(cfg)
  assert values == [{'seed': 3, 'model.embed_init_std': 0.1}, {'seed': 3, 'model.embed_init_std': 1.0},
                    {'seed': 4, 'model.embed_init_std': 0.1}, {'seed': 4, 'model.embed_init_std': 1.0}]
  member = model_axis.model_config(cfg, values[1])
  assert model_axis.model_name(values[1]) == 'seed3_embed_init_std1'
  assert (member.seed, member.model.embed_init_std, member.train.batch_seed, member.sweep) == (3, 1.0, 7, '')
  assert json.loads(cfg.to_json())['seed'] == 7  # the base config is unchanged


@pytest.mark.heavy
def test_early_stopping_is_the_same_looped_or_vmapped(tmp_path):
  """A model stopped by `train.patience` keeps its selection and step count
  whichever way the program runs; the others go on."""
  runs = {}
  for kind in ('loop', 'vmap'):
    # Seeds where, at this learning rate, one model stops before another.
    cfg = helpers.synthetic_config(top__sweep='seed=2,3,4', train__model_axis=kind,
                                   train__patience=1, train__epochs=5, train__learning_rate=0.03)
    helpers.run(cfg, tmp_path / kind)
    runs[kind] = [(helpers.history(tmp_path / kind / f'seed{s}'),
                   restore(str(tmp_path / kind / f'seed{s}')).selection) for s in (2, 3, 4)]
  for (h1, s1), (h2, s2) in zip(runs['loop'], runs['vmap']):
    assert [(r['epoch'], r['step']) for r in h1] == [(r['epoch'], r['step']) for r in h2]
    assert (s1['epoch'], s1['step']) == (s2['epoch'], s2['step'])
  lengths = [len(h) for h, _ in runs['loop']]
  assert min(lengths) < 5 and max(lengths) > min(lengths)  # one stopped early, another went on


@pytest.mark.heavy
def test_own_batch_orders_give_each_model_its_separate_run(tmp_path):
  """`train.batch_order='own'`: model k of the program draws its batch order
  from its own seed, so it is `run.py --config.seed=k` trained alone (bit for
  bit when looped), and vmapped (batches padded to one width and stacked)
  gives the same numbers."""
  cfg = helpers.synthetic_config(top__sweep='seed=0,1', train__model_axis='loop', train__batch_order='own')
  assert [m.cfg.train.batch_seed for m in model_axis.members(cfg, '/w')] == [0, 1]
  helpers.run(cfg, tmp_path / 'looped')
  alone = tmp_path / 'alone1'
  helpers.run(helpers.synthetic_config(top__seed=1), alone)  # batch_seed None: the model seed's order
  assert helpers.history(tmp_path / 'looped' / 'seed1') == helpers.history(alone)
  for p, q in zip(jax.tree.leaves(restore(str(tmp_path / 'looped' / 'seed1')).params),
                  jax.tree.leaves(restore(str(alone)).params)):
    np.testing.assert_array_equal(p, q)
  # The shared order of a program is another model: seed1 then trains on seed 0's order.
  shared = tmp_path / 'shared'
  helpers.run(helpers.synthetic_config(top__sweep='seed=0,1', train__model_axis='loop'), shared)
  assert helpers.history(shared / 'seed1') != helpers.history(alone)
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(helpers.synthetic_config(top__sweep='seed=0,1', train__model_axis='vmap',
                                         train__batch_order='own'), tmp_path / 'vmapped')
  for seed in (0, 1):
    for a, b in zip(helpers.history(tmp_path / 'vmapped' / f'seed{seed}'),
                    helpers.history(tmp_path / 'looped' / f'seed{seed}')):
      assert a['epoch'] == b['epoch']
      np.testing.assert_allclose(a['train_loss'], b['train_loss'], rtol=1e-4)
      np.testing.assert_allclose(a['dev_roc_auc'], b['dev_roc_auc'], atol=1e-6)


def test_own_batch_orders_refuse_a_batch_seed_for_all():
  cfg = helpers.synthetic_config(top__sweep='seed=0,1', train__batch_order='own', train__batch_seed=0)
  with pytest.raises(ConfigError, match="batch_order='own'.*train.batch_seed=0"):
    model_axis.members(cfg, '/w')


@pytest.mark.heavy
def test_a_model_stops_at_a_perfect_score_with_the_selection_all_epochs_give(tmp_path):
  """`train.stop_when_perfect`: a model whose dev score reaches 1.0 stops there,
  and its selection (and so its evaluation) is the one of training every epoch."""
  runs = {}
  for stop in (False, True):
    cfg = helpers.synthetic_config(top__sweep='seed=2,3', train__model_axis='loop', train__epochs=4,
                                   train__learning_rate=0.03, train__stop_when_perfect=stop)
    cfg.data.synthetic.planted_words, cfg.data.synthetic.max_length = 1, 16  # solved by epoch 2
    helpers.run(cfg, tmp_path / str(stop))
    runs[stop] = [(helpers.history(tmp_path / str(stop) / f'seed{s}'),
                   restore(str(tmp_path / str(stop) / f'seed{s}')).selection,
                   helpers.eval_without_timing(tmp_path / str(stop) / f'seed{s}')) for s in (2, 3)]
  stopped = 0
  for (full, chosen, evaluation), (short, chosen_short, evaluation_short) in zip(runs[False], runs[True]):
    assert (chosen['epoch'], chosen['step'], chosen['score']) == (
        chosen_short['epoch'], chosen_short['step'], chosen_short['score'])
    assert evaluation == evaluation_short
    perfect = [r['epoch'] for r in full if r['dev_roc_auc'] >= 1.0 and r['epoch'] >= chosen['epoch']]
    if chosen['score'] >= 1.0:
      assert len(short) == chosen['epoch'] + 1 < len(full)
      stopped += 1
    else:
      assert len(short) == len(full) and not perfect
  assert stopped, 'no model reached a perfect dev score: the test shows nothing'
