"""run.py as a researcher meets it: --help, what to run next, one-line failures."""

import errno
import glob
import os
import subprocess
import sys

import pytest

from attn_jax import config as config_lib, pipeline

import helpers

ROOT = helpers.ROOT
run_cli = helpers.run_py_module()  # once per session: it defines absl flags


def test_help_lists_configs_variants_and_keys():
  result = subprocess.run([sys.executable, 'run.py', '-h'], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
  out = result.stdout
  assert 'Traceback' not in result.stderr and '--output_dir' in out
  for path in glob.glob(os.path.join(ROOT, 'configs', '*.py')):
    assert os.path.basename(path)[:-3] in out
  for variant, about in config_lib.VARIANTS.items():
    assert about in out and variant in out
  for key in config_lib.KEY_HELP:
    assert f'--config.{key} ' in out
  for key, _ in config_lib.flat_items(config_lib.default_config('sst', 'bilstm')):
    assert key.partition('.')[2 if '.' in key else 0] in out  # every key, under its group
  # 80 lines until the faithfulness paper's stage and two experiments (2026-12-08): their sections'
  # keys (listed above, as every key is) and their names in the analyses and experiments lines
  # took it to 87, with none of their keys in "Often used".
  assert len(out.splitlines()) <= 88, 'keep --help readable'


@pytest.mark.parametrize('flag,says', [
    ('--config.train.epochs=abc', "flag --config.train.epochs=abc: invalid literal for int()"),
    ('--bogus=1', "Unknown command line flag 'bogus'"),
])
def test_a_flag_that_does_not_parse_is_one_line(tmp_path, flag, says):
  result = subprocess.run([sys.executable, 'run.py', '--config=configs/synthetic.py:smoke', flag,
                           f'--workdir={tmp_path}'], capture_output=True, text=True, cwd=ROOT, timeout=120)
  lines = result.stderr.strip().splitlines()
  assert result.returncode != 0 and len(lines) == 1 and lines[0].startswith('error: ' + says), result.stderr
  assert 'FATAL' not in result.stderr and '--help' in lines[0]


@pytest.mark.parametrize('key,hint,lists', [
    ('nonsense', None, 'config groups at the top level: analysis, data, experiment, model, train, vectors'),
    ('trian.epochs', "did you mean 'train.epochs'?", 'config groups at the top level: analysis'),
    ('epochs', "did you mean 'train.epochs' or 'vectors.epochs'?", 'valid keys at the top level: '
     'analyses, compilation_cache, devices, experiments, name, seed, sweep'),
    ('analysis.lo.mode', "did you mean 'analysis.loo.mode'?", 'config groups in analysis: '
     'analysis.adversarial, analysis.eraser, analysis.erasure, analysis.importance, analysis.loo'),
])
def test_unknown_override_names_the_groups_and_closest_key(key, hint, lists):
  message = config_lib.unknown_override(config_lib.default_config('synthetic', 'bilstm'), [key])
  assert message.startswith(f'unknown config key {key!r}') and lists in message
  assert (hint in message) if hint else 'did you mean' not in message
  assert '\n' not in message


def test_next_commands_name_the_report_and_listing(tmp_path):
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  cfg.sweep = 'seed=0,1'
  workdir, out = str(tmp_path / 'w'), str(tmp_path / 'o')
  lines = run_cli.next_commands(cfg, workdir, out).splitlines()
  runs = [os.path.join(out, 'seed0'), os.path.join(out, 'seed1')]
  assert lines[0] == 'report:   python -m attn_jax.report training ' + ' '.join(runs)
  # The default stages are J&W's, S&S's and Meister's: their report commands follow.
  assert lines[1].split() == ['python', '-m', 'attn_jax.report', 'analyses', *runs]
  assert lines[2].split() == ['python', '-m', 'attn_jax.report', 'meister', *runs]
  assert lines[3:] == [f'contents: python -m attn_jax.contents {workdir}',
                       f'contents: python -m attn_jax.contents {out}']
  cfg.analyses, cfg.experiments = 'gradient', 'uniform'
  lines = run_cli.next_commands(cfg, workdir, out).splitlines()
  assert [line.split()[-3] for line in lines[:3]] == ['training', 'analyses', 'wp']


def test_a_finished_run_ends_with_one_line_naming_its_results(monkeypatch, capsys, tmp_path):
  monkeypatch.setattr(pipeline, 'run', lambda *args, **kwargs: [])
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  run_cli.run_pipeline(cfg, str(tmp_path / 'w'), None)
  first = capsys.readouterr().out.splitlines()[0]
  assert first.startswith('done in ') and first.endswith(
      f'results in {tmp_path / "w"} (eval.json, analyses/)')
  cfg.sweep, cfg.experiments = 'seed=0,1,2,3,4', 'uniform'
  run_cli.run_pipeline(cfg, str(tmp_path / 'w'), str(tmp_path / 'o'))
  assert capsys.readouterr().out.splitlines()[0].endswith(
      f'results in 5 folders under {tmp_path / "o"} (eval.json, analyses/, experiments/)')


def _failing_run(monkeypatch, error):
  def raise_it(*args, **kwargs):
    raise error
  monkeypatch.setattr(pipeline, 'run', raise_it)
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  with pytest.raises(SystemExit) as exit_info:
    run_cli.run_pipeline(cfg, '/w', None)
  return exit_info.value.code


@pytest.mark.parametrize('code,why', [(errno.ENOSPC, 'the disk is full'),
                                      (errno.EROFS, 'the file system is read-only')])
def test_storage_error_from_outside_the_library_is_one_line(monkeypatch, capsys, code, why):
  error = OSError(code, os.strerror(code), '/w/analyses/loo/partial.npz')
  assert _failing_run(monkeypatch, error) == 2
  err = capsys.readouterr().err
  assert err.startswith(f'error: cannot write /w/analyses/loo/partial.npz: {why}')
  assert err.count('\n') == 1


def test_other_os_errors_keep_their_traceback(monkeypatch):
  with pytest.raises(FileNotFoundError):
    _failing_run(monkeypatch, FileNotFoundError(errno.ENOENT, 'No such file', '/w/x'))


def test_interrupt_says_how_to_resume(monkeypatch, capsys):
  assert _failing_run(monkeypatch, KeyboardInterrupt()) == 130
  err = capsys.readouterr().err.strip()
  assert err.count('\n') == 0 and 'rerun the same command to resume' in err


def test_none_on_the_command_line_is_none_not_the_word():
  # ml_collections parses `--config.model.embeddings_file=None` into 'None'.
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.model.embeddings_file = 'None'
  run_cli.config_lib.none_from_command_line(cfg)
  assert cfg.model.embeddings_file is None and cfg.data.dataset == 'sst'
  script = ("import sys; sys.argv = ['run.py', '--config=configs/sst_bilstm.py', "
            "'--config.model.embeddings_file=None']; import run; "
            "run.app.parse_flags_with_usage(sys.argv); cfg = run._CONFIG.value; "
            "run.config_lib.none_from_command_line(cfg); print(repr(cfg.model.embeddings_file))")
  result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
  assert result.stdout.strip() == 'None', result.stderr
