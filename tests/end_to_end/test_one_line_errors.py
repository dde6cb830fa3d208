"""Odd input ends in one line naming the problem and the fix, with a non-zero
exit status, never a traceback (the cases a fault probe found, issue 53)."""

import json
import os
import subprocess
import sys

import pytest

from attn_jax.core import atomic_io, compilation, estimates
from attn_jax.core.errors import StorageError
from attn_jax.data.builders import staging
from attn_jax.tables import report_command_line as report_cli
from attn_jax.studies import __main__ as studies_cli
import helpers



def test_report_data_on_a_missing_file_or_a_folder(capsys, tmp_path):
  assert 'does not exist: give the data_splits.json' in helpers.one_line_exit(
      capsys, report_cli.main, ['data', str(tmp_path / 'missing.json')])
  assert 'is a folder: give the data_splits.json' in helpers.one_line_exit(capsys, report_cli.main, ['data', str(tmp_path)])
  (tmp_path / 'list.json').write_text('[1, 2]')
  assert 'is not a JSON object' in helpers.one_line_exit(capsys, report_cli.main, ['data', str(tmp_path / 'list.json')])


def test_report_ss_data_on_a_folder_without_statistics(capsys, tmp_path):
  assert "statistics.json does not exist: give a folder holding the statistics.json" in helpers.one_line_exit(
      capsys, report_cli.main, ['ss-data', str(tmp_path)])


def test_a_study_report_on_a_root_that_is_not_there(capsys, tmp_path):
  assert 'is not a folder: give the root a `python -m attn_jax.studies run jw_grid` wrote' in helpers.one_line_exit(
      capsys, studies_cli.main, ['report', 'jw_grid', f'--root={tmp_path / "typo"}'])


def test_report_wp_on_a_run_without_its_experiments(capsys, smoke_trained):
  assert 'holds no W&P experiment results' in helpers.one_line_exit(capsys, report_cli.main, ['wp', str(smoke_trained)])


def test_report_reproduce_out_that_is_a_file(capsys, smoke_trained, tmp_path):
  (tmp_path / 'report').write_text('x')
  assert '--out' in helpers.one_line_exit(capsys, report_cli.main,
                                  ['reproduce', str(smoke_trained), '--out', str(tmp_path / 'report')])


def test_a_file_where_a_folder_belongs(tmp_path, monkeypatch):
  (tmp_path / 'file').write_text('x')
  with pytest.raises(StorageError, match=r'the vectors directory .*/file/a/b \(its parent .*/file\) is a file'):
    atomic_io.require_folder(str(tmp_path / 'file' / 'a' / 'b'), 'the vectors directory', 'give a folder')
  atomic_io.require_folder(str(tmp_path / 'new' / 'a'), 'a folder to be made', 'give a folder')  # missing is fine
  with pytest.raises(StorageError, match='the workdir .* is a file, not a folder'):
    atomic_io.require_folder(str(tmp_path / 'file'), 'the workdir', 'give a folder')
  with pytest.raises(StorageError, match='the compilation cache .* is a file, not a folder'):
    compilation.enable_cache(str(tmp_path / 'file'))
  with pytest.raises(StorageError, match='the tfds data dir .* is a file, not a folder'):
    staging.prepare_staged('sst', str(tmp_path / 'file'), str(tmp_path / 'file' / 'v'), lambda root: root)
  assert 'choose another directory (run.py: --workdir, --output_dir; report: --out, --save)' in str(
      atomic_io.storage_error(str(tmp_path / 'x'), OSError(28, 'No space left on device')))


@pytest.mark.parametrize('rates', [{'MACHINE': ['a list']}, {'MACHINE': 'a string'}, ['a list'],
                                   {'MACHINE': {'key': {'rate': 1e-300}}}])
def test_a_damaged_rates_file_is_no_rates(tmp_path, rates):
  path = tmp_path / 'rates.json'
  path.write_text(json.dumps(rates).replace('MACHINE', estimates.machine()))
  measured = estimates.MeasuredRates(str(path))
  assert measured.get('key') is None
  measured.put('key', 2.0, 'steps/s')
  assert measured.get('key') == 2.0
  assert estimates.duration(1e300) == '> 1000 h' and estimates.duration(float('inf')) == '> 1000 h'


@pytest.mark.parametrize('text,says,name,extra', [
    ('def get_config(:\n  pass\n', 'line 1: invalid syntax; fix the file', 'config.py', []),
    ('def get_config():\n  return None\n', 'get_config() returned None, not the ml_collections.ConfigDict',
     'config.py', []),
    # with an override: absl's parser applied it to None (46 lines of traceback before)
    ('def get_config():\n  return None\n', 'get_config() returned None, not the', 'config.py',
     ['--config.train.epochs=2']),
    ('def get_config():\n  raise ValueError("boom")\n', 'get_config() raised ValueError: boom', 'config.py', []),
    ('import no_such_module\ndef get_config():\n  return None\n',
     "could not be imported (ModuleNotFoundError: No module named 'no_such_module')", 'config.py', []),
    ('def get_config():\n  return {"a": 1}\n', 'get_config() returned dict, not the', 'config.py', []),
    # issue 76: each with an override too (absl applies it to what get_config returned)
    ('def get_config():\n  raise ValueError("boom")\n', 'get_config() raised ValueError: boom', 'config.py',
     ['--config.x=1']),
    ('import no_such_module\ndef get_config():\n  return None\n',
     "could not be imported (ModuleNotFoundError: No module named 'no_such_module')", 'config.py', ['--config.x=1']),
    ('def get_config():\n  return [1, 2]\n', 'get_config() returned list, not the', 'config.py', ['--config.x=1']),
    ('', 'defines no get_config()', 'config.py', []),
    ('def get_config():\n  return None\n', 'is not a Python file (.py)', 'config', []),
])
def test_a_config_file_that_does_not_parse_or_returns_nothing(tmp_path, text, says, name, extra):
  (tmp_path / name).write_text(text)
  result = subprocess.run([sys.executable, 'run.py', f'--config={tmp_path / name}', *extra], capture_output=True,
                          text=True, cwd=helpers.ROOT, check=False)
  assert result.returncode != 0 and result.stderr.strip().splitlines() == [result.stderr.strip()]
  assert says in result.stderr and 'Traceback' not in result.stderr
  assert name in result.stderr


def test_a_study_report_names_a_damaged_member_file(capsys, smoke_trained, tmp_path):
  """A seed's damaged eval.json is named, not silently left out of the table."""
  member = tmp_path / 'root' / 'sst_average_dot' / 'seed0'
  helpers.trained_copy(smoke_trained, member)
  (member / 'eval.json').write_text('\x00garbage{')
  err = helpers.one_line_exit(capsys, studies_cli.main, ['report', 'jw_grid', f'--root={tmp_path / "root"}'])
  assert 'seed0/eval.json is damaged (JSONDecodeError); rerun the study' in err


def test_report_reproduce_refuses_a_text_too_long_to_explain(capsys, smoke_trained, tmp_path):
  err = helpers.one_line_exit(capsys, report_cli.main, ['reproduce', str(smoke_trained), '--out', str(tmp_path / 'r'),
                                                '--text', ' '.join(['good'] * 6000)])
  assert '--text: text 0 has 6,000 words, more than max_words=5,000' in err


@pytest.mark.parametrize('command', [['-m', 'attn_jax.studies', 'report', 'wp_table2', '--root=results/wp_table2'],
                                     ['-m', 'attn_jax.report', 'training', 'results/sst_bilstm']])
def test_a_reader_that_stops_reading_and_a_latin1_terminal_get_no_traceback(command):
  gone = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=helpers.ROOT, text=True)
  gone.stdout.close()  # `… | head -0`: the reader is gone before the first line
  _, err = gone.communicate(timeout=300)
  assert gone.returncode == 0 and err == '', err
  latin1 = subprocess.run([sys.executable, *command], capture_output=True, cwd=helpers.ROOT, check=False,
                          env={**os.environ, 'PYTHONIOENCODING': 'latin-1'})
  assert latin1.returncode == 0 and latin1.stderr == b'', latin1.stderr[-2000:]
  text = latin1.stdout.decode('latin-1')
  assert '0.827 ± 0.009' in text or '0.830 (0.808)' in text  # ± is latin-1; ≡, Δ, τ get stand-ins


@pytest.mark.parametrize('seeds', ['0', '-1'])
def test_a_study_asked_for_no_seeds_or_fewer_is_refused(seeds, capsys):
  from attn_jax.studies import __main__ as studies_cli  # pylint: disable=g-import-not-at-top
  with pytest.raises(SystemExit) as exit_:
    studies_cli.main(['run', 'jw_grid', f'--seeds={seeds}', '--root=/nonexistent/never/written'])
  err = capsys.readouterr().err
  assert exit_.value.code == 2 and err.strip().splitlines() == [err.strip()]
  assert f'--seeds={seeds}: give the number of seeds per arm, 1 or more' in err
