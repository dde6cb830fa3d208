"""J&W's QA and NLI half end to end on the real files: a bAbI model trains on
its passage and question and every J&W analysis runs on it (the query kept
fixed); SNLI, whose train file is not here, is refused in one line, and its
dev and test pairs go through the same model and analyses (untrained: a
smoke test, no number under SNLI's name)."""

import json
import os

import jax
import numpy as np
import pytest

import attn_jax as aj
from attn_jax import config as config_lib
from attn_jax.analysis import gradient_importance, leave_one_out, permutation_test
from attn_jax.core.errors import DataError
from attn_jax.core.registry import DATASETS
from attn_jax.data import builders, split_batches
from attn_jax.data.dataset import load_dataset
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.models import build_model
from conftest import requires_real_data
import helpers


@pytest.mark.heavy
@requires_real_data
@pytest.mark.usefixtures('optax_promotion')
def test_a_babi_model_trains_and_every_jw_analysis_runs(tfds_dir, tmp_path):
  cfg = config_lib.default_config('babi1', 'bilstm', 'smoke')
  cfg.data.tfds_data_dir = tfds_dir
  cfg.train.progress = False
  cfg.analysis.max_docs = 16  # one batch: one shape to compile per stage
  assert cfg.model.query and cfg.model.classes == 36 and cfg.train.loss == 'cross_entropy'
  results = helpers.run(cfg, tmp_path)
  assert results['n'] == 64 and 0.0 <= results['accuracy'] <= 1.0
  assert cfg.analyses.split(',')[-1] == 'evidence'  # bAbI names its evidence: scored by default
  for stage in ('gradient', 'loo', 'kendall', 'attention', 'permutation', 'adversarial', 'evidence'):
    summary = json.loads(open(os.path.join(helpers.stage_dir(tmp_path, stage), 'summary.json')).read())
    assert summary['documents'] == 16, stage
  kendall = json.loads(open(os.path.join(helpers.stage_dir(tmp_path, 'kendall'), 'summary.json')).read())
  assert set(kendall['pairs']['attention_gradient']) == {'overall'}  # 36 classes: no per-class rows
  evidence = json.loads(open(os.path.join(helpers.stage_dir(tmp_path, 'evidence'), 'summary.json')).read())
  assert 0.0 < evidence['chance']['mean_ap'] < 1.0 and evidence['evidence_words']['mean'] >= 3
  assert all(0.0 < m['mean_ap'] <= 1.0 for m in evidence['measures'].values())
  arrays = np.load(os.path.join(helpers.stage_dir(tmp_path, 'loo'), 'results.npz'))
  assert arrays['probs'].shape == (16, 36) and arrays['probs_without'].shape[:2] == (16, 36)
  with pytest.raises(ValueError, match='reads a passage and a query'):
    aj.explain(str(tmp_path), ['Mary went to the kitchen'])


@requires_real_data
@pytest.mark.heavy
def test_snli_is_refused_without_its_train_file_and_its_pairs_run_through_the_analyses(tfds_dir):
  cfg = config_lib.default_config('snli', 'average', 'smoke')
  cfg.data.tfds_data_dir = tfds_dir
  with pytest.raises(DataError, match='SNLI: the train split is not here'):
    load_dataset(cfg.data)
  # A vocabulary from dev, for this check only (training needs SNLI's train file).
  data = load_dataset(cfg.data, ('dev', 'test'), vocab=_dev_vocabulary(cfg))
  test = data.splits['test'].head(8)
  model = build_model(cfg.model, len(data.vocab))
  params = model.init(jax.random.PRNGKey(0))
  batch = next(iter(split_batches.eval_batches(test, 8, split_batches.bucketing([test], 2.0, None, False))))
  probs = model.probabilities(model.forward(params, batch.tokens, batch.lengths).logits)
  assert probs.shape == (8, 3)
  assert np.isfinite(np.asarray(gradient_importance(model, params, batch.tokens, batch.lengths))).all()
  assert np.isfinite(np.asarray(leave_one_out(model, params, batch.tokens, batch.lengths).importance)).all()
  keys = jax.random.split(jax.random.PRNGKey(1), 8)
  assert np.isfinite(np.asarray(permutation_test(model, params, batch.tokens, batch.lengths, keys, 4).median)).all()


def _dev_vocabulary(cfg):
  raw, _ = builders.load('snli', cfg.data.manual_dir, cfg.data.tfds_data_dir)
  dev = DATASETS['snli'].prepare(raw, ('dev',)).splits['dev']
  return Vocabulary.build(dev.docs + dev.queries, min_df=3)
