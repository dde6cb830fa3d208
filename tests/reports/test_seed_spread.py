"""One run beside its configuration's seeds (reports/seed_spread.py), on a
hand-made grid row whose numbers are known."""

import json

import numpy as np
import pytest
import scipy.stats

from attn_jax import config as config_lib
from attn_jax.tables import seed_spread
import reference_trees

MEANS = (0.8, 0.35, 0.29, 0.65)  # accuracy, then the three τ


def config(seed: int, **train) -> dict:
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.seed = seed
  cfg.train.update(train)
  return cfg.to_dict()


def grid(tmp_path, **train):
  root = tmp_path / 'grid'
  reference_trees.ours(root, 'sst_bilstm_tanh', MEANS)
  for k in range(len(reference_trees.SPREAD)):
    (root / 'sst_bilstm_tanh' / f'seed{k}' / 'config.json').write_text(json.dumps(config(k, **train)))
  return root


def a_run(tmp_path, tau: float, **train):
  run = tmp_path / 'run'
  reference_trees.ours(run.parent / 'one', 'run', (0.8, tau, tau, tau))
  run = run.parent / 'one' / 'run' / 'seed0'
  (run / 'config.json').write_text(json.dumps(config(0, **train)))
  return run


def test_the_run_stands_beside_the_seeds_range_interval_and_published_value(tmp_path):
  root, run = grid(tmp_path), a_run(tmp_path, 0.246 + 0.01)  # ours() adds its spread: seed0 is -0.01
  lines = seed_spread.lines(str(run), {'tau_attention_gradient': 0.351}, root=str(root))
  assert 'sst_bilstm_tanh (5 seeds' in lines[0] and 'the same recipe' in lines[0]
  values = [MEANS[1] + d for d in reference_trees.SPREAD]
  half = scipy.stats.t.ppf(0.975, 4) * np.std(values, ddof=1) / np.sqrt(5)
  assert lines[1] == (f'  τ(α, gradient): this run 0.246; the seeds {min(values):.3f}–{max(values):.3f} '
                      f'(mean {np.mean(values):.3f}, 95 % t {np.mean(values) - half:.3f}–{np.mean(values) + half:.3f}); '
                      'J&W published 0.351')
  assert len(lines) == 5 and 'one draw' in lines[-1]


def test_another_recipe_is_named_key_by_key(tmp_path):
  root, run = grid(tmp_path), a_run(tmp_path, 0.3, epochs=4)
  assert 'another recipe: train.epochs (4 vs 8)' in seed_spread.lines(str(run), {}, root=str(root))[0]


def test_no_line_without_a_row_or_for_the_grids_own_seeds(tmp_path):
  root, run = grid(tmp_path), a_run(tmp_path, 0.3)
  cfg = json.loads((run / 'config.json').read_text())
  cfg['model']['projection'] = 'sparsemax'
  (run / 'config.json').write_text(json.dumps(cfg))
  assert seed_spread.lines(str(run), {}, root=str(root)) == []
  assert seed_spread.lines(str(root / 'sst_bilstm_tanh' / 'seed2'), {}, root=str(root)) == []


@pytest.mark.parametrize('model, row', [
    ({'encoder': 'cnn', 'attention': 'dot', 'projection': 'softmax', 'embeddings_file': None}, 'sst_cnn_dot_scratch'),
    ({'encoder': 'bilstm', 'attention': 'tanh', 'projection': 'softmax', 'embeddings_file': 'in_domain'},
     'sst_bilstm_tanh'),
    ({'encoder': 'bilstm', 'attention': 'tanh', 'projection': 'softmax', 'query': True}, None)])
def test_the_row_of_a_config(model, row):
  assert seed_spread.row_name({'data': {'dataset': 'sst'}, 'model': model}) == row


def test_the_newest_grid_that_holds_the_row_with_an_interval_is_the_one(tmp_path, monkeypatch):
  older, run = grid(tmp_path), a_run(tmp_path, 0.3)
  newer = tmp_path / 'newer'
  reference_trees.ours(newer, 'sst_bilstm_tanh', MEANS)
  for k in range(1, len(reference_trees.SPREAD)):  # one finished seed: no interval there yet
    (newer / 'sst_bilstm_tanh' / f'seed{k}' / 'eval.json').unlink()
  (newer / 'sst_bilstm_tanh' / 'seed0' / 'config.json').write_text(json.dumps(config(0)))
  monkeypatch.setattr(seed_spread, 'grid_roots', lambda: [str(newer), str(older)])
  assert f'beside {older / "sst_bilstm_tanh"} (5 seeds' in seed_spread.lines(str(run), {})[0]
  for k in range(len(reference_trees.SPREAD)):  # the newer grid's row is complete
    (newer / 'sst_bilstm_tanh' / f'seed{k}' / 'eval.json').write_text(json.dumps({'accuracy': 0.8}))
    (newer / 'sst_bilstm_tanh' / f'seed{k}' / 'config.json').write_text(json.dumps(config(k)))
  assert f'beside {newer / "sst_bilstm_tanh"} (5 seeds' in seed_spread.lines(str(run), {})[0]
