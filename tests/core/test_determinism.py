"""attn_jax.core.determinism: `import attn_jax` asks XLA for deterministic GPU
ops before JAX starts, and leaves a user's own choice alone.

$XLA_FLAGS is read once per process, so each case runs in a child
interpreter. (The GPU's bit-for-bit agreement itself needs a GPU: it was
measured on an H100, results/benchmarks/gpu_h100_train_sst_deterministic.json.)"""

import json
import os
import subprocess
import sys

import pytest

from attn_jax.core import determinism

CHILD = r'''
import json, os, sys
if sys.argv[1] == 'jax-first':
  import jax.numpy as jnp
  jnp.ones(2).block_until_ready()
import attn_jax
from attn_jax.core import determinism
import jax.numpy as jnp
print(json.dumps({'status': determinism.status(), 'flags': os.environ.get('XLA_FLAGS'),
                  'sum': float(jnp.ones(3).sum())}))
'''


def _child(xla_flags, order='attn_jax-first') -> dict:
  env = {k: v for k, v in os.environ.items() if k != 'XLA_FLAGS'}
  if xla_flags is not None:
    env['XLA_FLAGS'] = xla_flags
  done = subprocess.run([sys.executable, '-c', CHILD, order], env=env, capture_output=True,
                        text=True, check=True, timeout=300)
  return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_adds_the_flag_and_xla_accepts_it():
  got = _child(None)
  assert got['status'] == 'on'
  assert got['flags'] == determinism.FLAG + '=true'
  assert got['sum'] == 3.0  # XLA parsed $XLA_FLAGS (an unknown flag aborts the process)


def test_other_flags_are_kept():
  got = _child('--xla_cpu_enable_fast_math=false')
  assert got['status'] == 'on'
  assert got['flags'].split() == ['--xla_cpu_enable_fast_math=false', determinism.FLAG + '=true']


@pytest.mark.parametrize('given,state', [('=false', 'off'), ('=true', 'on'), ('', 'on')])
def test_a_users_own_setting_is_left_alone(given, state):
  got = _child(determinism.FLAG + given)
  assert got['flags'] == determinism.FLAG + given
  assert got['status'] == f'{state} (XLA_FLAGS sets {determinism.FLAG}{given})'


def test_too_late_says_so_and_changes_nothing():
  got = _child(None, order='jax-first')
  assert got['status'].startswith('late:') and got['flags'] is None
