"""Checkpoints: exact save/restore, restore-instead-of-retrain, resume after
NaN and after kill -9, and refusal of incompatible workdirs."""

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.core import atomic_io, leases
from attn_jax.core.errors import CheckpointError, IntegrityError, TrainingError
from attn_jax.models import build_model
from attn_jax.workdirs.restore import restore
from attn_jax.workdirs import workdir as workdir_lib
from attn_jax.training import optimizer as optimizer_lib, step as step_lib, trainer
from attn_jax.training import checkpoints as checkpoints_lib
from attn_jax.training.checkpoints import CheckpointStore
from conftest import tiny_model_config
import helpers

ROOT = helpers.ROOT
pytestmark = pytest.mark.usefixtures('optax_promotion')


def test_state_and_progress_round_trip_exactly(tmp_path):
  model = build_model(tiny_model_config('cnn'), 30)
  tx = optimizer_lib.make_optimizer(helpers.synthetic_config().train)
  state = step_lib.init_state(tx, model.init(jax.random.PRNGKey(3)))
  state = state.replace(step=jnp.array(17, jnp.int32))
  progress = {**trainer.fresh_progress(1), 'epoch': 2}
  progress['models'][0]['history'] = [{'epoch': 0, 'x': 0.25}]
  with CheckpointStore(str(tmp_path)) as store:
    store.save_latest(17, state, progress)
  template = step_lib.init_state(tx, model.init(jax.random.PRNGKey(0)))
  with CheckpointStore(str(tmp_path)) as store:
    restored, restored_progress = store.restore_latest(template)
  assert restored_progress == progress and int(restored.step) == 17
  assert jax.tree.structure(restored) == jax.tree.structure(state)
  for a, b in zip(jax.tree.leaves(restored), jax.tree.leaves(state)):
    np.testing.assert_array_equal(a, b)



def test_a_ctrl_c_inside_orbax_s_save_waits_for_the_commit(tmp_path, monkeypatch, capfd):
  """Ctrl-C while orbax writes: the save finishes and commits, then the run is
  interrupted, with no event-loop tracebacks after it (the fault suite's
  Ctrl-C in epoch 2 printed them once in 32 trials)."""
  real_save = checkpoints_lib.ocp.Checkpointer.save
  def interrupted_save(self, directory, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # the Ctrl-C lands mid-save
    return real_save(self, directory, *args, **kwargs)
  monkeypatch.setattr(checkpoints_lib.ocp.Checkpointer, 'save', interrupted_save)
  params = {'w': jnp.arange(3.0)}
  # Python's own handler, as a terminal's Ctrl-C finds it (a background CI job may inherit SIGINT ignored)
  previous = signal.signal(signal.SIGINT, signal.default_int_handler)
  try:
    with pytest.raises(KeyboardInterrupt):
      with CheckpointStore(str(tmp_path)) as store:
        store.save_best(4, params, {'score': 0.5})
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
  finally:
    signal.signal(signal.SIGINT, previous)
  monkeypatch.undo()
  with CheckpointStore(str(tmp_path)) as store:
    restored, selection = store.restore_best(params)
  np.testing.assert_array_equal(restored['w'], np.arange(3.0))
  assert selection == {'score': 0.5}
  assert 'Traceback' not in capfd.readouterr().err

def test_saving_a_step_again_replaces_it(tmp_path):
  params = {'w': jnp.zeros(3)}
  with CheckpointStore(str(tmp_path)) as store:
    store.save_best(5, params, {'score': 0.1})
    store.save_best(5, {'w': jnp.ones(3)}, {'score': 0.2})
  with CheckpointStore(str(tmp_path)) as store:
    restored, selection = store.restore_best(params)
  np.testing.assert_array_equal(restored['w'], np.ones(3))
  assert selection == {'score': 0.2}


def test_a_checkpoint_of_another_model_is_refused(tmp_path):
  tx = optimizer_lib.make_optimizer(helpers.synthetic_config().train)
  small = build_model(tiny_model_config('average'), 30)
  with CheckpointStore(str(tmp_path)) as store:
    store.save_latest(1, step_lib.init_state(tx, small.init(jax.random.PRNGKey(0))), {})
  other = build_model(tiny_model_config('cnn'), 30)
  with CheckpointStore(str(tmp_path)) as store, pytest.raises(CheckpointError, match='does not fit'):
    store.restore_latest(step_lib.init_state(tx, other.init(jax.random.PRNGKey(0))))


@pytest.fixture(scope='module')
def trained(smoke_trained, tmp_path_factory):
  return helpers.trained_copy(smoke_trained, tmp_path_factory.mktemp('trained') / 'w')


def test_restore_gives_the_model_that_made_the_saved_predictions(trained):
  r = restore(str(trained))
  with np.load(trained / 'predictions_test.npz') as f:
    probs, ids = f['probs'], list(f['ids'])
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  test = load_dataset(r.config.data).splits['test']
  assert test.ids == ids
  for i in (0, 7, 31):
    seq = jnp.asarray(test.sequences[i])[None]
    prob = jax.nn.sigmoid(r.model.forward(r.params, seq, jnp.array([seq.shape[1]])).logits)[0]
    np.testing.assert_allclose(prob, probs[i], atol=1e-6)
  assert r.vocab.tokens[:4] == ('<PAD>', '<UNK>', '<SOS>', '<EOS>')
  assert r.selection['epoch'] >= 1 and r.data['fingerprint']


def test_rerun_restores_instead_of_retraining(trained):
  before = helpers.eval_without_timing(trained)
  logs = []
  helpers.run(helpers.synthetic_config(), trained, logs)
  assert any('training already finished' in line for line in logs)
  assert helpers.eval_without_timing(trained) == before


def test_rerun_rewrites_the_epoch_log_from_the_checkpoint(trained):
  before = helpers.history(trained)
  os.remove(trained / 'metrics.jsonl')  # as if killed between the last save and this file
  helpers.run(helpers.synthetic_config(), trained)
  assert helpers.history(trained) == before


def test_damaged_workdir_files_are_named(trained, tmp_path):
  import shutil  # pylint: disable=g-import-not-at-top
  copy = tmp_path / 'copy'
  shutil.copytree(trained, copy)
  (copy / 'data.json').write_text('{"fingerprint": ')
  with pytest.raises(IntegrityError, match=r'data.json is damaged or was edited \(its sha256 differs'):
    restore(str(copy))
  (copy / 'config.json').write_text('[]')
  with pytest.raises(IntegrityError, match='config.json is damaged or was edited'):
    restore(str(copy))
  os.remove(copy / 'checksums.json')  # a workdir of attn-jax <= 0.2: nothing to verify against
  with pytest.raises(CheckpointError, match='config.json is not an attn-jax config'):
    restore(str(copy))
  (copy / 'config.json').write_text(json.dumps(dict(json.loads((trained / 'config.json').read_text()))))
  with pytest.raises(CheckpointError, match='data.json is missing or damaged'):
    restore(str(copy))


def test_damaged_description_files_are_repaired_when_the_config_and_data_render_them(trained, tmp_path):
  import shutil  # pylint: disable=g-import-not-at-top
  copy = tmp_path / 'copy'
  shutil.copytree(trained, copy)
  originals = {n: (trained / n).read_bytes() for n in ('config.json', 'vocab.json', 'data.json')}
  for name in originals:
    (copy / name).write_bytes(originals[name][: len(originals[name]) // 2])
  logs = []
  assert helpers.eval_without_timing(copy) == helpers.eval_without_timing(trained)
  helpers.run(helpers.synthetic_config(), copy, logs)
  assert {n: (copy / n).read_bytes() for n in originals} == originals
  assert sum('repaired from the config and data' in line for line in logs) == 3


@pytest.mark.parametrize('damaged', ['config.json', 'checksums.json'])
def test_a_damaged_config_or_record_is_repaired_by_a_rerun_with_other_analysis_settings(trained, tmp_path, damaged):
  import shutil  # pylint: disable=g-import-not-at-top
  copy = tmp_path / 'copy'
  shutil.copytree(trained, copy)
  (copy / damaged).write_bytes((copy / damaged).read_bytes()[:30])
  other = helpers.synthetic_config(analysis__max_docs=3)  # the training part is the workdir's
  logs = []
  helpers.run(other, copy, logs)
  assert any(f'{damaged} was damaged' in line for line in logs), logs
  assert helpers.eval_without_timing(copy) == helpers.eval_without_timing(trained)
  assert workdir_lib.load_config(str(copy)).analysis.max_docs == (3 if damaged == 'config.json' else None)
  # Another training part is still refused.
  (copy / 'config.json').write_bytes(b'{"cut')
  with pytest.raises(IntegrityError, match='config.json is damaged or was edited'):
    helpers.run(helpers.synthetic_config(train__learning_rate=0.01), copy)


@pytest.mark.parametrize('damage', ['deleted', 'truncated'])
def test_a_damaged_checksum_record_is_rebuilt_when_the_files_render_exactly(trained, tmp_path, damage):
  import shutil  # pylint: disable=g-import-not-at-top
  copy = tmp_path / 'copy'
  shutil.copytree(trained, copy)
  record = copy / 'checksums.json'
  original = record.read_bytes()
  if damage == 'deleted':
    os.remove(record)
  else:
    record.write_bytes(original[:10])
    with pytest.raises(IntegrityError, match=r'checksums.json is damaged \(JSONDecodeError\).*rebuild it'):
      restore(str(copy))
  logs = []
  helpers.run(helpers.synthetic_config(), copy, logs)
  assert record.read_bytes() == original
  assert any(f'checksums.json was {"missing" if damage == "deleted" else "damaged"}; rebuilt' in line
             for line in logs)
  (copy / 'vocab.json').write_text('["<pad>"]')  # now a file differs too: nothing can vouch for it
  record.write_bytes(original[:10])
  with pytest.raises(IntegrityError, match='checksums.json is damaged'):
    helpers.run(helpers.synthetic_config(), copy)


def test_rerun_with_another_config_is_refused(trained):
  with pytest.raises(CheckpointError, match='train.learning_rate: workdir has 0.003, config asks 0.01'):
    helpers.run(helpers.synthetic_config(train__learning_rate=0.01), trained)
  helpers.run(helpers.synthetic_config(train__progress=True), trained)  # display keys may differ


def test_rerun_on_other_data_is_refused(trained):
  cfg = helpers.synthetic_config()
  cfg.data.synthetic.seed = 1
  with pytest.raises(CheckpointError):
    helpers.run(cfg, trained)  # the config check fires first: data.synthetic.seed differs
  os.rename(trained / 'config.json', trained / 'config.saved')
  try:
    with pytest.raises(CheckpointError, match='fingerprint'):
      helpers.run(cfg, trained)
  finally:
    os.rename(trained / 'config.saved', trained / 'config.json')


@pytest.mark.heavy
def test_nan_loss_stops_training_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
  cfg = helpers.synthetic_config(train__epochs=3)
  reference = tmp_path / 'reference'
  helpers.run(cfg, reference)

  real_batches = trainer.train_batches

  def poisoned(*args, **kwargs):
    batches = real_batches(*args, **kwargs)
    if kwargs.get('epoch', args[-1]) == 1:
      b = batches[6]
      batches[6] = b._replace(weights=np.full_like(b.weights, np.nan))
    return batches

  monkeypatch.setattr(trainer, 'train_batches', poisoned)
  broken = tmp_path / 'broken'
  with pytest.raises(TrainingError, match='loss or its gradient became nan in epoch 2 of 3, batch 7 of '):
    helpers.run(cfg, broken)
  model = build_model(cfg.model, len(restore_vocab(broken)))
  tx = optimizer_lib.make_optimizer(cfg.train)
  with CheckpointStore(str(broken)) as store:
    # The latest state has a model axis, of length 1 here.
    template = step_lib.stack([step_lib.init_state(tx, model.init(jax.random.PRNGKey(0)))])
    state, progress = store.restore_latest(template)
  assert (progress['epoch'], progress['batch']) == (1, 4)  # saved every 4 steps, before the NaN
  assert all(bool(jnp.isfinite(x).all()) for x in jax.tree.leaves(state.params))

  monkeypatch.setattr(trainer, 'train_batches', real_batches)
  helpers.run(cfg, broken)  # resumes from the intact checkpoint
  assert helpers.eval_without_timing(broken) == helpers.eval_without_timing(reference)


def restore_vocab(workdir):
  from attn_jax.workdirs.workdir import load_vocab  # pylint: disable=g-import-not-at-top
  return load_vocab(str(workdir))


def cli(workdir, *extra):
  return [sys.executable, os.path.join(ROOT, 'run.py'), '--config=configs/synthetic.py',
          f'--workdir={workdir}', '--config.train.epochs=3', '--config.train.batch_size=16',
          '--config.train.checkpoint_every_steps=7', '--config.data.synthetic.train_size=1600',
          '--config.train.progress=False', '--config.analyses=', *extra]


def latest_steps(workdir):
  folder = os.path.join(workdir, 'checkpoints', 'latest')
  return [int(n) for n in os.listdir(folder) if n.isdigit()] if os.path.isdir(folder) else []


@pytest.mark.heavy
@pytest.mark.slow
def test_kill_9_mid_epoch_then_rerun_matches_an_uninterrupted_run(tmp_path):
  """Two models as one program (a sweep), killed in their second epoch."""
  env = dict(os.environ, JAX_PLATFORMS='cpu')
  whole, killed = tmp_path / 'whole', tmp_path / 'killed'
  sweep = '--config.sweep=seed=0,1'
  subprocess.run(cli(whole, sweep), cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)

  process = subprocess.Popen(cli(killed, sweep), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
  deadline = time.time() + 300
  # 100 steps an epoch: a latest checkpoint past step 100 that is not an epoch
  # end means the run is in the middle of its second epoch.
  while time.time() < deadline and not any(s > 100 and s % 100 for s in latest_steps(killed)):
    assert process.poll() is None, 'the run ended before it could be killed'
    time.sleep(0.01)
  process.send_signal(signal.SIGKILL)
  process.wait()
  assert not (killed / 'seed0' / 'eval.json').exists()

  rerun = subprocess.run(cli(killed, sweep), cwd=ROOT, env=env, check=True, capture_output=True,
                         text=True, timeout=600)
  assert 'resuming from' in rerun.stdout
  for model in ('seed0', 'seed1'):
    assert helpers.history(killed / model) == helpers.history(whole / model)
    assert helpers.eval_without_timing(killed / model) == helpers.eval_without_timing(whole / model)
    a, b = restore(str(whole / model)), restore(str(killed / model))
    for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params)):
      np.testing.assert_array_equal(x, y)


def _copy(trained, tmp_path):
  import shutil  # pylint: disable=g-import-not-at-top
  copy = tmp_path / 'copy'
  shutil.copytree(trained, copy)
  return copy


def _step_dir(workdir, kind):
  folder = workdir / 'checkpoints' / kind
  return folder / max(os.listdir(folder), key=int)


def _zero_array_bytes(step_dir):
  path = max(step_dir.glob('*/ocdbt.process_0/d/*'), key=lambda p: p.stat().st_size)
  with open(path, 'r+b') as f:
    f.seek(path.stat().st_size // 2)
    f.write(b'\0' * 8)


def test_a_finished_run_restores_from_best_when_latest_is_damaged(trained, tmp_path):
  copy = _copy(trained, tmp_path)
  before = helpers.eval_without_timing(trained)
  _zero_array_bytes(_step_dir(copy, 'latest'))
  (_step_dir(copy, 'latest') / 'progress' / 'metadata').write_text('{')
  logs = []
  helpers.run(helpers.synthetic_config(), copy, logs)
  assert any('training already finished' in line for line in logs)
  after = helpers.eval_without_timing(copy)
  for results in (before, after):
    results.pop('workdir', None)  # names the copy
  assert after == before


def test_an_unfinished_run_with_a_damaged_latest_checkpoint_says_what_to_delete(trained, tmp_path):
  copy = _copy(trained, tmp_path)
  os.remove(copy / trainer.FINISHED)  # as in a workdir whose training is not finished
  latest = _step_dir(copy, 'latest')
  _zero_array_bytes(latest)
  with pytest.raises(CheckpointError) as error:
    helpers.run(helpers.synthetic_config(), copy)
  message = str(error.value)
  assert '\n' not in message and f'{latest} is damaged' in message
  assert f'delete {latest} to restart this training from scratch' in message


def test_a_damaged_best_checkpoint_is_one_line_unless_latest_holds_the_same_step(trained, tmp_path):
  copy = _copy(trained, tmp_path)
  best, latest = _step_dir(copy, 'best'), _step_dir(copy, 'latest')
  assert best.name == latest.name  # the last epoch was the best: latest holds its params
  expected = restore(str(trained))
  _zero_array_bytes(best)
  with pytest.warns(UserWarning, match=f'{best} is damaged .*read from checkpoints/latest/{best.name}'):
    rescued = restore(str(copy))  # a reader writes nothing, and says where the model came from
  assert rescued.selection == expected.selection
  for a, b in zip(jax.tree.leaves(expected.params), jax.tree.leaves(rescued.params)):
    np.testing.assert_array_equal(a, b)
  _zero_array_bytes(latest)
  with pytest.raises(CheckpointError) as error:
    restore(str(copy))
  assert '\n' not in str(error.value) and f'{best} is damaged' in str(error.value)
  assert 'does not fit' not in str(error.value)


def test_a_rerun_writes_a_damaged_or_missing_best_checkpoint_anew_from_latest(trained, tmp_path):
  import shutil  # pylint: disable=g-import-not-at-top
  expected = restore(str(trained))
  for damage in ('zeroed', 'deleted'):
    copy = _copy(trained, tmp_path / damage)
    best = _step_dir(copy, 'best')
    if damage == 'zeroed':
      _zero_array_bytes(best)
    else:
      shutil.rmtree(best.parent)
    logs = []
    helpers.run(helpers.synthetic_config(), copy, logs)
    assert any('was written anew from it' in line for line in logs), logs
    assert checkpoints_lib.damage(str(best)) is None
    with warnings.catch_warnings():
      warnings.simplefilter('error')  # intact again: restored without a word
      again = restore(str(copy))
    for a, b in zip(jax.tree.leaves(expected.params), jax.tree.leaves(again.params)):
      np.testing.assert_array_equal(a, b)


def test_contents_says_how_training_ended_and_marks_a_damaged_step_folder(trained, tmp_path):
  from attn_jax import contents  # pylint: disable=g-import-not-at-top
  copy = _copy(trained, tmp_path)
  best = _step_dir(copy, 'best')
  listed = contents.describe(str(copy))
  assert 'training: finished (' in listed and 'epoch None' not in listed
  from attn_jax.core import environment  # pylint: disable=g-import-not-at-top
  assert f"  trained in: {environment.summary(environment.describe())}\n" in listed
  assert f'checkpoints/best: step {best.name}\n' in listed
  _zero_array_bytes(best)
  assert f'checkpoints/best: step {best.name} DAMAGED (' in contents.describe(str(copy))


def test_a_missing_best_with_a_damaged_latest_says_the_model_is_lost(trained, tmp_path):
  import shutil  # pylint: disable=g-import-not-at-top
  copy = _copy(trained, tmp_path)
  shutil.rmtree(_step_dir(copy, 'best').parent)
  latest = _step_dir(copy, 'latest')
  _zero_array_bytes(latest)
  with pytest.raises(CheckpointError) as error:
    restore(str(copy))
  message = str(error.value)
  assert '\n' not in message and 'holds no checkpoint (deleted?)' in message
  assert 'cannot be rebuilt from' in message and f'{latest} is damaged' in message and 'is lost' in message


def _snapshot(folder):
  return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
          for p in folder.rglob('*')}


def _train_again(workdir, logs):
  """trainer.train as pipeline.run calls it on a finished workdir (no eval.json rewrite)."""
  from attn_jax.workdirs import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  cfg = workdir_lib.load_config(str(workdir))
  dataset = load_dataset(cfg.data)
  model = build_model(cfg.model, len(dataset.vocab))
  return trainer.train(model, dataset, [trainer.Member(cfg, str(workdir))], str(workdir),
                       lambda m: pytest.fail('a finished run must not start again'), logs.append)


def test_restoring_a_finished_workdir_changes_nothing_in_it(trained):
  before, logs = _snapshot(trained), []
  restore(str(trained))
  assert _train_again(trained, logs)['finished'] and 'training already finished' in logs[0]
  assert _snapshot(trained) == before


@pytest.mark.skipif(os.geteuid() != 0, reason='a read-only bind mount needs root')
def test_a_finished_workdir_on_a_read_only_mount_restores(trained, tmp_path):
  mounted = tmp_path / 'readonly'
  mounted.mkdir()
  subprocess.run(['mount', '--bind', str(trained), str(mounted)], check=True)
  try:
    subprocess.run(['mount', '-o', 'remount,ro,bind', str(mounted)], check=True)
    assert restore(str(mounted)).selection == restore(str(trained)).selection
    assert _train_again(mounted, [])['finished']
  finally:
    subprocess.run(['umount', str(mounted)], check=True)


class _Stopped(Exception):
  pass


def test_a_program_resumed_in_another_environment_says_so_and_lists_both(tmp_path, monkeypatch):
  """Stopped after its first epoch, then resumed where a library's version
  differs: one line names the difference, and eval.json's trained_in has both."""
  from attn_jax.core import environment  # pylint: disable=g-import-not-at-top
  from attn_jax.training import trainer  # pylint: disable=g-import-not-at-top
  cfg = helpers.synthetic_config(train__epochs=2)
  original_end_epoch = trainer._Bookkeeping.end_epoch  # pylint: disable=protected-access

  def end_epoch_then_stop(self, epoch):
    original_end_epoch(self, epoch)
    raise _Stopped()

  with monkeypatch.context() as patch:
    patch.setattr(trainer._Bookkeeping, 'end_epoch', end_epoch_then_stop)  # pylint: disable=protected-access
    with pytest.raises(_Stopped):
      helpers.run(cfg, tmp_path)
  here = environment.describe()
  elsewhere = {**here, 'libraries': {**here['libraries'], 'jax': here['libraries']['jax'] + '.post1'}}
  monkeypatch.setattr(environment, 'describe', lambda: elsewhere)
  logs = []
  results = helpers.run(cfg, tmp_path, logs)
  said = [line for line in logs if line.startswith('resuming in another environment')]
  assert said == [f'resuming in another environment than the last one that trained this program '
                  f'(libraries.jax: {here["libraries"]["jax"]} → {here["libraries"]["jax"]}.post1): from here '
                  'on its float rounding may differ from an uninterrupted run; eval.json lists both (trained_in)'], logs
  assert results['trained_in'] == [here, elsewhere]


def _take_over(lock, record):
  new = {**record, 'token': 'f' * 16, 'pid': record['pid'] + 1}
  lock.write_text(json.dumps(new))
  leases._fence_earlier_holders(str(lock), new['token'])  # pylint: disable=protected-access


@pytest.mark.parametrize('moment', ['inside orbax', 'before the commit'])
@pytest.mark.parametrize('lock_checked', [True, False])
def test_a_save_in_flight_when_the_lease_is_lost_lands_nothing(tmp_path, monkeypatch, moment, lock_checked):
  """A holder paused inside a save (or between its lock check and the rename
  that commits) and taken over: nothing lands in latest/, the previous step
  stays, the error is the lease's whole line — and with the lock check
  skipped, the fenced staging folder alone keeps the commit out."""
  from attn_jax.training import checkpoints  # pylint: disable=g-import-not-at-top
  lock = tmp_path / 'training.lease'
  with leases.lease(str(lock), 'training in w', log=lambda _: None) as record:
    with CheckpointStore(str(tmp_path)) as store:
      store.save_latest(1, {'w': jnp.zeros(3)}, {'epoch': 0})
      real_seal, real_rename = checkpoints._seal, checkpoints._commit_rename
      if moment == 'inside orbax':
        monkeypatch.setattr(checkpoints, '_seal', lambda d: (_take_over(lock, record), real_seal(d)))
      else:
        monkeypatch.setattr(checkpoints, '_commit_rename', lambda a, b: (_take_over(lock, record), real_rename(a, b)))
      if not lock_checked:
        monkeypatch.setattr(leases, 'verify', lambda target: None)
        monkeypatch.setattr(atomic_io, 'BEFORE_COMMIT', [])
      with pytest.raises(Exception) as raised:
        store.save_latest(2, {'w': jnp.ones(3)}, {'epoch': 1})
  if lock_checked:
    assert isinstance(raised.value, leases.LeaseLost)
    assert str(raised.value).endswith('nothing more is written by this process')
  assert checkpoints.steps(str(tmp_path / 'checkpoints' / 'latest')) == [1]


def test_saving_a_step_again_leaves_no_moment_without_it(tmp_path, monkeypatch):
  """A step saved again (a resumed run in another environment) is exchanged
  in one step: at no moment is latest/ empty."""
  from attn_jax.training import checkpoints  # pylint: disable=g-import-not-at-top
  seen = []
  real = os.rename
  monkeypatch.setattr(os, 'rename', lambda a, b: (seen.append(checkpoints.steps(str(tmp_path / 'checkpoints' / 'best'))), real(a, b))[1])
  with CheckpointStore(str(tmp_path)) as store:
    store.save_best(5, {'w': jnp.zeros(3)}, {'score': 0.1})
    seen.clear()
    store.save_best(5, {'w': jnp.ones(3)}, {'score': 0.2})
  assert all(s == [5] for s in seen)
  with CheckpointStore(str(tmp_path)) as store:
    restored, _ = store.restore_best({'w': jnp.zeros(3)})
  np.testing.assert_array_equal(restored['w'], np.ones(3))
