"""The persistent compilation cache and the compile-time clock."""

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.core import compilation

# A fresh process: enables the cache in argv[1], compiles one program and
# prints how many programs JAX read from the persistent cache.
CHILD = '''
import sys
import jax, jax.numpy as jnp
from jax import monitoring
from attn_jax.core import compilation
hits = []
monitoring.register_event_listener(
    lambda event, **_: hits.append(1) if event == '/jax/compilation_cache/cache_hits' else None)
assert compilation.enable_cache(sys.argv[1]) == sys.argv[1]
jax.block_until_ready(jax.jit(lambda x: jnp.tanh(x) @ x.T)(jnp.ones((7, 5))))
print(len(hits))
'''


def test_the_clock_counts_a_compilation_and_not_a_cached_call():
  fn = jax.jit(lambda x: jnp.sin(x) * 3.0 + jnp.cos(x))
  x, y = np.ones(13, np.float32), np.full(13, 2.0, np.float32)  # numpy: no eager op compiles
  before = compilation.seconds()
  jax.block_until_ready(fn(x))
  compiled = compilation.seconds()
  jax.block_until_ready(fn(y))
  assert compiled > before
  assert compilation.seconds() == compiled


@pytest.mark.heavy  # CI margin
def test_a_second_process_reads_the_programs_the_first_compiled(tmp_path):
  directory = str(tmp_path / 'cache')
  run = lambda: subprocess.run([sys.executable, '-c', CHILD, directory], capture_output=True,
                               text=True, check=True, env={**os.environ, 'JAX_PLATFORMS': 'cpu'})
  assert run().stdout.split()[-1] == '0'
  assert os.listdir(directory)  # the first process wrote its programs
  assert int(run().stdout.split()[-1]) >= 1


def test_the_default_folder_and_turning_the_cache_off(monkeypatch, tmp_path):
  monkeypatch.setenv(compilation.ENV, str(tmp_path / 'here'))
  assert compilation.default_directory() == str(tmp_path / 'here')
  monkeypatch.delenv(compilation.ENV)
  monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
  assert compilation.default_directory() == os.path.join(str(tmp_path), 'attn_jax', 'jax')
  previous = jax.config.jax_compilation_cache_dir
  try:
    assert compilation.enable_cache('') is None
    assert jax.config.jax_compilation_cache_dir is None
  finally:
    jax.config.update('jax_compilation_cache_dir', previous)


def test_guard_mappings_drops_compiled_programs_near_the_limit(monkeypatch):
  """A HAN meets ~100 padded shapes; each compiled program holds hundreds of
  memory mappings, so near vm.max_map_count the compiled programs are dropped."""
  cleared = []
  monkeypatch.setattr(compilation.jax, 'clear_caches', lambda: cleared.append(1))
  monkeypatch.setattr(compilation, '_map_limit', lambda: 1000)
  monkeypatch.setattr(compilation, '_seen_shapes', set())
  monkeypatch.setattr(compilation, '_map_count', lambda: 100)
  assert not compilation.guard_mappings(('train', (8, 4, 16)))
  monkeypatch.setattr(compilation, '_map_count', lambda: 700)
  assert not compilation.guard_mappings(('train', (8, 4, 16)))  # a known shape: nothing to check
  assert compilation.guard_mappings(('train', (8, 4, 24)))      # a new one past 60 %: dropped
  assert cleared == [1]
  assert not compilation.guard_mappings(('train', (8, 4, 24)))


def test_every_program_is_counted_on_shapes_already_seen(monkeypatch):
  """A study's second model compiles new programs for the first one's shapes:
  the call sites' keys name the program, so the count is taken again."""
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  from attn_jax.data.dataset import EncodedSplit  # pylint: disable=g-import-not-at-top
  from attn_jax.training import evaluation  # pylint: disable=g-import-not-at-top
  keys = []
  monkeypatch.setattr(compilation, 'guard_mappings', keys.append)
  split = EncodedSplit([np.array([2, 5, 6, 3], np.int32)] * 3, np.zeros(3, np.int32), ['a', 'b', 'c'])
  predicts = [lambda params, tokens, lengths, member, extra, k=k: jnp.full(tokens.shape[0], k, jnp.float32)
              for k in (0.25, 0.75)]
  for predict in predicts:
    evaluation.predict_split(predict, None, split, 2, (8,))
  assert len(keys) == 4 and len(set(keys)) == 2  # two batches of one shape, per program
  assert {k[1] for k in keys} == {id(p) for p in predicts}
