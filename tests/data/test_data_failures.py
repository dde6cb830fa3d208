"""Data faults: offline, non-standard sources, failed preparations, bad bytes, full disks."""

import dataclasses
import gzip
import os
import socket
import subprocess
import sys
import tempfile
import time
import warnings

import pytest

from attn_jax import config as config_lib
from attn_jax.core import atomic_io, leases
from attn_jax.core.registry import DATASETS
from attn_jax.data import builders, dataset as dataset_lib, network, source_record, sources
from attn_jax.data.builders import staging
from attn_jax.data.builders.builder import NonstandardDataWarning
from attn_jax.data.builders.imdb import AclImdb
from attn_jax.data.builders.sst import SstTrees
from attn_jax.data.datasets.dataset_spec import with_files
from attn_jax.core.errors import DataError, StorageError
import archives
import helpers
from test_builders import imdb_reviews

ROOT = helpers.ROOT


def declared(monkeypatch, dataset, **changes):
  """`dataset`'s registered declaration with `changes`, for the test."""
  monkeypatch.setitem(DATASETS, dataset, dataclasses.replace(DATASETS[dataset], **changes))


def no_network(monkeypatch):
  def refuse(*_, **__):
    raise OSError('Network is unreachable')
  monkeypatch.setattr(socket, 'create_connection', refuse)


def leftovers(tfds_root):
  return [n for n in os.listdir(tfds_root) if n.startswith('.attn_jax-preparing-')]


# --- offline ---------------------------------------------------------------------------


def test_offline_with_no_local_files_fails_in_seconds_naming_what_to_put_where(tmp_path, monkeypatch):
  monkeypatch.delenv(sources.ENV_VAR, raising=False)
  no_network(monkeypatch)
  monkeypatch.setattr(AclImdb, 'download_and_prepare',
                      lambda *_, **__: pytest.fail('tried to download'))
  start = time.monotonic()
  with pytest.raises(DataError) as error:
    builders.load_raw('imdb', None, str(tmp_path / 'tfds'))
  assert time.monotonic() - start < 10
  message = str(error.value)
  assert '\n' not in message and 'ai.stanford.edu cannot be reached' in message
  for part in ('$ATTN_JAX_DATA', '--config.data.manual_dir', 'imdb/',
               'aclImdb_train_test.tar.gz', 'aclImdb_v1.tar.gz', sources.source('imdb').url):
    assert part in message


def test_the_probe_gives_up_on_a_hanging_name_lookup(monkeypatch):
  def hang(*_, **__):
    time.sleep(5)
    raise OSError('timed out')

  monkeypatch.setattr(socket, 'create_connection', hang)
  start = time.monotonic()
  assert not network.reachable('https://ai.stanford.edu/x.tar.gz', timeout=0.2)
  assert time.monotonic() - start < 2


def test_the_probe_goes_through_the_configured_proxy(monkeypatch):
  monkeypatch.setenv('https_proxy', 'http://proxy.example:3128')
  monkeypatch.delenv('no_proxy', raising=False)
  monkeypatch.delenv('NO_PROXY', raising=False)
  assert network.endpoint('https://ai.stanford.edu/x.tar.gz') == ('proxy.example', 3128)
  monkeypatch.delenv('https_proxy')
  monkeypatch.delenv('HTTPS_PROXY', raising=False)
  assert network.endpoint('https://ai.stanford.edu/x.tar.gz') == ('ai.stanford.edu', 443)


def test_a_prepared_copy_is_used_offline(tmp_path, monkeypatch):
  archives.write_sst(tmp_path / 'data')
  with pytest.warns(NonstandardDataWarning):
    first, record = builders.load('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  monkeypatch.delenv(sources.ENV_VAR, raising=False)
  no_network(monkeypatch)
  with pytest.warns(NonstandardDataWarning):
    assert builders.load('sst', None, str(tmp_path / 'tfds')) == (first, record)


def test_preparing_leaves_nothing_in_the_temporary_folder(tmp_path, monkeypatch):
  # tfds's own metadata lookup left an empty folder in /tmp per builder.
  temp = tmp_path / 'tmp'
  temp.mkdir()
  monkeypatch.setattr(tempfile, 'tempdir', str(temp))
  archives.write_sst(tmp_path / 'data')
  with pytest.warns(NonstandardDataWarning):
    builders.load('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert not os.listdir(temp)


def test_the_download_path_prepares_and_records_under_the_official_names(tmp_path, monkeypatch):
  folder = archives.write_sst(tmp_path / 'data')
  downloaded = {s: os.path.join(folder, f'{s}.txt') for s in ('train', 'dev', 'test')}
  declared(monkeypatch, 'sst', source=dataclasses.replace(sources.source('sst'),
                                                         download=lambda dl: downloaded))
  monkeypatch.setattr(network, 'reachable', lambda url: True)
  monkeypatch.delenv(sources.ENV_VAR, raising=False)
  with pytest.warns(NonstandardDataWarning):
    raw, record = builders.load('sst', None, str(tmp_path / 'tfds'))
  assert len(raw['test']) == 3 and record['files']['dev']['name'] == 'dev.txt'
  assert 'test.txt: 3 trees, the official release has 2210: truncated, or a different copy?' in record['notes']
  assert not leftovers(tmp_path / 'tfds')


# --- the source record -----------------------------------------------------------------


_LONG = ['(3 (3 It) (3 is) (3 a) (3 good) (3 fun) (3 film))',
         '(1 (1 A) (1 bad) (1 and) (1 very) (1 dull) (1 film) (1 too))',
         '(4 (4 A) (4 great) (4 film) (4 with) (4 a) (4 great) (4 cast) (4 !))']
LONG_TREES = {'train': _LONG, 'dev': _LONG[:2] + _LONG, 'test': _LONG[::-1]}  # past J&W's filter


def sst_cfg(tmp_path):
  cfg = config_lib.default_config('sst', 'bilstm', 'smoke').data
  cfg.manual_dir, cfg.tfds_data_dir = str(tmp_path / 'data'), str(tmp_path / 'tfds')
  return cfg


def test_a_nonstandard_source_is_recorded_with_the_data_and_warned_once(tmp_path):
  archives.write_sst(tmp_path / 'data', LONG_TREES)
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    data = dataset_lib.load_dataset(sst_cfg(tmp_path), ('train', 'test'))
  lines = [str(w.message) for w in caught if w.category is NonstandardDataWarning]
  assert len(lines) == 1 and '\n' not in lines[0]
  assert 'train.txt: 3 trees, the official release has 8544' in lines[0]
  assert source_record.RECORD_FILE in lines[0]
  source = data.source
  assert source['standard'] is False and sorted(source['files']) == ['dev', 'test', 'train']
  train = source['files']['train']
  path = tmp_path / 'data' / 'sst' / 'train.txt'
  assert train == {'name': 'train.txt', 'bytes': path.stat().st_size,
                   'sha256': atomic_io.sha256_file(str(path)), 'matches_reference': False}
  assert any(n.startswith('train.txt: ') and 'differs from the reference release' in n
             for n in source['notes'])
  assert 'dev.txt: 5 trees, the official release has 1101: truncated, or a different copy?' in source['notes']
  assert data.summary()['source'] == source
  prepared = tmp_path / 'tfds' / 'sst_trees' / '1.0.0'
  assert source_record.read(str(prepared)) == source
  assert (prepared / builders.SIGNATURE_FILE).exists()


def test_reference_files_are_standard_and_the_fingerprint_ignores_the_record(tmp_path, monkeypatch):
  archives.write_sst(tmp_path / 'data', LONG_TREES)
  with pytest.warns(NonstandardDataWarning):
    nonstandard = dataset_lib.load_dataset(sst_cfg(tmp_path), ('train', 'test'))
  # Pretend the small files are the reference release, with these counts.
  declared(monkeypatch, 'sst', reference={
      role: (sources.KnownFile(f['name'], f['bytes'], f['sha256']),)
      for role, f in nonstandard.source['files'].items()})
  monkeypatch.setattr(SstTrees, 'OFFICIAL_TREES', {'train': 3, 'dev': 5, 'test': 3})
  cfg = sst_cfg(tmp_path)
  cfg.tfds_data_dir = str(tmp_path / 'other_tfds')
  with warnings.catch_warnings():
    warnings.simplefilter('error', NonstandardDataWarning)
    fresh = dataset_lib.load_dataset(cfg, ('train', 'test'), vocab=nonstandard.vocab)
  assert fresh.source['standard'] is True and fresh.source['notes'] == []
  assert all(f['matches_reference'] for f in fresh.source['files'].values())
  assert fresh.fingerprint == nonstandard.fingerprint


def test_reference_release_matches_the_shared_data_checksums():
  """The sha256 table is that of the files in ../shared/data (checked when they are here)."""
  root = os.environ.get(sources.ENV_VAR)
  if not root:
    pytest.skip('set ATTN_JAX_DATA to check against the real files')
  for spec in with_files():
    found = sources.locate(spec.name, root)
    for role, known in spec.reference.items():
      if role in found:
        size = os.path.getsize(found[role])
        assert (known[0].name, known[0].bytes) == (os.path.basename(found[role]), size)
        assert known[0].sha256 == atomic_io.sha256_file(found[role])


def test_a_copy_prepared_before_records_were_kept(tmp_path, monkeypatch):
  archives.write_sst(tmp_path / 'data')
  with pytest.warns(NonstandardDataWarning):
    _, record = builders.load('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  path = tmp_path / 'tfds' / 'sst_trees' / '1.0.0' / source_record.RECORD_FILE
  path.unlink()
  with pytest.warns(NonstandardDataWarning):  # counts unknown: prepared again
    assert builders.load('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))[1] == record
  path.unlink()
  declared(monkeypatch, 'sst', reference={
      role: (sources.KnownFile(f['name'], f['bytes'], f['sha256']),)
      for role, f in record['files'].items()})
  monkeypatch.setattr(SstTrees, '_read', lambda *_: pytest.fail('prepared again'))
  _, recovered = builders.load('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert recovered['standard'] and source_record.read(str(path.parent)) == recovered


# --- a failed preparation keeps the prepared copy -------------------------------------


def test_a_failed_preparation_keeps_the_good_prepared_copy(tmp_path, monkeypatch):
  path = archives.write_imdb(tmp_path / 'data', imdb_reviews(3))
  with open(path, 'rb') as f:
    good = f.read()
  first = builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  before = helpers.snapshot(tmp_path / 'tfds' / 'acl_imdb')
  archives.write_imdb(tmp_path / 'data', imdb_reviews(200))
  archives.truncate(path)
  with pytest.raises(DataError, match='truncated or corrupt'):
    builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert helpers.snapshot(tmp_path / 'tfds' / 'acl_imdb') == before
  assert not leftovers(tmp_path / 'tfds')
  with open(path, 'wb') as f:
    f.write(good)
  monkeypatch.setattr(AclImdb, '_read', lambda *_: pytest.fail('prepared again'))
  assert builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds')) == first


def test_changed_sources_replace_the_prepared_copy_and_its_record(tmp_path):
  archives.write_sst(tmp_path / 'data')
  _, first = builders.load('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  archives.write_sst(tmp_path / 'data', dict(archives.SST_TREES, dev=archives.SST_TREES['dev'][:1]))
  raw, second = builders.load('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert len(raw['dev']) == 1 and second['files']['dev'] != first['files']['dev']
  assert 'dev.txt: 1 trees, the official release has 1101: truncated, or a different copy?' in second['notes']
  assert not leftovers(tmp_path / 'tfds')


# --- two preparations at once -------------------------------------------------------------


def test_two_first_runs_prepare_a_dataset_once_and_both_read_it(tmp_path):
  archives.write_sst(tmp_path / 'data')
  # The first preparation is slowed down, so that the second starts while it runs.
  code = ('import sys, time; from attn_jax.data import builders; from attn_jax.data.builders.sst import SstTrees\n'
          'split = SstTrees._split_generators\n'
          'SstTrees._split_generators = lambda *a: (time.sleep(float(sys.argv[3])), split(*a))[1]\n'
          'raw, _ = builders.load("sst", sys.argv[1], sys.argv[2]); print("dev", len(raw["dev"]))')
  command = [sys.executable, '-c', code, str(tmp_path / 'data'), str(tmp_path / 'tfds')]
  env = {**os.environ, 'PYTHONPATH': ROOT}
  first = subprocess.Popen(command + ['4'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
  time.sleep(2)
  second = subprocess.Popen(command + ['0'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
  results = [p.communicate(timeout=300) + (p.returncode,) for p in (first, second)]
  assert [r[2] for r in results] == [0, 0], [r[1][-2000:] for r in results]
  dev = f'dev {len(archives.SST_TREES["dev"])}'
  assert all(r[0].strip().endswith(dev) for r in results)
  assert 'preparation of sst' in results[1][0] and 'waiting for' in results[1][0]  # it waited, then read
  assert 'Generating' not in results[1][1]  # and prepared nothing itself
  assert not leftovers(tmp_path / 'tfds')


def test_a_staging_folder_is_removed_only_when_its_preparation_is_gone(tmp_path):
  root = tmp_path / 'tfds'
  archives.write_sst(tmp_path / 'data')
  other = root / f'{staging.STAGING_PREFIX}imdb-live'  # another dataset's, its owner alive
  dead = root / f'{staging.STAGING_PREFIX}sst-dead'  # left by a killed preparation of sst
  for folder in (other, dead):
    os.makedirs(folder)
  with leases.lease(staging.lease_path(str(root), 'imdb'), 'preparation of imdb', log=lambda _: None):
    builders.load('sst', str(tmp_path / 'data'), str(root))
    assert other.exists() and not dead.exists()
  assert sorted(leftovers(root)) == [other.name]


# --- bad bytes and truncation ------------------------------------------------------------


def test_invalid_utf8_in_a_tree_file_names_line_and_byte(tmp_path):
  folder = archives.write_sst(tmp_path / 'data')
  with open(os.path.join(folder, 'dev.txt'), 'wb') as f:
    f.write(b'(1 (1 Weak) (2 plot))\n(3 (3 Nic\xe9) (2 cast))\n')
  with pytest.raises(DataError, match=r'dev.txt: line 2 \(byte 31\) is not valid UTF-8.*Replace it'):
    builders.load_raw('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_a_tree_file_cut_inside_a_character_says_truncated(tmp_path):
  folder = archives.write_sst(tmp_path / 'data', dict(archives.SST_TREES, test=['(3 (2 Caf\u00e9) (3 ok))']))
  path = os.path.join(folder, 'test.txt')
  with open(path, 'rb') as f:
    data = f.read()
  with open(path, 'wb') as f:
    f.write(data[:data.index(b'\xa9')])
  with pytest.raises(DataError, match=r'test.txt: line 1 \(byte 9\).*cut inside a character'):
    builders.load_raw('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_a_tree_file_cut_mid_line_names_the_line(tmp_path):
  folder = archives.write_sst(tmp_path / 'data')
  path = os.path.join(folder, 'train.txt')
  with open(path, 'rb') as f:
    data = f.read()
  with open(path, 'wb') as f:
    f.write(data[:-12])
  with pytest.raises(DataError, match=r'train.txt is malformed: line 4: unbalanced "\(" \(truncated line\?\)'):
    builders.load_raw('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_invalid_utf8_in_a_csv_names_the_line(tmp_path):
  folder = archives.write_ag_news(tmp_path / 'data', {'test': [(1, 'a', 'b')]})
  with gzip.open(os.path.join(folder, 'test.csv.gz'), 'wb') as f:
    f.write(b'"1","t","ok"\n"2","t","bad \xff byte"\n')
  with pytest.raises(DataError, match=r'test.csv.gz \(uncompressed\): line 2 \(byte 26\) is not valid UTF-8'):
    builders.load_raw('agnews', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_a_gzip_cut_midway_is_truncated(tmp_path):
  folder = archives.write_ag_news(tmp_path / 'data', {'test': [(1, f'title {i}', 'text') for i in range(300)]})
  archives.truncate(os.path.join(folder, 'test.csv.gz'))
  with pytest.raises(DataError, match=r'test.csv.gz is truncated or corrupt \(EOFError'):
    builders.load_raw('agnews', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_invalid_utf8_in_an_archive_member_names_member_and_line(tmp_path):
  reviews = imdb_reviews(2)
  reviews[('train', 'pos', 1, 8)] = b'Fine.\nBut \x80 here.'
  archives.write_imdb(tmp_path / 'data', reviews)
  with pytest.raises(DataError, match=r'aclImdb_train_test.tar.gz, member aclImdb/train/pos/1_8.txt: '
                                      r'line 2 \(byte 10\) is not valid UTF-8'):
    builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


# --- full or read-only tfds data dir ----------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
  """A 1 MiB tmpfs (root only)."""
  if os.geteuid() != 0:
    pytest.skip('mounting a tmpfs needs root')
  disk = tmp_path / 'disk'
  disk.mkdir()
  if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', str(disk)],
                    capture_output=True, check=False).returncode:
    pytest.skip('cannot mount a tmpfs here')
  yield disk
  subprocess.run(['umount', '-l', str(disk)], check=False)


def fill(disk, leave=4096):
  """Fills the disk but for `leave` bytes."""
  stat = os.statvfs(disk)
  with open(os.path.join(disk, 'filler'), 'wb') as f:
    f.write(b'\0' * max(stat.f_bavail * stat.f_frsize - leave, 0))


def test_a_full_disk_is_one_line_and_keeps_the_prepared_copy(tmp_path, small_disk):
  tfds = str(small_disk / 'tfds')
  archives.write_sst(tmp_path / 'data')
  first = builders.load_raw('sst', str(tmp_path / 'data'), tfds)
  before = helpers.snapshot(tfds)
  fill(small_disk)
  archives.write_sst(tmp_path / 'data', dict(archives.SST_TREES, dev=archives.SST_TREES['dev'][:1]))
  with pytest.raises(StorageError) as error:
    builders.load_raw('sst', str(tmp_path / 'data'), tfds)
  message = str(error.value)
  assert '\n' not in message and f'tfds data dir {tfds}: No space left on device' in message
  assert '--config.data.tfds_data_dir' in message and '$TFDS_DATA_DIR' in message
  assert helpers.snapshot(tfds) == before and not leftovers(tfds)
  archives.write_sst(tmp_path / 'data')
  assert builders.load_raw('sst', str(tmp_path / 'data'), tfds) == first  # not prepared again


def test_a_read_only_data_dir_reads_its_prepared_copy_and_refuses_cleanly(tmp_path, small_disk):
  tfds = str(small_disk / 'tfds')
  archives.write_sst(tmp_path / 'data')
  first = builders.load_raw('sst', str(tmp_path / 'data'), tfds)
  subprocess.run(['mount', '-o', 'remount,ro', str(small_disk)], check=True)
  assert builders.load_raw('sst', str(tmp_path / 'data'), tfds) == first
  archives.write_sst(tmp_path / 'data', dict(archives.SST_TREES, dev=archives.SST_TREES['dev'][:1]))
  with pytest.raises(StorageError, match=f'tfds data dir {tfds}: Read-only file system.*'
                                         r'--config.data.tfds_data_dir or \$TFDS_DATA_DIR'):
    builders.load_raw('sst', str(tmp_path / 'data'), tfds)
