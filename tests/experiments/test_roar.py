"""ROAR and recursive ROAR (`experiments.roar`) on a smoke model: the models
read the masks they were given, the masks nest, the summary has every point,
a rerun retrains nothing, a killed run resumes, bad settings fail first."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import experiments
from attn_jax.analysis import roar_masking
from attn_jax.core.errors import ConfigError
from attn_jax.experiments import roar
from attn_jax.tables import faithfulness_roar_report as report
from attn_jax.training import masked_training
from attn_jax.training.loss import jw_classification
from attn_jax.workdirs.restore import restore
import helpers

pytestmark = [pytest.mark.usefixtures('optax_promotion'), pytest.mark.slow]


def roar_config(**overrides):
  cfg = helpers.synthetic_config(**overrides)
  cfg.experiments = 'roar,recursive_roar'
  for name in ('roar', 'recursive_roar'):
    cfg.experiment[name].measures = 'alpha,leave_one_out,random'
    cfg.experiment[name].fractions = '0.3,0.6'
  return cfg


@pytest.fixture(scope='module')
def suite(tmp_path_factory):
  workdir = tmp_path_factory.mktemp('roar')
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(roar_config(), workdir, logs)
  return workdir, logs


def _ranks(workdir, experiment, k):
  models = experiments.load_summaries(str(workdir))[experiment]['models_folder']
  return roar._saved_tables(os.path.join(workdir, models, f'k{k}', roar.RANKS_FILE))  # pylint: disable=protected-access


def test_every_measure_and_fraction_has_a_model_and_the_curve_its_ends(suite):
  workdir, _ = suite
  found = experiments.load_summaries(str(workdir))
  for name in ('roar', 'recursive_roar'):
    s = found[name]
    assert s['measures'] == ['alpha', 'leave_one_out', 'random'] and s['fractions'] == [0.3, 0.6]
    assert sorted((r['measure'], r['k']) for r in s['rows']) == sorted(
        (m, k) for m in s['measures'] for k in s['fractions'])
    assert s['all_masked'] is not None and s['base']['accuracy'] is not None
    ks, curves = report.seed_curves(s)
    assert list(ks) == [0.0, 0.3, 0.6, 1.0] and all(np.isfinite(c).all() for c in curves.values())
    assert s['recursive'] == (name == 'recursive_roar')


def test_roar_ranks_once_and_recursive_roar_keeps_the_previous_mask(suite):
  workdir, _ = suite
  plain30 = _ranks(workdir, 'roar', 30)
  assert _ranks(workdir, 'roar', 60) is None  # ROAR: one ranking (the base model's) for every k, kept once
  rec30, rec60 = _ranks(workdir, 'recursive_roar', 30), _ranks(workdir, 'recursive_roar', 60)
  np.testing.assert_array_equal(rec30['train'].flat, plain30['train'].flat)  # k = 30: the same ranking
  table30, table60 = rec30['test'], rec60['test']
  for i in range(len(table30.widths)):
    at = slice(table30.offsets[i], table30.offsets[i] + table30.widths[i])
    n = int((table30.flat[0, at] < roar_masking.NOT_RANKED).sum())
    before = table30.flat[:, at] < (3 * n) // 10
    after = table60.flat[:, at] < (6 * n) // 10
    assert np.all(after | ~before)  # what k = 30 masked stays masked at 60


def test_the_masked_loss_is_the_loss_of_the_masked_batch():
  cfg = helpers.synthetic_config()
  from attn_jax.models import build_model  # pylint: disable=g-import-not-at-top
  model = build_model(cfg.model, 30)
  params = model.init(jax.random.PRNGKey(0))
  tokens = jnp.asarray([[2, 5, 6, 7, 8, 3, 0], [2, 9, 10, 3, 0, 0, 0]], jnp.int32)
  lengths = jnp.asarray([6, 4])
  from attn_jax.data.batching import Batch  # pylint: disable=g-import-not-at-top
  batch = Batch(tokens, lengths, jnp.asarray([1.0, 0.0]), jnp.ones(2), jnp.asarray([0, 1]))
  ranks = np.full((2, 2, 7), roar_masking.NOT_RANKED, np.int32)
  ranks[1, 0, 1:5] = [3, 0, 2, 1]  # ranking 1 of document 0: positions 2, 4 first
  ranks[1, 1, 1:3] = [1, 0]
  objective = masked_training.masked_objective(jw_classification, {}, [1], [(1, 2)], mask_id=29)
  member = {k: v[0] for k, v in objective.members.items()}
  got = objective.loss(model, params, batch, None, member, {'ranks': jnp.asarray(ranks)})
  masked = tokens.at[0, 2].set(29).at[0, 4].set(29).at[1, 2].set(29)  # half of 4 words, half of 2
  want = jw_classification(model, params, batch._replace(tokens=masked), None, {})
  np.testing.assert_allclose(float(got), float(want), rtol=1e-6)


def test_a_rerun_retrains_nothing_and_a_model_restores_with_the_mask_token(suite):
  workdir, _ = suite
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(roar_config(), workdir, logs)
  assert not any('training' in line and 'as one program' in line for line in logs)
  models = experiments.load_summaries(str(workdir))['roar']['models_folder']
  restored = restore(str(workdir / models / 'k30' / 'alpha'))
  assert restored.vocab.tokens[-1] == roar.MASK_TOKEN
  assert restored.params["embedding"]["table"].shape[0] == len(restored.vocab)


def test_a_killed_run_resumes_from_its_finished_fractions(suite, tmp_path):
  workdir, _ = suite
  import shutil  # pylint: disable=g-import-not-at-top
  copy = helpers.trained_copy(workdir, tmp_path / 'copy')
  found = experiments.load_summaries(str(copy))['roar']
  shutil.rmtree(copy / found['folder'])  # the results, as if killed after training
  shutil.rmtree(copy / found['models_folder'] / 'k60')  # and before k = 60 trained
  logs = []
  with jax.numpy_dtype_promotion('standard'):
    helpers.run(roar_config(), copy, logs)
  restored = [line for line in logs if 'already finished' in line]
  assert any('/k30' in line for line in restored) and any('/k100' in line for line in restored)
  assert not any('/k60' in line for line in restored)  # the one fraction trained again
  again = experiments.load_summaries(str(copy))['roar']
  assert again['rows'] == found['rows'] and again['all_masked'] == found['all_masked']


@pytest.mark.parametrize('field,value,message', [
    ('measures', 'alpha,saliency', 'unknown: saliency'),
    ('measures', 'alpha,alpha', 'each once'),
    ('fractions', '0.5,0.3', 'increasing'),
    ('fractions', '0.5,1.0', 'increasing numbers in \\(0, 1\\)'),
    ('fractions', 'half', 'not comma-separated numbers')])
def test_bad_settings_fail_before_any_work(tmp_path, field, value, message):
  cfg = roar_config()
  cfg.experiment.roar[field] = value
  with pytest.raises(ConfigError, match=message):
    helpers.run(cfg, tmp_path / 'bad')
  assert not os.path.exists(tmp_path / 'bad' / 'checkpoints')


def test_areas_follow_madsen_et_al_s_definition():
  ks = np.array([0.0, 0.5, 1.0])
  curves = {'random': np.array([0.9, 0.8, 0.5]), 'a': np.array([0.9, 0.6, 0.5])}
  got = report.areas(ks, curves)
  assert got['random'] == (0.0, 0.0)
  assert got['a'][0] == pytest.approx(0.1)  # trapezoid: (0 + 0.2) / 2 · 0.5 + (0.2 + 0) / 2 · 0.5
  floor = 0.5 * (0.4 + 0.3) / 2 + 0.5 * (0.3 + 0.0) / 2
  assert got['a'][1] == pytest.approx(0.1 / floor)
