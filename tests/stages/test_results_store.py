"""Analysis results on disk: one folder per key, verified before reuse,
never replaced by other settings, not rewritten when nothing changed."""

import json
import os
import shutil

import jax
import pytest

from attn_jax import contents, pipeline
from attn_jax.core import atomic_io
from attn_jax.tables import report_command_line as report, jain_wallace as reproduction
from attn_jax.core.errors import IntegrityError, StorageError
from attn_jax.workdirs.restore import restore
from attn_jax.stages import stage_store as store
import helpers

pytestmark = pytest.mark.usefixtures('optax_promotion')
ANALYSES = 'gradient,loo,kendall'


@pytest.fixture(scope='module')
def trained(smoke_trained, tmp_path_factory):
  workdir = helpers.trained_copy(smoke_trained, tmp_path_factory.mktemp('trained') / 'w')
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(helpers.synthetic_config(top__analyses=ANALYSES), workdir)
  return workdir


@pytest.fixture
def copy(trained, tmp_path):
  shutil.copytree(trained, tmp_path / 'w')
  return tmp_path / 'w'


def rerun(workdir, logs=None, **overrides):
  with jax.numpy_dtype_promotion('standard'):
    return helpers.run(helpers.synthetic_config(top__analyses=ANALYSES, **overrides), workdir, logs)


def results_bytes(workdir, stage):
  with open(os.path.join(helpers.stage_dir(workdir, stage), store.RESULTS), 'rb') as f:
    return f.read()


def test_a_rerun_that_changes_nothing_writes_nothing(copy):
  before = helpers.snapshot(copy, with_mtime=True)
  logs = []
  rerun(copy, logs)
  assert helpers.snapshot(copy, with_mtime=True) == before
  assert sum('verified and skipped' in line for line in logs) == 3


def test_two_settings_coexist_and_the_report_shows_the_most_complete(copy, capsys):
  full = {stage: results_bytes(copy, stage) for stage in ('gradient', 'loo', 'kendall')}
  rerun(copy, analysis__max_docs=20)
  for stage, data in full.items():
    found = store.find(str(copy), stage)
    assert [f.documents for f in found] == [48, 20] and all(f.intact for f in found)
    assert results_bytes(copy, stage) == data  # the full run is untouched
  shown = reproduction.load_found(str(copy))
  assert shown['kendall'].documents == 48
  rows = reproduction.analysis_rows('w', 'synthetic', {k: f.summary for k, f in shown.items()})
  assert all(row[-1].startswith('48 test docs, key ') for row in rows)
  assert any('kendall also has 20 test docs' in line for line in reproduction.alternatives(str(copy), shown))
  listing = contents.describe(str(copy))
  assert '* kendall: 48 test docs' in listing and '  kendall: 20 test docs' in listing


def test_a_sample_analyses_the_same_documents_for_every_seed_and_keys_them(copy):
  import numpy as np  # pylint: disable=g-import-not-at-top
  from attn_jax.stages.stage_runner import sample_indices  # pylint: disable=g-import-not-at-top
  full = {stage: store.load_arrays(store.most_complete(str(copy), stage).directory,
                                   store.most_complete(str(copy), stage).summary)
          for stage in ('gradient', 'kendall')}
  rerun(copy, analysis__sample_docs=20, analysis__sample_seed=3)
  picked = sample_indices(48, 20, 3)
  assert list(picked) == sorted(set(picked.tolist())) and len(picked) == 20
  assert list(picked) != list(range(20))  # a sample, not the first 20
  np.testing.assert_array_equal(picked, sample_indices(48, 20, 3))  # the model's seed plays no part
  for stage, arrays in full.items():
    found = [f for f in store.find(str(copy), stage) if f.documents == 20]
    assert len(found) == 1 and found[0].summary['key']['sample'] == {'docs': 20, 'seed': 3}
    sampled = store.load_arrays(found[0].directory, found[0].summary)
    for name, values in arrays.items():  # row i of the sample is document picked[i] of the split
      if values.ndim and values.shape[0] == 48:
        np.testing.assert_allclose(sampled[name], values[picked][:, :sampled[name].shape[1]]
                                   if values.ndim > 1 else values[picked], rtol=1e-5, atol=1e-6)
  other_seed = [f for f in store.find(str(copy), 'kendall') if f.documents == 20]
  rerun(copy, analysis__sample_docs=20, analysis__sample_seed=4)  # another sample: its own key
  assert len([f for f in store.find(str(copy), 'kendall') if f.documents == 20]) == len(other_seed) + 1


@pytest.mark.heavy  # CI margin
def test_a_dependent_stage_reads_the_inputs_of_its_own_settings(copy):
  replace = helpers.synthetic_config(top__analyses=ANALYSES)
  replace.analysis.loo.mode = 'replace'
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(replace, copy)  # newer loo (and kendall) results of other settings
  logs = []
  rerun(copy, logs)  # back to mode=delete: kendall must read the delete results, not the newest
  assert sum('verified and skipped' in line for line in logs) == 3
  delete = [f for f in store.find(str(copy), 'loo') if f.summary['key']['settings']['mode'] == 'delete']
  kendall = [f for f in store.find(str(copy), 'kendall')
             if f.summary['key']['inputs']['loo'] == delete[0].key_hash]
  assert len(store.find(str(copy), 'kendall')) == 2 and len(kendall) == 1
  assert any(line.startswith('kendall:') and kendall[0].directory in line for line in logs)


@pytest.mark.parametrize('damage', ['flip', 'truncate', 'delete'])
def test_damaged_results_are_named_and_recomputed_identically(copy, damage):
  path = os.path.join(helpers.stage_dir(copy, 'loo'), store.RESULTS)
  original = results_bytes(copy, 'loo')
  if damage == 'flip':
    data = bytearray(original)
    data[len(data) // 2] ^= 0xFF
    open(path, 'wb').write(bytes(data))
  elif damage == 'truncate':
    open(path, 'wb').write(original[:len(original) // 2])
  else:
    os.remove(path)
  assert not store.find(str(copy), 'loo')[0].intact and store.most_complete(str(copy), 'loo') is None
  logs = []
  rerun(copy, logs)
  assert sum(line.startswith(f'loo: {path} is ') and line.endswith('; recomputing') for line in logs) == 1  # once
  assert results_bytes(copy, 'loo') == original
  assert sum('verified and skipped' in line for line in logs) == 2  # gradient, kendall


def test_a_damaged_summary_is_recomputed_and_refusal_is_one_line(copy):
  summary = os.path.join(helpers.stage_dir(copy, 'kendall'), store.SUMMARY)
  original = open(summary, 'rb').read()
  open(summary, 'wb').write(original[:40])
  logs = []
  rerun(copy, logs)
  assert any(f'{summary} is damaged' in line for line in logs)
  timeless = lambda data: {k: v for k, v in json.loads(data).items() if 'second' not in k and k != 'summary_sha256'}
  assert timeless(open(summary, 'rb').read()) == timeless(original)
  results = os.path.join(helpers.stage_dir(copy, 'gradient'), store.RESULTS)
  open(results, 'ab').write(b'x')
  with pytest.raises(IntegrityError, match=r'gradient/test-48docs-\w+/results.npz is damaged or was '
                                           r'edited .*--config.analysis.refuse_damaged'):
    rerun(copy, analysis__refuse_damaged=True)


def test_an_edited_number_or_results_file_is_caught_before_it_is_read(copy):
  gradient = store.most_complete(str(copy), 'gradient')
  assert store.load_arrays(gradient.directory, gradient.summary)['alpha'].shape[0] == 48
  open(os.path.join(gradient.directory, store.RESULTS), 'ab').write(b'\0')
  with pytest.raises(IntegrityError, match='results.npz is damaged or was edited'):
    store.load_arrays(gradient.directory, gradient.summary)
  kendall = store.most_complete(str(copy), 'kendall')
  edited = dict(kendall.summary, documents=kendall.summary['documents'] + 1)  # still valid JSON
  atomic_io.write_json(os.path.join(kendall.directory, store.SUMMARY), edited)
  summary, problem = store.read_summary(kendall.directory)
  assert summary is None and problem.endswith('summary.json was edited or damaged (its content '
                                              'differs from its sha256)')



def test_a_read_only_workdir_reruns_restores_and_is_analysed_elsewhere(copy, tmp_path, capsys):
  expected = {stage: results_bytes(copy, stage) for stage in ('gradient', 'loo')}
  with helpers.read_only_mount(copy):
    with pytest.raises(StorageError):  # it is really read-only
      atomic_io.write_json(str(copy / 'x.json'), {})
    results = rerun(copy)
    assert {k: v for k, v in results.items() if k not in helpers.TIMING_KEYS} == helpers.eval_without_timing(copy)
    assert restore(str(copy)).selection['epoch'] >= 1
    out = tmp_path / 'out'
    with jax.numpy_dtype_promotion('standard'):
      pipeline.run(helpers.synthetic_config(top__analyses=ANALYSES), str(copy), log=lambda _: None,
                   output_dir=str(out))
      pipeline.run(helpers.synthetic_config(top__analyses=ANALYSES, analysis__max_docs=20), str(copy),
                   log=lambda _: None, output_dir=str(out))
    assert {stage: results_bytes(out, stage) for stage in expected} == expected
    assert [f.documents for f in store.find(str(out), 'kendall')] == [48, 20]
    report.main(['analyses', str(copy), str(out)])
  printed = capsys.readouterr().out
  assert 'out: kendall also has 20 test docs' in printed.replace(str(tmp_path) + '/', '')
  assert printed.count('48 test docs, key') >= 2  # both folders report their full run


def test_written_files_follow_the_umask(tmp_path):
  for mask, mode in ((0o022, 0o644), (0o002, 0o664)):
    old = os.umask(mask)
    try:
      path = tmp_path / f'f{mask}.json'
      atomic_io.write_json(str(path), {'a': 1})
    finally:
      os.umask(old)
    assert os.stat(path).st_mode & 0o777 == mode


def test_a_read_only_folder_is_a_one_line_storage_error(tmp_path):
  target = tmp_path / 'ro'
  target.mkdir()
  with helpers.read_only_mount(target):
    with pytest.raises(StorageError, match=r'cannot write .*x.json: the file system is read-only'):
      atomic_io.write_json(str(target / 'x.json'), {})
    assert os.listdir(target) == []  # no temporary file left behind
