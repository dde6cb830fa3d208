"""benchmarks/jain_wallace_torch.py, the PyTorch baseline of benchmarks/peers.py,
computes attn-jax's numbers from attn-jax's weights for the BiLSTM, CNN and
Average encoders (only with the [bench] extra: PyTorch and Captum)."""

import os
import sys

import numpy as np
import pytest
import helpers

BENCH = 'needs PyTorch and Captum, the [bench] extra (pip install -e ".[bench]"); CI installs [test] only'
torch = pytest.importorskip('torch', reason=BENCH)
pytest.importorskip('captum', reason=BENCH)

sys.path.insert(0, os.path.join(helpers.ROOT,
                                'benchmarks'))
import jain_wallace_torch  # pylint: disable=g-import-not-at-top,wrong-import-position
from attn_jax.analysis import gradient_importance, leave_one_out  # pylint: disable=wrong-import-position
from analysis_helpers import documents, pad, setup  # pylint: disable=wrong-import-position


# The CNN and Average encoders' loops are the heavy tests' (the BiLSTM's in every run).
@pytest.fixture(scope='module', params=['bilstm', pytest.param('cnn', marks=pytest.mark.heavy),
                                        pytest.param('average', marks=pytest.mark.heavy)])
def both(request):
  model, params = setup(request.param, 'tanh', seed=2)
  tokens, lengths = pad(documents(lengths=(9, 4, 12, 6), seed=3))
  peer = jain_wallace_torch.from_attn_jax(params)
  as_torch = (torch.as_tensor(np.array(tokens), dtype=torch.long),
              torch.as_tensor(np.array(lengths), dtype=torch.long))
  return model, params, tokens, lengths, peer, as_torch


def test_the_pytorch_model_predicts_what_attn_jax_predicts(both):
  model, params, tokens, lengths, peer, as_torch = both
  expected = np.asarray(model.forward(params, tokens, lengths).probs)
  np.testing.assert_allclose(jain_wallace_torch.probs(peer, *as_torch), expected, atol=1e-6)


@pytest.mark.parametrize('how', ['jw_loop', 'captum'])
def test_pytorch_gradients_equal_attn_jax_gradient_importance(both, how):
  model, params, tokens, lengths, peer, as_torch = both
  fn = jain_wallace_torch.gradient_loop if how == 'jw_loop' else jain_wallace_torch.captum_input_x_gradient
  expected = np.asarray(gradient_importance(model, params, tokens, lengths))
  np.testing.assert_allclose(fn(peer, *as_torch), expected, atol=1e-6)
  assert expected.max() > 1e-4


def test_the_deletion_loop_equals_attn_jax_leave_one_out(both):
  model, params, tokens, lengths, peer, as_torch = both
  expected = np.asarray(leave_one_out(model, params, tokens, lengths, mode='delete').importance)
  np.testing.assert_allclose(jain_wallace_torch.loo_loop(peer, *as_torch), expected, atol=1e-6)


@pytest.mark.parametrize('per_eval', [1, 8])
def test_captum_feature_ablation_equals_leave_one_out_by_replacement(both, per_eval):
  model, params, tokens, lengths, peer, as_torch = both
  expected = np.asarray(leave_one_out(model, params, tokens, lengths, mode='replace').importance)
  got = jain_wallace_torch.captum_feature_ablation(peer, *as_torch, per_eval)
  np.testing.assert_allclose(got, expected, atol=1e-6)


def test_the_permutation_loop_gives_one_change_per_document_and_permutation(both):
  _, _, _, _, peer, as_torch = both
  out = jain_wallace_torch.permutation_loop(peer, *as_torch, 20, torch.Generator().manual_seed(0))
  assert out.shape == (4, 20) and np.all(out >= 0) and out.max() > 0
