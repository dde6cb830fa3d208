"""attn_jax.core.host_memory: freed XLA:CPU buffers are reused (no new page
faults), and training computes the same numbers bit for bit either way.

Each setting needs a process of its own (malloc's settings are the
process's), so both run as child interpreters."""

import json
import os
import platform
import subprocess
import sys

import pytest

from attn_jax.core import host_memory

pytestmark = pytest.mark.slow  # a minute or more: scheduled first (conftest)

CHILD = r'''
import hashlib, json, resource
import attn_jax
import jax, jax.numpy as jnp, numpy as np
from attn_jax import config as config_lib
from attn_jax.core import host_memory
from attn_jax.data.batching import make_batch
from attn_jax.models import build_model
from attn_jax.training import optimizer as optimizer_lib, step as step_lib

cfg = config_lib.default_config('imdb', 'bilstm')
cfg.model.embed_dim, cfg.model.hidden_dim = 64, 128
rng = np.random.default_rng(0)
batches = []
for _ in range(3):
  seqs = [np.r_[2, rng.integers(4, 500, n), 3].astype(np.int32) for n in rng.integers(150, 254, 32)]
  batches.append(make_batch(seqs, rng.integers(0, 2, 32).astype(np.float32), np.arange(32), 32, (256,)))
model = build_model(cfg.model, 500)
tx = optimizer_lib.make_optimizer(cfg.train)
state = step_lib.init_state(tx, model.init(jax.random.PRNGKey(0)))
step = jax.jit(step_lib.make_train_step(model, tx), donate_argnums=0)
for b in batches[:2]:  # compiles, and grows the heap to what a step needs
  state, loss = step(state, b)
  jax.block_until_ready(loss)
faults = []
for b in batches * 2:
  before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
  state, loss = step(state, b)
  jax.block_until_ready(loss)
  faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
digest = hashlib.sha256(b''.join(np.asarray(x).tobytes() for x in jax.tree.leaves(state.params)))
print(json.dumps({'status': host_memory.status(), 'faults_per_step': min(faults),
                  'params_sha256': digest.hexdigest(), 'loss': float(loss)}))
'''


def _child(system: bool) -> dict:
  env = {k: v for k, v in os.environ.items() if k != host_memory.ENV}
  if system:
    env[host_memory.ENV] = 'system'
  done = subprocess.run([sys.executable, '-c', CHILD], env=env, capture_output=True, text=True,
                        check=True, timeout=600)
  return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope='module')
def both():
  return {'system': _child(True), 'kept': _child(False)}


glibc_only = pytest.mark.skipif(platform.system() != 'Linux' or platform.libc_ver()[0] != 'glibc',
                                reason='host_memory sets glibc malloc only')


@pytest.mark.heavy
@glibc_only
def test_import_sets_it_and_the_variable_opts_out(both):
  assert both['kept']['status'] == 'on'
  assert both['system']['status'] == f'off ({host_memory.ENV}=system)'


@pytest.mark.heavy
@glibc_only
def test_freed_buffers_are_reused_instead_of_faulted_in_again(both):
  # Each step's gate buffers are [32, 256, 512] floats (16 MiB) and more: with
  # glibc's defaults they come back from the kernel as fresh pages every step.
  # The fewest of six steps: a kept heap may still grow in a step or two when
  # other work shares the CPU (threads allocate in another order), never after.
  assert both['system']['faults_per_step'] > 4000
  assert both['kept']['faults_per_step'] < 0.1 * both['system']['faults_per_step']


@pytest.mark.heavy
def test_training_computes_the_same_numbers_bit_for_bit(both):
  assert both['kept']['params_sha256'] == both['system']['params_sha256']
  assert both['kept']['loss'] == both['system']['loss']


def test_it_runs_once_and_says_what_it_did():
  assert host_memory.reuse_freed_memory() == host_memory.status() != 'not set'
