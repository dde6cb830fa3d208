"""The three-views table (`tables.faithfulness_views`): ROAR's per-seed areas
and their test against 0, and the order agreement of two views, on made-up
summaries whose answers are known."""

import json
import os

import numpy as np
import pytest

from attn_jax.analysis import verdicts
from attn_jax.tables import faithfulness_views as views


def _seed(root, seed, drop):
  """A seed folder whose ROAR curves fall by `drop[m]` per unit k below random's (random: flat 0.9 → 0.5 at 1)."""
  folder = os.path.join(root, f'seed{seed}')
  os.makedirs(os.path.join(folder, 'experiments', 'roar'))
  with open(os.path.join(folder, 'eval.json'), 'w') as f:
    json.dump({'accuracy': 0.9}, f)
  ks = [0.5]
  rows = [{'measure': 'random', 'k': 0.5, 'accuracy': 0.9}]
  rows += [{'measure': m, 'k': 0.5, 'accuracy': 0.9 - d} for m, d in drop.items()]
  summary = {'measures': ['random', *drop], 'fractions': ks, 'rows': rows, 'base': {'accuracy': 0.9},
             'all_masked': {'accuracy': 0.5}}
  with open(os.path.join(folder, 'experiments', 'roar', 'summary.json'), 'w') as f:
    json.dump(summary, f)


def test_roar_areas_per_seed_and_their_test_against_zero(tmp_path):
  for seed, noise in enumerate((0.0, 0.01, -0.01)):
    _seed(str(tmp_path), seed, {'alpha': 0.2 + noise, 'loo': 0.0 + noise / 10})
  found = views._roar(str(tmp_path), 'roar')  # pylint: disable=protected-access
  # ABC = trapezoid of (random − measure) over k = 0, 0.5, 1: only the middle point differs, by d: d / 2.
  np.testing.assert_allclose(found['alpha'][0], [0.1, 0.105, 0.095])
  assert found['alpha'][1]['verdict'] == verdicts.DIFFERENT
  assert found['loo'][1]['verdict'] == verdicts.EQUIVALENT
  assert 'random' not in found


def test_order_agreement_counts_pairs_in_the_same_order():
  tau, same, total, a, b = views._order_agreement({'x': 3, 'y': 2, 'z': 1}, {'x': 1, 'y': 2, 'z': 3, 'w': 0})  # pylint: disable=protected-access
  assert (same, total, a, b) == (0, 3, ['x', 'y', 'z'], ['z', 'y', 'x']) and tau == pytest.approx(-1.0)
  tau, same, total, _, _ = views._order_agreement({'x': 3, 'y': 2, 'z': 1}, {'x': 3, 'y': 1, 'z': 2})  # pylint: disable=protected-access
  assert (same, total) == (2, 3) and tau == pytest.approx(1 / 3)
