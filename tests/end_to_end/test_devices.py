"""Analyses and the model axis spread over 8 devices give the numbers of one.

JAX fixes its device count when it starts, so the 8 host CPU devices live in
a child process (tests/devices_check.py) with
XLA_FLAGS=--xla_force_host_platform_device_count=8.
"""

import json
import os
import subprocess
import sys

import jax
import pytest
import helpers

from attn_jax import config as config_lib, pipeline
from attn_jax.core import sharding
from attn_jax.core.errors import ConfigError

HERE = helpers.TESTS


@pytest.fixture(scope='module')
def eight_devices(tmp_path_factory):
  flags = ' '.join(f for f in (os.environ.get('XLA_FLAGS'), '--xla_force_host_platform_device_count=8') if f)
  env = {**os.environ, 'XLA_FLAGS': flags,
         'JAX_PLATFORMS': 'cpu'}
  done = subprocess.run([sys.executable, os.path.join(HERE, 'devices_check.py'),
                         str(tmp_path_factory.mktemp('devices'))],
                        env=env, capture_output=True, text=True, timeout=1200)
  assert done.returncode == 0, done.stderr[-3000:]
  return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.heavy
def test_every_stage_on_eight_devices_matches_one(eight_devices):
  assert eight_devices['devices'] == 8
  assert eight_devices['stage_arrays'] > 50  # every stage's arrays were compared
  assert eight_devices['stages_max_difference'] < 1e-5


@pytest.mark.heavy
def test_stage_summaries_report_their_compile_time(eight_devices):
  assert all(s >= 0 for s in eight_devices['compile_seconds'])
  assert sum(eight_devices['compile_seconds']) > 0


@pytest.mark.heavy
@pytest.mark.parametrize('executor', ['vmap', 'loop'])
def test_the_model_axis_on_eight_devices_trains_the_models_of_one(eight_devices, executor):
  assert eight_devices[f'{executor}_params_max_difference'] < 1e-4


def test_more_devices_than_there_are_is_refused_before_any_work():
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  cfg.devices = len(jax.devices()) + 1
  config_lib.validate(cfg)  # what depends on the machine is checked where the run starts
  with pytest.raises(ConfigError, match='--config.devices between 1 and'):
    pipeline.check(cfg)


def test_a_batch_that_does_not_split_over_the_devices_is_refused(monkeypatch):
  monkeypatch.setattr(sharding, 'device_count', lambda requested: 3)
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  cfg.analysis.batch_size = 32
  with pytest.raises(ConfigError, match='analysis.batch_size=32 does not split over 3 devices'):
    pipeline.check(cfg)
