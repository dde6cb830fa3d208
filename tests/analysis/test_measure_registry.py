"""The importance-measure registry (`attn_jax.core.registry.MEASURES`): a
measure is one module, its function and its `Measure` record.

A toy measure registered from this test module (and gone after its `with`
block) is an attribute of `attn_jax.analysis`, a row of `needs.NEEDS` and
`needs.table`, a result of `every_analysis`, an array of the `gradient`,
`importance` and `evidence` stages (in their keys, and in the kendall
stage's τ), and a label of the tables and figures. Without it the measures
keep every name and label results were saved and shown under, and every
committed key of the stages that store measures is what the code computes."""

import glob
import hashlib
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import analysis, config as config_lib
from attn_jax.analysis import measure, needs
from attn_jax.core.registry import MEASURES, STAGES
from attn_jax.models import masks
from attn_jax.stages import evidence as evidence_stage, feature_importance, importance as importance_stage
from attn_jax.stages import stage_store
from attn_jax.data.dataset import load_dataset
from attn_jax.tables import jain_wallace, known_evidence, meister, studies, study_results
from attn_jax.workdirs.restore import restore
from analysis_helpers import documents, pad, setup
import helpers


def embedding_energy(model, params, tokens, lengths):
  """A toy measure [B, L]: each word's squared embedding norm, 0 off the words."""
  energy = jnp.sum(jnp.square(model.embed(params, tokens)), axis=-1)
  return jnp.where(masks.word_mask(lengths, tokens.shape[1]), energy, 0.0)


# Stored by the three stages that store measures: by the gradient stage as
# 'toy' (the evidence stage reads it there), by the importance stage as 'toy_meister'.
TOY = measure.Measure(
    name='embedding_energy', label='toy: squared embedding norm', column='toy ‖e‖²', paper=None,
    section='a test', order=90, fn=embedding_energy, short='toy',
    stored_as={'gradient': 'toy', 'importance': 'toy_meister', 'evidence': 'toy'})
# Stored by the evidence stage alone: computed there by its own function.
TOY_EVIDENCE = measure.Measure(
    name='embedding_energy_evidence', label='toy: squared embedding norm, evidence only',
    column='toy (evidence)', paper=None, section='a test', order=91, fn=embedding_energy,
    stored_as={'evidence': 'toy_evidence'})

# What results were saved and shown under before the registry: its names and labels.
COMMITTED_LABELS = {
    'evidence': {'alpha': 'α', 'gradient': 'J&W gradient', 'gradient_logit': 'gradient (logit)',
                 'gradient_attached': 'gradient, α attached', 'gradient_l2': 'Meister g(x)', 'loo': 'leave-one-out',
                 'decision_gradient': 'S&S ∂d/∂α', 'decision_gradient_x_attention': 'S&S α·∂d/∂α'},
    'meister': {'g_y_x': 'g_ŷ(x)', 'd_y_x': 'D_ŷ(x)', 'g_y_i': 'g_ŷ(I)', 'd_y_i': 'D_ŷ(I)'},
    'tau': {'attention_gradient': 'τ(α, gradient)', 'attention_loo': 'τ(α, LOO)', 'gradient_loo': 'τ(gradient, LOO)'},
    'tau_compact': (('accuracy', 'accuracy'), ('tau_attention_gradient', 'τ(α, grad)'),
                    ('tau_attention_loo', 'τ(α, LOO)'), ('tau_gradient_loo', 'τ(grad, LOO)')),
}
MEASURE_STAGES = ('gradient', 'importance', 'evidence')


def batch():
  return pad(documents((9, 5, 3)), 11)


def test_the_measures_keep_the_names_and_labels_of_every_committed_result():
  assert tuple(measure.stored('gradient')) == feature_importance.GRADIENT_KEYED
  assert tuple(measure.stored('importance')) == importance_stage.IMPORTANCE_KEYED
  assert tuple(measure.stored('evidence')) == evidence_stage.EVIDENCE_KEYED
  assert feature_importance.GRADIENT_VARIANTS == {
      'gradient': ('prob', True, 'dot'), 'gradient_logit': ('logit', True, 'dot'),
      'gradient_attached': ('prob', False, 'dot'), 'gradient_l2': ('prob', False, 'l2')}
  assert feature_importance.PAIRS == {'attention_gradient': ('alpha', 'gradient'), 'attention_loo': ('alpha', 'loo'),
                                      'gradient_loo': ('gradient', 'loo')}
  # Meister's g_ŷ(x) is one measure under two names (the gradient stage's
  # unnormalised L2 norm, the importance stage's normalised one); D_ŷ(x) is leave-one-out's.
  assert measure.stored('importance')['g_y_x'] is measure.stored('gradient')['gradient_l2'] is MEASURES['input_gradient']
  assert measure.stored('importance')['d_y_x'] is measure.stored('loo')['loo'] is MEASURES['leave_one_out']
  assert dict(known_evidence.LABELS) == COMMITTED_LABELS['evidence']
  assert dict(meister.NAMES) == COMMITTED_LABELS['meister']
  assert jain_wallace.TAU_PAIRS == COMMITTED_LABELS['tau']
  assert {p: study_results.STATISTICS[f'tau_{p}'][0] for p in feature_importance.PAIRS} == COMMITTED_LABELS['tau']
  assert studies.REFERENCE_COLUMNS == COMMITTED_LABELS['tau_compact']
  assert set(MEASURES.names()) <= set(needs.NEEDS)
  assert MEASURES['integrated_gradients'].settings == {'steps': 50, 'baseline': 'zero'}
  with pytest.raises(ValueError, match='Markdown table cell'):  # needs.table and the reports print labels in cells
    measure.Measure(name='bars', label='|e · g|', column='bars', paper=None, section='a test', fn=embedding_energy)


def _committed(stage: str) -> list[dict]:
  """The keys of every committed result of `stage` under results/."""
  paths = glob.glob(os.path.join(helpers.ROOT, 'results', '**', 'analyses', stage, '*', 'summary.json'),
                    recursive=True)
  keys = []
  for path in paths:
    with open(path) as f:
      key = json.load(f).get('key')
    if isinstance(key, dict) and key.get('stage') == stage:
      keys.append(key)
  return keys


def _rehash(key: dict, settings: dict) -> str:
  """A committed key's hash with its settings replaced (as `stage_runner.stage_key` hashes)."""
  key = {k: v for k, v in key.items() if k != 'hash'} | {'settings': settings}
  return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def test_every_committed_key_of_the_stages_that_store_measures_is_what_the_code_computes():
  analysis_config = config_lib.default_config('sst', 'bilstm').analysis
  for stage in MEASURE_STAGES:
    keys = _committed(stage)
    assert keys, f'no committed results of {stage}'
    now = STAGES[stage].key_settings(analysis_config)
    assert all(_rehash(k, now) == k['hash'] and k['version'] == STAGES[stage].version for k in keys), stage
    with MEASURES.registered(TOY):  # a measure registered for the stage: new results, a new key
      assert all(_rehash(k, STAGES[stage].key_settings(analysis_config)) != k['hash'] for k in keys), stage


def test_a_measure_registered_in_one_module_is_in_the_package_needs_and_every_analysis():
  model, params = setup()
  tokens, lengths = batch()
  expected = np.asarray(embedding_energy(model, params, tokens, lengths))
  with MEASURES.registered(TOY):
    assert analysis.MEASURES['embedding_energy'] is TOY and 'embedding_energy' in dir(analysis)
    np.testing.assert_array_equal(np.asarray(analysis.embedding_energy(model, params, tokens, lengths)), expected)
    assert needs.NEEDS['embedding_energy'] == TOY.need
    assert '| toy: squared embedding norm (`embedding_energy`) | ✓ |' in needs.table({'BiLSTM': model})
    with jax.numpy_dtype_promotion('standard'):  # optax's Adam bias correction (the adversary)
      results, refused = analysis.every_analysis(model, params, tokens, lengths, jax.random.PRNGKey(0),
                                                 adversary_steps=2, permutations=2)
    np.testing.assert_allclose(np.asarray(results['embedding_energy']), expected, rtol=1e-6)
    assert set(refused) == {'gradient_importance_all_heads'}  # for head views only
    for name in ('integrated_gradients', 'gradient_x_input'):
      np.testing.assert_allclose(np.asarray(results[name]),
                                 np.asarray(MEASURES[name].scores(model, params, tokens, lengths)), rtol=1e-5)
  assert 'embedding_energy' not in needs.NEEDS and 'embedding_energy' not in dir(analysis)
  with pytest.raises(AttributeError):
    analysis.embedding_energy  # pylint: disable=pointless-statement


def test_a_measure_registered_in_one_module_is_in_the_stages_keys_and_labels():
  analysis_config = config_lib.default_config('synthetic', 'bilstm').analysis
  before = {s: STAGES[s].key_settings(analysis_config) for s in MEASURE_STAGES}
  with MEASURES.registered(TOY), MEASURES.registered(TOY_EVIDENCE):
    assert feature_importance.gradient_measures()[-1] == 'toy' and 'toy' not in feature_importance.gradient_variants()
    assert importance_stage.measures()[-1] == 'toy_meister'
    assert evidence_stage.measures()[-4:] == ('toy', 'toy_evidence', 'decision_gradient',
                                              'decision_gradient_x_attention')
    assert 'toy' in STAGES['gradient'].positional and 'toy_meister' in STAGES['importance'].positional
    assert 'toy_evidence' in STAGES['evidence'].positional
    assert STAGES['gradient'].key_settings(analysis_config) == {
        'measures': [*feature_importance.GRADIENT_KEYED, 'toy']}
    assert STAGES['evidence'].key_settings(analysis_config)['measures'][-2:] == ['toy', 'toy_evidence']
    assert STAGES['importance'].key_settings(analysis_config) == {
        **before['importance'], 'measures': [*importance_stage.IMPORTANCE_KEYED, 'toy_meister']}
    # Labels: the kendall stage's τ, the evidence and Meister tables and figures.
    assert feature_importance.tau_label('attention_toy') == 'τ(α, toy)'
    assert known_evidence.LABELS['toy'] == 'toy ‖e‖²' and known_evidence.LABELS['toy_evidence'] == 'toy (evidence)'
    assert meister.NAMES['toy_meister'] == importance_stage.labels()['toy_meister'] == 'toy ‖e‖²'
    # A table shows a measure registered since its results were saved once a row has it.
    assert 'toy' not in known_evidence.shown([{'toy': {'n': 0}}]) and 'toy' in known_evidence.shown([{'toy': {'n': 3}}])
    assert meister.shown([{}]) == list(meister.TABLE6) and meister.shown([{'toy_meister': {}}])[-1] == 'toy_meister'
  assert {s: STAGES[s].key_settings(analysis_config) for s in MEASURE_STAGES} == before
  assert 'toy' not in known_evidence.LABELS and 'toy_meister' not in meister.NAMES


@pytest.mark.slow
@pytest.mark.usefixtures('optax_promotion')
def test_the_stages_store_a_measure_registered_in_one_module_and_reuse_results_without_it(smoke_trained, tmp_path):
  """The synthetic smoke model through the stages that store measures, with
  and without the toy measures: with them, new keys whose results hold the
  toy's scores (equal to its function's), its τ with α and its evidence AP,
  shown by the tables under its label; without them, every result of before
  is reused (its key unchanged)."""
  workdir = helpers.trained_copy(smoke_trained, tmp_path / 'w')
  names = ('gradient', 'loo', 'kendall', 'importance', 'evidence')
  cfg = helpers.synthetic_config(top__analyses=','.join(names))
  helpers.run(cfg, workdir)
  first = {s: {f.key_hash for f in stage_store.find(str(workdir), s)} for s in names}
  assert all(len(h) == 1 for h in first.values())
  with MEASURES.registered(TOY), MEASURES.registered(TOY_EVIDENCE):
    logs = []
    helpers.run(cfg, workdir, logs)
    skipped = {line.split(':')[0] for line in logs if 'skipped' in line}
    assert skipped == {'loo'}  # the one stage of the five whose key does not name the measures
    new = {s: next(f for f in stage_store.find(str(workdir), s) if f.key_hash not in first[s])
           for s in ('gradient', 'kendall', 'importance', 'evidence')}
    arrays = {s: stage_store.load_arrays(f.directory, f.summary) for s, f in new.items()}
    summaries = {s: f.summary for s, f in new.items()}
    # The toy's scores, as its function gives them, in the gradient and importance stages.
    restored = restore(str(workdir))
    test = load_dataset(cfg.data).splits['test']
    rows = [0, 1, 2]
    tokens = helpers.padded_rows(test, rows)
    expected = np.asarray(embedding_energy(restored.model, restored.params, jnp.asarray(tokens),
                                           jnp.asarray(test.lengths[rows])))
    for stage, name in (('gradient', 'toy'), ('importance', 'toy_meister')):
      np.testing.assert_allclose(arrays[stage][name][rows, :tokens.shape[1]], expected, rtol=1e-5, err_msg=stage)
    assert 'tau_attention_toy' in arrays['kendall'] and 'attention_toy' in summaries['kendall']['pairs']
    assert 'toy_meister' in summaries['importance']['tau']
    assert {'toy', 'toy_evidence'} <= set(summaries['evidence']['measures'])
    # The tables label them from their records.
    rows_shown = known_evidence.evidence_rows('run', 'synthetic', summaries['evidence'])
    assert any('evidence AP: toy ‖e‖²' in r[1] for r in rows_shown)
    assert any('evidence AP: toy (evidence)' in r[1] for r in rows_shown)
    run = {'name': 'run', 'dataset': 'synthetic', 'encoder': 'bilstm', 'projection': 'softmax',
           'stages': {'importance': summaries['importance']}}
    table6 = meister.table6_rows([run])
    assert table6[0][-2] == 'τ(α, toy ‖e‖²) (Meister)' and len(table6[1]) == len(table6[0])
  logs = []
  helpers.run(cfg, workdir, logs)
  assert sum('skipped' in line for line in logs) == len(names)  # the results of before, by their keys
