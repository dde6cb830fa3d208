"""Two hosts (two local processes joined by jax.distributed) analyse a trained
model into the same results as one: each computes its share of the batches,
host 0 merges the shards and writes the summaries."""

import glob
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import helpers

from attn_jax import config as config_lib
from attn_jax.core import hosts
from attn_jax.core.errors import ConfigError

pytestmark = pytest.mark.slow  # a minute or more: scheduled first (conftest)

ROOT = helpers.ROOT
STAGES = 'gradient,loo,kendall,permutation'


def run(args, **kwargs):
  return subprocess.Popen([sys.executable, 'run.py', '--config=configs/synthetic.py:smoke',
                           '--config.train.progress=False', '--config.experiments='] + args,
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          **kwargs)


def finished(process, timeout=600):
  out, _ = process.communicate(timeout=timeout)
  # 12,000 characters: where JAX aborts a process, the reason is printed above
  # Python's stack dump and module list (about 3,000 characters on their own).
  assert process.returncode == 0, out[-12000:]
  return out


def free_port() -> int:
  with socket.socket() as s:
    s.bind(('localhost', 0))
    return s.getsockname()[1]


def results(out_dir) -> dict:
  found = {}
  for path in glob.glob(os.path.join(out_dir, 'analyses', '*', '*', 'results.npz')):
    stage = path.split(os.sep)[-3]
    with np.load(path) as f:
      found.update({f'{stage}/{k}': f[k] for k in f.files})
  return found


@pytest.fixture(scope='module')
def one_and_two_hosts(tmp_path_factory):
  base = tmp_path_factory.mktemp('hosts')
  workdir, one, two = (str(base / n) for n in ('model', 'one', 'two'))
  finished(run([f'--workdir={workdir}', "--config.analyses="]))
  finished(run([f'--workdir={workdir}', f'--output_dir={one}', f'--config.analyses={STAGES}']))
  address = f'localhost:{free_port()}'
  processes = [run([f'--workdir={workdir}', f'--output_dir={two}', f'--config.analyses={STAGES}',
                    f'--distributed={address},2,{h}']) for h in range(2)]
  logs = [finished(p) for p in processes]
  return results(one), results(two), logs, two


@pytest.mark.heavy
def test_two_hosts_give_the_results_of_one(one_and_two_hosts):
  one, two, _, _ = one_and_two_hosts
  assert sorted(one) == sorted(two) and len(one) > 10
  for name in one:
    np.testing.assert_allclose(two[name], one[name], rtol=0, atol=1e-6, err_msg=name)


@pytest.mark.heavy
def test_each_host_computes_its_share_and_leaves_no_shard_behind(one_and_two_hosts):
  _, _, logs, two = one_and_two_hosts
  assert 'gradient: 48 documents' in logs[0]  # host 0 writes the stage
  assert 'gradient: host 1 of 2 computed its share' in logs[1]
  assert not glob.glob(os.path.join(two, 'analyses', '*', '*', 'partial*'))
  assert len(glob.glob(os.path.join(two, 'analyses', '*', '*', 'summary.json'))) == len(STAGES.split(','))


def test_several_hosts_refuse_an_untrained_workdir_and_experiments(monkeypatch):
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  hosts.check_runnable(cfg.experiments, training_finished=False)  # one host: anything goes
  monkeypatch.setattr(hosts, 'count', lambda: 4)
  with pytest.raises(ConfigError, match='train first on one host'):
    hosts.check_runnable(cfg.experiments, training_finished=False)
  cfg.experiments = 'uniform'
  with pytest.raises(ConfigError, match='experiments .uniform. train models'):
    hosts.check_runnable(cfg.experiments, training_finished=True)


@pytest.mark.parametrize('spec', ['localhost:1234', 'localhost:1234,2', 'localhost:1234,2,2'])
def test_a_malformed_distributed_spec_names_the_form(spec):
  with pytest.raises(ConfigError, match='ADDRESS:PORT,NUM_HOSTS,HOST_INDEX|HOST_INDEX must be'):
    hosts.initialize(spec)
