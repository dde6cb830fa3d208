"""Fast fault-injection cases (the long suite is tests/fault_tool/fault_injection.py):
a run killed with SIGKILL mid-stage, damaged result files and a damaged
vocabulary, each judged as the user sees it: identical results after a
rerun, or a one-line error."""

import json
import os
import shutil

import sys

import jax
import numpy as np
import pytest

import helpers

sys.path.insert(0, os.path.join(helpers.ROOT, 'tests', 'fault_tool'))
import faults  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.usefixtures('optax_promotion')
ANALYSES = 'gradient,attention'  # a computed stage of several batches, and a cheap one
CLI = ['--config=configs/synthetic.py:smoke', '--config.train.progress=False',
       f'--config.analyses={ANALYSES}']


def config():
  return helpers.synthetic_config(top__analyses=ANALYSES)


@pytest.fixture(scope='module')
def finished(smoke_trained, tmp_path_factory):
  """A synthetic smoke workdir, trained and analysed once, and its fingerprint."""
  workdir = helpers.trained_copy(smoke_trained, tmp_path_factory.mktemp('finished') / 'w')
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(config(), workdir)
  return workdir, faults.fingerprint(str(workdir))


@pytest.fixture(scope='module')
def cache_env(tmp_path_factory):
  """A compilation cache the subprocesses of this module share (speed only)."""
  return {'JAX_COMPILATION_CACHE_DIR': str(tmp_path_factory.mktemp('jax-cache')),
          'JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS': '0'}


def copy_of(finished, tmp_path):
  workdir = tmp_path / 'copy'
  shutil.copytree(finished[0], workdir)
  return workdir


def stage_file(workdir, stage, name):
  """The file `name` of the stage's results, wherever below analyses/<stage> it lives."""
  found = [os.path.join(d, name) for d, _, files in os.walk(workdir / 'analyses' / stage) if name in files]
  assert len(found) == 1, found
  return found[0]


def rerun_in_process(workdir):
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(config(), workdir, logs)
  return logs


def test_fingerprint_ignores_timings_but_not_values(tmp_path):
  for name, seconds, values in (('a', 1.5, [1.0, 2.0]), ('b', 9.0, [1.0, 2.0]), ('c', 1.5, [1.0, 2.5])):
    (tmp_path / name / 'analyses' / 'loo' / f'key-{name}').mkdir(parents=True)
    (tmp_path / name / 'eval.json').write_text(json.dumps({'accuracy': 0.5, 'training_seconds': seconds}))
    np.savez(tmp_path / name / 'analyses' / 'loo' / f'key-{name}' / 'results.npz', loo=np.array(values))
  a, b, c = (faults.fingerprint(str(tmp_path / n)) for n in 'abc')
  assert a == b  # other timings and another key-named folder: the same results
  assert faults.compare(a, c)['changed'] == ['analyses/loo/results.npz']


@pytest.mark.heavy
def test_a_ctrl_c_after_a_progress_bar_is_judged_by_its_one_line():
  bar = 'vectors:   0%|          | 0/5 [00:00<?, ?epoch/s]\rvectors:  20%|##        | 1/5 [00:09<00:36]\n'
  assert faults.judge_interrupt(130, bar + 'interrupted: rerun to resume\n') == ('survived', 'interrupted: rerun to resume')
  assert faults.judge_interrupt(130, bar + 'a first line\na second\n')[0] == 'unclear failure'
  assert faults.judge_interrupt(0, 'interrupted: rerun\n')[0] == 'unclear failure'


def test_kill_9_mid_stage_then_rerun_gives_identical_results(finished, cache_env, tmp_path):
  workdir = copy_of(finished, tmp_path)
  shutil.rmtree(os.path.dirname(stage_file(workdir, 'gradient', 'results.npz')))
  args = CLI + [f'--workdir={workdir}']
  killed = faults.run(faults.wrapped(args, save_every=0, kill_in='gradient:1'), extra_env=cache_env)
  assert killed.returncode == -9, killed.stderr[-2000:]
  assert os.path.exists(stage_file(workdir, 'gradient', 'partial.npz'))
  rerun = faults.run([faults.sys.executable, 'run.py', *args], extra_env=cache_env)
  assert faults.judge(rerun, finished[1], str(workdir)) == ('survived', ''), rerun.stderr[-2000:]
  assert 'gradient: resuming after 1 of' in rerun.stdout


@pytest.mark.parametrize('stage,name,how', [('gradient', 'results.npz', 'corrupted'),
                                            ('attention', 'summary.json', 'truncated')])
def test_a_damaged_result_file_is_recomputed_identically(finished, tmp_path, stage, name, how):
  workdir = copy_of(finished, tmp_path)
  faults.damage(stage_file(workdir, stage, name), how)
  logs = rerun_in_process(workdir)
  assert any(line.startswith(f'{stage}: ') and 'documents in' in line for line in logs), logs
  assert faults.compare(finished[1], faults.fingerprint(str(workdir))) == {
      'missing': [], 'unreadable': [], 'changed': [], 'extra': []}


def test_a_damaged_vocabulary_is_restored_or_a_one_line_error(finished, cache_env, tmp_path):
  """The model's token ids are only as good as vocab.json: a rerun must not
  leave it damaged while reporting success, nor show a traceback."""
  workdir = copy_of(finished, tmp_path)
  faults.damage(str(workdir / 'vocab.json'), 'truncated')
  cli = faults.run([faults.sys.executable, 'run.py', *CLI, f'--workdir={workdir}'], extra_env=cache_env)
  outcome, message = faults.judge(cli, finished[1], str(workdir))
  if outcome == 'clear error':
    assert cli.returncode == 2 and 'vocab.json' in message, message
  else:
    assert (outcome, message) == ('survived', ''), cli.stderr[-2000:]
