"""S&S's HAN end to end on real aclImdb ratings: train (S&S's recipe, smoke
sized), evaluate, erasure tests on the sentence attention, report ss; a
rerun restores instead of retraining. The convolutional HAN: the biGRU's
programs take a minute to compile, and its forward pass and gradient are
checked on their own (tests/models/test_serrano_smith_models.py)."""

import json
import os

import numpy as np
import pytest

from attn_jax.config.serrano_smith_config import ss_config
from attn_jax.data.dataset import load_dataset
from attn_jax.tables import serrano_smith_models_report as serrano_smith_models
from attn_jax.tables import studies as study_report
from attn_jax.studies import STUDIES
from conftest import requires_real_data
import helpers


@pytest.mark.heavy
@requires_real_data
@pytest.mark.usefixtures('optax_promotion')
def test_han_trains_is_analysed_and_reported(tmp_path, tfds_dir, capsys):
  cfg = ss_config('imdb_ratings', 'han', 'conv,smoke')
  cfg.data.tfds_data_dir = tfds_dir
  cfg.data.max_docs_per_split = 24
  cfg.train.plateau_factor = 0.5
  cfg.train.progress = False
  workdir = tmp_path / 'han'
  logs = []
  results = helpers.run(cfg, workdir, logs)
  assert 0.0 <= results['accuracy'] <= 1.0 and 'macro_f1' in results and 'roc_auc' not in results
  history = [json.loads(line) for line in open(workdir / 'metrics.jsonl')]
  assert [r['epoch'] for r in history] == [0, 1] and 'dev_macro_f1' in history[0]
  probs = np.load(workdir / 'predictions_test.npz')['probs']
  assert probs.shape == (24, 8)
  np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)

  run = serrano_smith_models.load(str(workdir))
  assert run.model == 'HANconv' and run.dataset == 'imdb_ratings'
  single = run.erasure['single_weight']
  assert single['n'] <= 24 and abs(sum(single[k] for k in (
      'percent_both_flip', 'percent_top_only', 'percent_other_only', 'percent_neither')) - 100) < 1e-6
  bins = single['delta_js_negative_by_delta_alpha']  # S&S Figure 4
  assert sum(b['n'] for b in bins) == single['n'] and all(b['delta_js_negative'] <= b['n'] for b in bins)
  arrays = np.load(next((workdir / 'analyses' / 'erasure').glob('*/results.npz')))
  # The items are sentences: n is each document's sentence count.
  test = load_dataset(cfg.data).splits['test']
  assert arrays['single_num_items'].tolist() == [len(x) for x in test.sentence_lengths]
  assert arrays['probs'].shape == (24, 8)

  made = serrano_smith_models.write([str(workdir)], str(tmp_path / 'saved'))
  assert made['ss-table3'][0][2][0] == 'HANconv'
  assert os.path.exists(tmp_path / 'saved' / 'ss_fraction_removed.png')
  assert 'ss-verdicts' in capsys.readouterr().out
  # An arm saved in an earlier session (its workdir gone) stays in the
  # study's tables; the arms in neither place are named as pending.
  study = STUDIES['ss_models']
  rows = study_report.write(study, str(tmp_path / 'new_workdirs'), save_to=str(tmp_path / 'saved'))
  measured = {r[0]: r[1] for r in rows[1:]}
  assert measured['HANconv'] == made['ss-table3'][0][2][1] and measured['HANrnn'] == '– (not run)'
  out = capsys.readouterr().out
  assert 'Not finished yet' in out and 'imdb_ratings_FLANrnn' in out

  logs.clear()
  helpers.run(cfg, workdir, logs)  # restored, not retrained
  assert any('already finished' in line for line in logs)
