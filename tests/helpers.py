"""Running the pipeline on the synthetic task inside tests."""

import contextlib
import json
import os
import subprocess

import pytest

from attn_jax import config as config_lib, pipeline
from attn_jax.stages import stage_store as store

TESTS = os.path.dirname(os.path.abspath(__file__))  # tests/: the helpers, conftest, scripts
ROOT = os.path.dirname(TESTS)  # the checkout
TIMING_KEYS = ('training_seconds',)


def synthetic_config(**overrides):
  """The synthetic smoke config with `section__key=value` overrides."""
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  cfg.train.progress = False
  cfg.analyses = ''  # training tests; tests/stages/test_stages.py runs the analyses
  for dotted, value in overrides.items():
    section, key = dotted.split('__')
    if section == 'top':
      cfg[key] = value
    else:
      cfg[section][key] = value
  return cfg


def run(cfg, workdir, logs=None):
  """pipeline.run; the eval.json contents of the model (of each model, with a sweep)."""
  results = pipeline.run(cfg, str(workdir), log=(logs.append if logs is not None else lambda _: None))
  return results if cfg.sweep.strip() else results[0]


def trained_copy(source, target):
  """A copy of the finished workdir `source` (conftest's `smoke_trained`) at
  `target`, which must not exist; returns `target`."""
  import shutil  # pylint: disable=g-import-not-at-top
  shutil.copytree(source, target)
  return target


def eval_without_timing(workdir):
  with open(os.path.join(workdir, 'eval.json')) as f:
    return {k: v for k, v in json.load(f).items() if k not in TIMING_KEYS}


def history(workdir):
  with open(os.path.join(workdir, 'metrics.jsonl')) as f:
    return [json.loads(line) for line in f]


def padded_rows(split, rows):
  """[len(rows), width] int32 tokens of a split's documents `rows`, padded to the longest."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  width = max(len(split.sequences[i]) for i in rows)
  tokens = np.zeros((len(rows), width), np.int32)
  for r, i in enumerate(rows):
    tokens[r, :len(split.sequences[i])] = split.sequences[i]
  return tokens


def stage_dir(out, name):
  """The folder of the most complete results of stage `name` under `out`."""
  found = store.most_complete(str(out), name)
  assert found is not None, f'no results of {name} under {out}'
  return found.directory


def snapshot(folder, with_mtime=False):
  """Every file under `folder`: relative path -> its bytes (and mtime)."""
  found = {}
  for dirpath, _, names in os.walk(folder):
    for name in names:
      path = os.path.join(dirpath, name)
      with open(path, 'rb') as f:
        data = f.read()
      found[os.path.relpath(path, folder)] = (data, os.path.getmtime(path)) if with_mtime else data
  return found


def run_py_module():
  """run.py as a module, loaded once per session: it defines absl flags, which
  may be defined only once."""
  import importlib.util  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  if 'run_cli' not in sys.modules:
    spec = importlib.util.spec_from_file_location('run_cli', os.path.join(ROOT, 'run.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules['run_cli'] = module
  return sys.modules['run_cli']


@contextlib.contextmanager
def read_only_mount(folder):
  """`folder` bind-mounted read-only on itself (root only: root ignores permissions)."""
  if os.geteuid() != 0:
    pytest.skip('a read-only mount needs root (CI runs as root)')
  subprocess.run(['mount', '--bind', str(folder), str(folder)], check=True)
  try:
    subprocess.run(['mount', '-o', 'remount,ro,bind', str(folder)], check=True)
    yield folder
  finally:
    subprocess.run(['umount', str(folder)], check=True)


def one_line_exit(capsys, main, argv) -> str:
  """Runs a command's main, expects a non-zero exit with one 'error:' line."""
  with pytest.raises(SystemExit) as raised:
    main(argv)
  assert raised.value.code not in (0, None)
  err = capsys.readouterr().err.strip()
  assert err.startswith('error: ') and '\n' not in err and 'Traceback' not in err, err
  return err
