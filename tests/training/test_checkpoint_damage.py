"""Checkpoints that are damaged, on a full disk or shared: one-line errors
naming the step folder, never an orbax traceback or a wrong "does not fit",
and files with the permissions the umask gives."""

import os
import shutil
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax.core.errors import CheckpointError, StorageError
from attn_jax.training.checkpoints import MANIFEST, CheckpointStore

PARAMS = {'w': jnp.asarray(np.random.default_rng(0).normal(size=500), jnp.float32),
          'b': {'x': jnp.asarray(np.random.default_rng(1).normal(size=(30, 4)), jnp.float32)}}
root_only = pytest.mark.skipif(os.geteuid() != 0, reason='mounting a file system needs root')


@pytest.fixture(scope='module')
def saved(tmp_path_factory):
  workdir = tmp_path_factory.mktemp('saved')
  with CheckpointStore(str(workdir)) as store:
    store.save_best(120, PARAMS, {'epoch': 2, 'step': 120})
  return workdir


def _biggest(folder, pattern):
  return max(folder.glob(pattern), key=lambda p: p.stat().st_size)


def _flip(path):
  data = bytearray(path.read_bytes())
  for i in range(len(data) // 3, len(data) // 3 + 8):
    data[i] ^= 0xFF
  path.write_bytes(bytes(data))


DAMAGE = {
    'flipped array bytes': lambda d: _flip(_biggest(d, 'params/ocdbt.process_0/d/*')),
    'truncated array file': lambda d: _biggest(d, 'params/ocdbt.process_0/d/*').write_bytes(b''),
    'missing array file': lambda d: os.remove(_biggest(d, 'params/ocdbt.process_0/d/*')),
    'damaged _METADATA': lambda d: (d / 'params' / '_METADATA').write_text('{"tree_metadata": '),
    'damaged manifest.ocdbt': lambda d: _flip(d / 'params' / 'manifest.ocdbt'),
    'damaged _CHECKPOINT_METADATA': lambda d: (d / '_CHECKPOINT_METADATA').write_text('{'),
    'damaged selection json': lambda d: (d / 'selection' / 'metadata').write_text('{"epoch": 2,'),
}


def _restore_error(workdir) -> str:
  with CheckpointStore(str(workdir)) as store, pytest.raises(CheckpointError) as error:
    store.restore_best(PARAMS)
  return str(error.value)


@pytest.mark.parametrize('damage', DAMAGE)
def test_damage_is_one_line_naming_the_step_folder(saved, tmp_path, damage):
  copy = tmp_path / 'copy'
  shutil.copytree(saved, copy)
  DAMAGE[damage](copy / 'checkpoints' / 'best' / '120')
  message = _restore_error(copy)
  assert '\n' not in message and 'does not fit' not in message
  assert f'{copy}/checkpoints/best/120 is damaged' in message and 'new --workdir' in message


# Orbax leaves asyncio work behind when an array file is unreadable: a callback on its
# closed event loop, reported during this test, and a never-awaited coroutine, which may be
# collected during a later test (setup.cfg filters that one by name, suite-wide).
@pytest.mark.filterwarnings('ignore::pytest.PytestUnraisableExceptionWarning')
@pytest.mark.parametrize('damage', ['truncated array file', 'damaged _METADATA',
                                    'damaged selection json'])
def test_damage_without_a_manifest_is_diagnosed_too(saved, tmp_path, damage):
  """Checkpoints written before the sha256 manifests, classified by orbax's errors."""
  copy = tmp_path / 'copy'
  shutil.copytree(saved, copy)
  step = copy / 'checkpoints' / 'best' / '120'
  os.remove(step / MANIFEST)
  DAMAGE[damage](step)
  message = _restore_error(copy)
  assert '\n' not in message and f'{step} cannot be read' in message and 'Keep the folder' in message


def _tree(folder):
  return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size, p.stat().st_mode)
          for p in folder.rglob('*')}


def test_restoring_writes_nothing(saved):
  before = _tree(saved)
  with CheckpointStore(str(saved)) as store:
    params, selection = store.restore_best(PARAMS)
    assert store.restore_latest(PARAMS) is None
  assert selection == {'epoch': 2, 'step': 120}
  np.testing.assert_array_equal(params['w'], PARAMS['w'])
  assert _tree(saved) == before


@pytest.mark.parametrize('umask', [0o022, 0o002])
def test_checkpoint_files_get_the_permissions_of_the_umask(tmp_path, umask):
  old = os.umask(umask)
  try:
    with CheckpointStore(str(tmp_path)) as store:
      store.save_best(3, PARAMS, {'step': 3})
  finally:
    os.umask(old)
  modes = {p: p.stat().st_mode & 0o777 for p in (tmp_path / 'checkpoints').rglob('*')}
  assert any(p.name == MANIFEST for p in modes)
  for path, mode in modes.items():
    assert mode == (0o777 if path.is_dir() else 0o666) & ~umask, path


@root_only
def test_a_full_disk_is_a_storage_error_and_keeps_the_previous_checkpoint(tmp_path):
  disk = tmp_path / 'disk'
  disk.mkdir()
  subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=200k', 'tmpfs', str(disk)], check=True)
  try:
    small = {'w': jnp.ones(10)}
    with CheckpointStore(str(disk)) as store:
      store.save_latest(1, small, {'epoch': 0})
    big = {'w': jnp.asarray(np.random.default_rng(0).normal(size=100_000), jnp.float32)}
    with CheckpointStore(str(disk)) as store, pytest.raises(StorageError) as error:
      store.save_latest(2, big, {'epoch': 1})
    assert '\n' not in str(error.value)
    assert f'cannot write {disk}/checkpoints/latest/2: the disk is full' in str(error.value)
    assert sorted(os.listdir(disk / 'checkpoints' / 'latest')) == ['1']  # no temporary folder left
    with CheckpointStore(str(disk)) as store:
      state, progress = store.restore_latest(small)
    assert progress == {'epoch': 0} and jax.tree.leaves(state)[0].shape == (10,)
  finally:
    subprocess.run(['umount', str(disk)], check=True)
