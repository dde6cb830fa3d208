"""A `data.max_docs_per_split` too small for model selection (issue 76):
refused before training in one line naming the smallest value that works,
not trained into a workdir with no selected model whose advice ("delete it
and train again") failed the same way."""

import subprocess
import sys

import numpy as np
import pytest

from attn_jax import pipeline
from attn_jax.core.errors import ConfigError
from attn_jax.data import dataset as dataset_lib
import helpers


def test_the_smallest_sample_with_two_classes_is_the_first_of_one_permutation():
  cfg = helpers.synthetic_config().data
  works = dataset_lib.sample_size_with_two_classes(cfg, 'dev')
  assert works is not None and works >= 2
  for limit in range(1, works + 4):
    cfg.max_docs_per_split = limit
    labels = dataset_lib.load_dataset(cfg).splits['dev'].labels
    assert (len(np.unique(labels)) == 2) == (limit >= works), limit  # every larger sample holds both


def test_a_selection_split_of_one_class_is_refused_with_a_value_that_works():
  cfg = helpers.synthetic_config(data__max_docs_per_split=1)
  with pytest.raises(ConfigError) as raised:
    pipeline.check_selection_split(cfg, dataset_lib.load_dataset(cfg.data))
  works = dataset_lib.sample_size_with_two_classes(cfg.data, 'dev')
  assert str(raised.value).startswith('--config.data.max_docs_per_split=1 is too small: the dev split '
                                      '(train.select_on) holds 1 document(s), all of class ')
  assert f'give --config.data.max_docs_per_split={works} or more' in str(raised.value)
  cfg.data.max_docs_per_split = works
  pipeline.check_selection_split(cfg, dataset_lib.load_dataset(cfg.data))  # trains
  cfg.data.max_docs_per_split, cfg.train.select_by = 1, 'accuracy'  # defined on one document
  pipeline.check_selection_split(cfg, dataset_lib.load_dataset(cfg.data))


def test_run_py_says_it_in_one_line_before_training(tmp_path):
  result = subprocess.run([sys.executable, 'run.py', '--config=configs/synthetic.py:smoke',
                           '--config.train.progress=False', '--config.data.max_docs_per_split=1',
                           f'--workdir={tmp_path / "w"}'], capture_output=True, text=True, cwd=helpers.ROOT,
                          check=False)
  assert result.returncode != 0 and 'Traceback' not in result.stderr
  assert result.stderr.strip().splitlines() == [result.stderr.strip()]
  assert result.stderr.startswith('error: --config.data.max_docs_per_split=1 is too small')
  assert 'epoch 1' not in result.stdout  # nothing was trained
