"""Shared fixtures. JAX runs with strict dtype and rank promotion, so an
implicit float64 upcast or a silent broadcast between ranks is an error."""

import atexit
import os
import shutil
import tempfile

# The tests check what is computed, not how fast it runs, and most of their
# time is XLA compiling: LLVM's optimisation level 0 compiles about a third
# faster (measured: the eight-device check 152 s -> 105 s) and leaves the
# results to rounding (every comparison here is to a tolerance or within one
# setting). Set before JAX starts its backend; the processes the tests start
# inherit it. ATTN_JAX_TEST_FULL_OPT=1 runs them at XLA's default instead.
if not os.environ.get('ATTN_JAX_TEST_FULL_OPT'):
  os.environ['XLA_FLAGS'] = ' '.join(f for f in (os.environ.get('XLA_FLAGS'), '--xla_backend_optimization_level=0') if f)

import jax  # noqa: E402  (after XLA_FLAGS)
import pytest

jax.config.update('jax_numpy_dtype_promotion', 'strict')
jax.config.update('jax_numpy_rank_promotion', 'raise')

from attn_jax import config as config_lib  # noqa: E402  (after the JAX settings)

REAL_DATA = os.environ.get('ATTN_JAX_DATA')
# `python -m pytest` (CI's command) runs the whole suite. Tests marked `heavy`
# are whole pipelines over minutes, each the end-to-end form of checks the
# rest make on a smaller scale; `python -m pytest -m "not heavy"` leaves them
# out (the quick suite, for development).

# The tests' compiled programs go to a cache of their own, not the user's
# ~/.cache/attn_jax/jax: made by the first process (pytest's, before it starts
# its workers), so the workers and the run.py processes they start share it,
# and on from the start in each process: most of the suite's time is XLA
# compiling the same small models' programs in many tests.
if not os.environ.get('ATTN_JAX_COMPILATION_CACHE'):
  os.environ['ATTN_JAX_COMPILATION_CACHE'] = tempfile.mkdtemp(prefix='attn_jax_test_cache_')
  atexit.register(shutil.rmtree, os.environ['ATTN_JAX_COMPILATION_CACHE'], ignore_errors=True)
from attn_jax.core import compilation  # noqa: E402
compilation.enable_cache(os.environ['ATTN_JAX_COMPILATION_CACHE'])
# Rates measured by the tests' tiny builds are not the user's (core.estimates).
if not os.environ.get('ATTN_JAX_RATES'):
  _rates = tempfile.mkdtemp(prefix='attn_jax_test_rates_')
  os.environ['ATTN_JAX_RATES'] = os.path.join(_rates, 'rates.json')
  atexit.register(shutil.rmtree, _rates, ignore_errors=True)


def tiny_model_config(encoder='bilstm', attention='tanh', projection='softmax'):
  cfg = config_lib.default_config('synthetic', encoder, 'smoke').model
  cfg.encoder, cfg.attention, cfg.projection = encoder, attention, projection
  cfg.dropout = 0.0
  return cfg


def pytest_collection_modifyitems(config, items):
  """Slow modules first — tests/end_to_end/ and any module with a test marked
  `slow` or `heavy` — then the rest in collection order. With two workers, each taking
  a whole module at a time (`--dist loadfile`, in this order:
  `--no-loadscope-reorder`), the last modules to start are then short ones,
  so neither worker waits long for the other at the end."""
  del config
  slow_files = {item.path for item in items
                if 'end_to_end' in item.path.parts or item.get_closest_marker('slow')
                or item.get_closest_marker('heavy')}
  items[:] = sorted(items, key=lambda item: item.path not in slow_files)  # stable: order kept within


@pytest.fixture(scope='session')
def smoke_trained(tmp_path_factory):
  """The synthetic smoke model of `helpers.synthetic_config()` (no analyses),
  trained once per test process. A module that only reads it, or adds
  analyses to it, starts from a copy (`helpers.trained_copy`): the copy
  restores instead of training again, as any rerun of a finished workdir does."""
  import helpers  # pylint: disable=g-import-not-at-top
  workdir = tmp_path_factory.mktemp('smoke_trained') / 'synthetic'
  with jax.numpy_dtype_promotion('standard'):  # training runs optax (optax_promotion)
    helpers.run(helpers.synthetic_config(), workdir)
  return workdir


@pytest.fixture(scope='session')
def tfds_dir(tmp_path_factory):
  """One prepared-data folder for the whole session (real data prepares once)."""
  return str(tmp_path_factory.mktemp('tfds'))


requires_real_data = pytest.mark.skipif(
    not REAL_DATA, reason='set ATTN_JAX_DATA to the data folder (../shared/data) to run')


@pytest.fixture
def optax_promotion():
  """optax's Adam bias correction raises a float to an int32 step count,
  which strict dtype promotion rejects; tests that run the optimiser use
  standard promotion (rank promotion stays strict)."""
  with jax.numpy_dtype_promotion('standard'):
    yield


@pytest.fixture(autouse=True, scope='module')
def _release_compiled_programs():
  """Each test module's compiled programs are let go when it ends.

  jit's in-memory caches keep every executable of the session alive, and each
  holds its own memory mappings; the whole suite in one process ran into
  XLA aborting while writing an executable late in the run. What a later
  module needs again is read back from the session's persistent cache.
  """
  yield
  jax.clear_caches()
