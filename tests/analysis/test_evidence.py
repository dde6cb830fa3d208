"""Known evidence: average precision of the evidence words against plain
float64 loops, its random-ranking expectation against every permutation, and
the stage on the synthetic task (planted words are its evidence)."""

import itertools
import json
import os

import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.analysis import evidence_ranking as ev
from attn_jax.core.errors import ConfigError
from attn_jax.data.dataset import load_dataset
from attn_jax.stages import evidence as evidence_stage
import helpers
from analysis_helpers import naive_average_precision



def _random_case(rng, batch=12, width=14, ties=False):
  lengths = rng.integers(3, width + 1, size=batch)  # with SOS and EOS
  scores = rng.normal(size=(batch, width))
  if ties:
    scores = np.round(scores)  # many equal scores
  evidence = rng.random((batch, width)) < 0.3
  evidence[:, 0] = True  # SOS marked: must be ignored
  words = (np.arange(width)[None] >= 1) & (np.arange(width)[None] <= lengths[:, None] - 2)
  return scores, evidence, words, lengths


@pytest.mark.parametrize('ties', [False, True])
def test_average_precision_matches_a_float64_loop(ties):
  scores, evidence, words, lengths = _random_case(np.random.default_rng(0 + ties), ties=ties)
  got = np.asarray(ev.average_precision(scores.astype(np.float32), evidence, words))
  want = np.array([naive_average_precision(scores[i], evidence[i], lengths[i] - 2) for i in range(len(lengths))])
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  assert np.isnan(want).sum() < len(want)
  np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-6, atol=1e-6)


def test_average_precision_extremes():
  evidence = np.array([[False, True, True, False, False, False]])
  words = np.array([[False, True, True, True, True, False]])
  perfect = np.array([[0.0, 5.0, 4.0, 1.0, 0.0, 9.0]])  # EOS's 9 must not count
  worst = np.array([[9.0, 0.0, 1.0, 4.0, 5.0, 0.0]])
  assert float(ev.average_precision(perfect, evidence, words)[0]) == pytest.approx(1.0)
  # ranks 3 and 4 of 4: (1/3 + 2/4) / 2
  assert float(ev.average_precision(worst, evidence, words)[0]) == pytest.approx((1 / 3 + 2 / 4) / 2)
  assert float(ev.top_hit(perfect, evidence, words)[0]) == 1.0
  assert float(ev.top_hit(worst, evidence, words)[0]) == 0.0


@pytest.mark.parametrize('n,r', [(1, 1), (2, 1), (4, 2), (5, 1), (6, 3), (6, 6)])
def test_chance_average_precision_is_the_mean_over_every_ranking(n, r):
  evidence = np.zeros(n + 2, bool)
  evidence[1:r + 1] = True
  values = [naive_average_precision(np.array([0.0, *perm, 0.0]), evidence, n)
            for perm in itertools.permutations(range(n, 0, -1))]
  assert ev.chance_average_precision(np.array([r]), np.array([n]))[0] == pytest.approx(np.mean(values), abs=1e-12)


def test_evidence_mask_marks_positions_after_sos():
  mask = evidence_stage.evidence_mask([np.array([1, 3]), np.array([], np.int32)], 5)
  np.testing.assert_array_equal(mask, [[False, True, False, True, False], [False] * 5])


def test_the_stage_on_the_synthetic_task(smoke_trained, tmp_path):
  workdir = helpers.trained_copy(smoke_trained, tmp_path / 'run')
  cfg = helpers.synthetic_config()
  cfg.analyses = 'gradient,loo,evidence'
  helpers.run(cfg, workdir)
  directory = helpers.stage_dir(workdir, 'evidence')
  summary = json.loads(open(os.path.join(directory, 'summary.json')).read())
  arrays = np.load(os.path.join(directory, 'results.npz'))
  assert set(summary['measures']) == set(evidence_stage.measures())
  gradient = np.load(os.path.join(helpers.stage_dir(workdir, 'gradient'), 'results.npz'))
  lengths = gradient['lengths']
  # The stage's AP of α, recomputed by the loop from its arrays.
  test = load_dataset(cfg.data).splits['test'].head(len(lengths))  # the stage's first N documents
  mask = evidence_stage.evidence_mask(test.evidence, gradient['alpha'].shape[1])
  want = [naive_average_precision(gradient['alpha'][i], mask[i], lengths[i] - 2) for i in range(len(lengths))]
  np.testing.assert_allclose(arrays['ap_alpha'], want, rtol=1e-5, atol=1e-6)
  # The smoke model reaches ~100 % on planted words: its gradient finds them
  # far better than chance (1-3 planted among 8-40 words).
  assert summary['measures']['gradient']['mean_ap'] > summary['chance']['mean_ap'] + 0.2
  assert os.path.exists(os.path.join(directory, 'evidence_average_precision.png'))
  # The rankings that read no model: later words first by the loop, word types beside.
  later = [naive_average_precision(np.arange(mask.shape[1], dtype=np.float64), mask[i], lengths[i] - 2)
           for i in range(len(lengths))]
  np.testing.assert_allclose(arrays['ap_later_words_first'], later, rtol=1e-5, atol=1e-6)
  assert summary['baselines']['later_words_first']['mean_ap'] == pytest.approx(np.mean(later))
  assert summary['baselines']['random_word_types']['monte_carlo_se'] < 0.002
  # The per-question APs results/ keeps: float16, one row per measure and baseline, hashed.
  kept = np.load(os.path.join(directory, 'kept.npz'))
  names = list(kept['names'])
  assert names == [*evidence_stage.measures(), 'chance', *evidence_stage.BASELINES]
  assert kept['ap'].dtype == np.float16 and kept['ap'].shape == (len(names), len(lengths))
  np.testing.assert_allclose(kept['ap'][names.index('alpha')], arrays['ap_alpha'], atol=1e-3)
  assert 'kept.npz' in summary['sha256']


def test_a_dataset_without_evidence_is_refused_in_one_line():
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.analyses = 'gradient,loo,evidence'
  with pytest.raises(ConfigError, match="'evidence' needs known evidence per document.*sst"):
    config_lib.validate(cfg)
  assert 'evidence' not in config_lib.default_config('sst', 'bilstm').analyses
  assert config_lib.default_config('babi2', 'cnn').analyses.endswith(',evidence')
