"""Meister et al. end to end on smoke models: the `importance` and
`state_importance` stages, every analysis under sparse and uniform attention,
the sparsegen λ sweep on the model axis and the frozen/unfrozen adversaries."""

import os

import jax
import numpy as np
import pytest

from attn_jax import experiments
from attn_jax.core.errors import ConfigError
from attn_jax.workdirs.restore import restore
from attn_jax.tables.report_registry import blocks
from attn_jax.stages import stage_store
import helpers

pytestmark = pytest.mark.usefixtures('optax_promotion')


@pytest.fixture(scope='module')
def meister(tmp_path_factory):
  """A sparsemax smoke model with Meister's stages and both experiments: (workdir, logs)."""
  workdir = tmp_path_factory.mktemp('meister')
  cfg = helpers.synthetic_config(model__projection='sparsemax', analysis__max_docs=24)
  cfg.analyses = 'importance,state_importance'
  cfg.experiments = 'sparsegen_sweep,adversary_regimes'
  logs = []
  with jax.numpy_dtype_promotion('standard'):  # module scope: before optax_promotion applies
    helpers.run(cfg, workdir, logs)
  return workdir, cfg, logs


def _stage(workdir, name):
  found = stage_store.most_complete(str(workdir), name)
  return found.summary, stage_store.load_arrays(found.directory, found.summary)


@pytest.mark.heavy
def test_state_importance_pools_every_document_and_word(meister):
  workdir, _, _ = meister
  summary, arrays = _stage(workdir, 'state_importance')
  entropy = arrays['entropy_layer0']
  words = int(np.sum(np.maximum(arrays['lengths'] - 2, 0)[arrays['lengths'] - 2 >= 2]))
  assert summary['table1']['layer0']['n_pairs'] == words == int(np.isfinite(entropy).sum())
  assert 0 < summary['table1']['layer0']['mean'] <= 1
  assert summary['table1']['layer0']['mean'] == pytest.approx(float(np.nanmean(entropy)))


@pytest.mark.heavy
def test_sparsegen_sweep_trains_one_program_and_each_model_is_an_ordinary_run(meister):
  workdir, _, logs = meister
  summary = experiments.load_summaries(str(workdir))['sparsegen_sweep']
  assert [r['lambda'] for r in summary['rows']] == [-1.0, 0.0, 0.5]
  assert any('training 3 models' in line for line in logs)
  folder = workdir / summary['models_folder'] / 'sparsegen'
  for lam in (-1, 0, 0.5):
    run = restore(str(folder / f'lambda{lam:g}'))
    assert run.config.model.projection == 'sparsegen' and run.config.model.sparsegen_lambda == lam
    assert stage_store.most_complete(str(folder / f'lambda{lam:g}'), 'importance')  # in its own folder
  # λ = 0 is sparsemax: the same seed and batches give the base model again.
  zero = restore(str(folder / 'lambda0'))
  base = restore(str(workdir))
  for p, q in zip(jax.tree.leaves(zero.params), jax.tree.leaves(base.params)):
    np.testing.assert_allclose(p, q, atol=2e-5)
  assert summary['base']['projection'] == 'sparsemax'
  assert {os.path.splitext(f)[1] for f in summary['figures']} == {'.png', '.svg'}


@pytest.mark.heavy
def test_frozen_adversary_trains_only_the_scorer(meister):
  workdir, _, _ = meister
  summary = experiments.load_summaries(str(workdir))['adversary_regimes']
  assert set(summary['regimes']) == {'frozen', 'unfrozen'}
  base = restore(str(workdir))
  frozen = restore(str(workdir / summary['models_folder'] / 'frozen' / 'lambda0.1'))
  assert frozen.config.train.update_only == 'attention'
  for name in ('embedding', 'encoder', 'decoder'):
    for p, q in zip(jax.tree.leaves(frozen.params[name]), jax.tree.leaves(base.params[name])):
      np.testing.assert_array_equal(p, q)
  assert any(not np.array_equal(p, q) for p, q in zip(jax.tree.leaves(frozen.params['attention']),
                                                      jax.tree.leaves(base.params['attention'])))
  for regime in summary['regimes'].values():
    assert regime['chosen_lambda'] == 0.1 and 0 <= regime['chosen']['mean_jsd'] <= np.log(2)


@pytest.mark.heavy
def test_a_rerun_skips_everything(meister):
  workdir, cfg, _ = meister
  before = helpers.snapshot(workdir / 'experiments')
  logs = []
  helpers.run(cfg, workdir, logs)
  assert helpers.snapshot(workdir / 'experiments') == before
  assert not any('epoch' in line and 'train loss' in line for line in logs)


@pytest.mark.parametrize('key, value, message', [
    ('train.update_only', 'attention,scorer', 'must name params subtrees'),
    ('experiment.sparsegen_sweep.lambdas', '0.5,1', 'λ < 1'),
    ('experiment.adversary_regimes.regimes', 'frozen,thawed', 'must name some of frozen, unfrozen'),
])
def test_bad_meister_settings_fail_before_any_work(tmp_path, key, value, message):
  cfg = helpers.synthetic_config()
  cfg.experiments = 'sparsegen_sweep,adversary_regimes'
  section = cfg
  *parents, leaf = key.split('.')
  for p in parents:
    section = section[p]
  section[leaf] = value
  with pytest.raises(ConfigError, match=message):
    helpers.run(cfg, tmp_path)
  assert not os.listdir(tmp_path)


@pytest.mark.heavy
def test_report_prints_every_table_saves_and_fills_the_readme(meister, tmp_path, capsys):
  from attn_jax.tables import meister as meister_report  # pylint: disable=g-import-not-at-top
  workdir, _, _ = meister
  readme = tmp_path / 'README.md'
  readme.write_text(''.join(f'<!-- {b}:start -->\n<!-- {b}:end -->\n' for b in blocks("meister")))
  made = meister_report.write([str(workdir)], str(tmp_path / 'results'), str(readme))
  assert all(len(rows) == 2 for block, (rows, _) in made.items()
             if block not in ('meister-sweep', 'meister-table5', 'meister-wall-time'))
  assert len(made['meister-sweep'][0]) == 1 + 4 and len(made['meister-table5'][0]) == 1 + 2
  text = readme.read_text()
  assert 'python -m attn_jax.report meister results/' in text and '| synthetic |' in text
  assert made['meister-table3'][0][1][3] == 'N(0, 1²)'  # the smoke config's embeddings, from config.json
  again = meister_report.write([str(tmp_path / 'results' / workdir.name)])  # from the saved copy alone
  assert again['meister-table6'][0] == made['meister-table6'][0]
  assert 'meister-table1' in capsys.readouterr().out


def test_report_verdicts_against_meister_numbers():
  from attn_jax.tables import meister as meister_report  # pylint: disable=g-import-not-at-top
  tau = lambda m: {'nanmean': m, 'nanstd': 0.1}
  run = {'name': 'r', 'dataset': 'sst', 'encoder': 'bilstm', 'projection': 'sparsemax', 'accuracy': 0.83,
         'experiments': {}, 'stages': {'importance': {
             'tau': {'g_y_x': tau(0.45), 'd_y_x': tau(0.34), 'g_y_i': tau(0.80), 'd_y_i': tau(0.97)},
             'alpha_zero_fraction': 0.5, 'entropy': {'g_y_x': {'nanmean': 0.9}, 'alpha': {'nanmean': 0.5}}}}}
  row = meister_report.table6_rows([run])[1]
  assert row[-1] == 'MISSED: g_ŷ(I)'  # 0.80 against Meister's 0.97
  assert '(0.45 ± 0.13)' in row[3]
  assert meister_report.table3_rows([run])[1][-1] == '(Meister: softmax only)'
