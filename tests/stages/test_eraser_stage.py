"""The `eraser` stage (ERASER's comprehensiveness, sufficiency and AOPC) on a
fresh smoke model: its arrays equal `erasure_metrics` called on the same
scores, its AOPC a float64 loop over single documents, its results do not
depend on the batch size (the random ranking's included), its summary holds
the intervals and tests the report reads, and it is keyed by its section
but its runtime keys."""

import collections
import itertools
import math

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.analysis import eraser_comparisons, eraser_metrics as em, measure, verdicts
from attn_jax.core.errors import ConfigError
from attn_jax.core.registry import MEASURES, STAGES
from attn_jax.data.dataset import load_dataset
from attn_jax.data.vocabulary import EOS, SOS
from attn_jax.models import build_model
from attn_jax.stages import eraser, stage_runner, stage_store as store
from attn_jax.stages.stage import AnalysisContext
from analysis_helpers import naive, single, to_f64

DOCS = 6
Analysed = collections.namedtuple('Analysed', 'cfg model params data ctx summary arrays out')


def _config(batch_size=16, **section):
  cfg = config_lib.default_config('synthetic', 'cnn', 'smoke')  # the CNN: its float64 reference compiles fast
  cfg.train.progress = False
  cfg.analyses = 'eraser'
  cfg.analysis.max_docs = DOCS
  cfg.analysis.batch_size = batch_size
  for key, value in section.items():
    cfg.analysis.eraser[key] = value
  config_lib.validate(cfg)
  return cfg


def _run(cfg, out, model, params, data, logs=None):
  """The stage's (summary, arrays) for `cfg`, results under `out`."""
  summaries = stage_runner.run_analyses(model, params, data.splits, cfg, str(out), data.fingerprint,
                                        log=(logs.append if logs is not None else lambda _: None))
  directory = store.result_dir(str(out), summaries['eraser']['key'])
  stored, problem = store.read_summary(directory)
  assert problem is None, problem
  return stored, store.load_arrays(directory, stored)


@pytest.fixture(scope='module')
def analysed(tmp_path_factory):
  cfg = _config()
  data = load_dataset(cfg.data)
  model = build_model(cfg.model, len(data.vocab))
  params = model.init(jax.random.PRNGKey(0))
  out = tmp_path_factory.mktemp('eraser')
  summary, arrays = _run(cfg, out, model, params, data)
  split = stage_runner.limit_split(data.splits['test'], DOCS)
  ctx = AnalysisContext(model, params, split, 'test', cfg, data.fingerprint, str(out))
  return Analysed(cfg, model, params, data, ctx, summary, arrays, out)


def _scores(ctx, tokens, lengths, index):
  """[M, B, L] every row's scores as the stage defines them, computed here."""
  model, names, count = ctx.model, eraser.measures(ctx.model), ctx.settings.eraser.random_rankings

  @jax.jit  # one compilation, not many eager ops
  def scores(params, tokens, lengths, keys):
    found = [model.forward(params, tokens, lengths).alpha]
    found += [MEASURES[n].scores(model, params, tokens, lengths) for n in names]
    return jnp.concatenate([jnp.stack(found), em.random_scores(keys, lengths, tokens.shape[1], count)])
  return scores(ctx.params, tokens, lengths, ctx.keys(eraser.KEY_STREAM, index))


def test_the_rows_are_alpha_every_measure_the_model_takes_and_random(analysed):
  names = analysed.summary['measures']
  taken = [n for n in MEASURES.names() if n not in analysed.summary['refused']]
  assert names == ['alpha', *taken, 'random']
  assert 'gradient_importance_all_heads' in analysed.summary['refused']  # a head view's measure
  assert analysed.arrays['comprehensiveness'].shape == (DOCS, len(names), len(em.FRACTIONS))
  assert analysed.arrays['comprehensiveness'].dtype == np.float32


def test_the_arrays_are_erasure_metrics_on_the_same_scores(analysed):
  a = analysed
  checked = np.zeros(DOCS, bool)
  for batch in a.ctx.batches():
    real = batch.index >= 0
    rows = batch.index[real]
    tokens, lengths = jnp.asarray(batch.tokens), jnp.asarray(batch.lengths)
    got = jax.jit(lambda p, t, n, s: em.erasure_metrics(a.model, p, t, n, s))(
        a.params, tokens, lengths, _scores(a.ctx, tokens, lengths, batch.index))
    for name in ('comprehensiveness', 'sufficiency'):
      np.testing.assert_allclose(a.arrays[name][rows], np.moveaxis(np.asarray(getattr(got, name)), -1, 0)[real],
                                 atol=1e-6, err_msg=name)
    np.testing.assert_allclose(a.arrays['prob'][rows], np.asarray(got.prob)[real], atol=1e-6)
    np.testing.assert_array_equal(a.arrays['predicted'][rows], np.asarray(got.predicted)[real])
    np.testing.assert_array_equal(a.arrays['counts'][rows], np.asarray(got.counts).T[real])
    checked[rows] = True
  assert checked.all()
  # Not vacuous: the removals change p(ŷ), and the rows differ from each other.
  assert np.abs(a.arrays['comprehensiveness']).max() > 1e-4 and np.abs(a.arrays['sufficiency']).max() > 1e-4
  assert np.ptp(a.arrays['aopc_comprehensiveness'], axis=1).max() > 1e-5
  np.testing.assert_allclose(a.arrays['aopc_sufficiency'], a.arrays['sufficiency'].mean(axis=2), atol=1e-7)


def test_aopc_of_two_documents_against_a_float64_loop(analysed):
  a = analysed
  fractions = a.summary['fractions']
  with jax.enable_x64(True):
    p64 = to_f64(a.params)

    def distribution(words):
      logits = single(a.model, p64, np.array([SOS, *words, EOS], np.int32)).logits
      return np.exp(np.asarray(a.model.log_distribution(logits), np.float64))[0]

    for doc in (0, 3):
      sequence = np.asarray(a.ctx.split.sequences[doc], np.int32)
      tokens, lengths = jnp.asarray(sequence[None]), jnp.asarray([len(sequence)], jnp.int32)
      with jax.enable_x64(False):  # the scores as the stage computes them: float32
        scores = np.asarray(_scores(a.ctx, tokens, lengths, np.array([doc])), np.float64)[:, 0]
      words = sequence[1:-1]
      for m in range(scores.shape[0]):
        curves = np.array([naive(distribution, words, scores[m, 1:len(words) + 1], f)[:2] for f in fractions])
        np.testing.assert_allclose(a.arrays['aopc_comprehensiveness'][doc, m], curves[:, 0].mean(), atol=2e-6)
        np.testing.assert_allclose(a.arrays['aopc_sufficiency'][doc, m], curves[:, 1].mean(), atol=2e-6)


def test_results_do_not_depend_on_the_batch_size(analysed, tmp_path):
  a = analysed
  summary, arrays = _run(_config(batch_size=2), tmp_path, a.model, a.params, a.data)
  assert summary['key']['hash'] == a.summary['key']['hash']  # the batch size keys nothing
  random = summary['measures'].index('random')
  for name in ('comprehensiveness', 'sufficiency', 'prob', 'counts'):
    np.testing.assert_allclose(arrays[name], a.arrays[name], atol=1e-6, err_msg=name)
  np.testing.assert_allclose(arrays['aopc_comprehensiveness'][:, random],
                             a.arrays['aopc_comprehensiveness'][:, random], atol=1e-6)


def test_the_summary_holds_intervals_and_paired_tests(analysed):
  s, arrays = analysed.summary, analysed.arrays
  names = s['measures']
  assert s['n'] == DOCS and s['fractions'] == list(em.FRACTIONS) and s['rounding'] == 'floor'
  assert s['normaliser'] == 'bins' and s['margin'] == eraser.MARGIN and s['random_rankings'] == 1
  assert s['labels']['alpha'] == 'α' and s['labels']['leave_one_out'] == MEASURES['leave_one_out'].column
  words = arrays['lengths'] - 2
  assert s['no_words'] == {f'{f:g}': int(np.sum(arrays['counts'][:, k] == 0)) for k, f in enumerate(em.FRACTIONS)}
  assert s['no_words']['0.01'] == int(np.sum(words < 100))  # floor: 1 % of fewer than 100 words is none
  measures = [n for n in names if n != 'random']
  for metric in eraser.METRICS:
    aopc = arrays[f'aopc_{metric}'].astype(np.float64)
    found = s['aopc'][metric]
    assert set(found['means']) == set(names)  # summary.json sorts its keys: `measures` is the order
    for i, name in enumerate(names):
      mean = found['means'][name]
      assert mean['mean'] == pytest.approx(aopc[:, i].mean(), abs=1e-9) and mean['low'] <= mean['mean'] <= mean['high']
      np.testing.assert_allclose(s['curves'][metric][name], arrays[metric][:, i].mean(axis=0), rtol=1e-5)
    for i, name in enumerate(measures):
      test = found['vs_random'][name]
      difference = aopc[:, i] - aopc[:, names.index('random')]
      assert test['difference'] == pytest.approx(difference.mean(), abs=1e-9)
      assert test['verdict'] == verdicts.compare(aopc[:, i], aopc[:, -1], eraser.MARGIN, paired=True)['verdict']
    pairs = found['pairs']
    assert [(p['a'], p['b']) for p in pairs] == list(itertools.combinations(measures, 2))
    assert pairs[0]['difference'] == pytest.approx((aopc[:, 0] - aopc[:, 1]).mean(), abs=1e-9)
    assert all(p['p_zero_holm'] >= p['p_zero'] and p['verdict_holm'] in verdicts.ORDER for p in pairs)
  assert sorted(f.rsplit('.', 1)[1] for f in s['figures']) == ['png', 'svg']


def test_the_random_column_is_the_mean_of_several_random_rankings():
  values = np.array([[0.3, 0.1, 0.2], [0.5, 0.0, 0.4], [0.1, 0.2, 0.2]])
  found = eraser_comparisons.columns(values, ['alpha', 'random_0', 'random_1'])
  assert list(found) == ['alpha', 'random'] and np.allclose(found['random'], [0.15, 0.2, 0.2])
  tests = eraser_comparisons.compare_measures(found, margin=0.02, interval='t')
  assert tests['pairs'] == [] and tests['vs_random']['alpha']['difference'] == pytest.approx(0.3 - 0.55 / 3)
  assert math.isfinite(tests['means']['alpha']['high'])


def test_a_section_setting_keys_the_results_and_a_runtime_one_does_not(analysed):
  stage = STAGES['eraser']
  base = _config()
  assert 'docs_per_chunk' not in stage.key_settings(base.analysis)
  assert 'measures' not in stage.key_settings(base.analysis)  # the measures it was first keyed with
  for key, value in (('rounding', 'ceil'), ('min_words', 1), ('normaliser', 'bins_plus_one'),
                     ('fractions', (0.1, 0.5)), ('random_rankings', 2), ('margin', 0.05)):
    assert stage.key_settings(_config(**{key: value}).analysis) != stage.key_settings(base.analysis), key
  runtime = _config(docs_per_chunk=1, max_chunk_bytes=2**20)
  assert stage.key_settings(runtime.analysis) == stage.key_settings(base.analysis)
  toy = measure.Measure(name='toy_eraser', label='toy', column='toy', paper=None, section='a test', order=99,
                        fn=lambda model, params, tokens, lengths: jnp.zeros(tokens.shape))
  with MEASURES.registered(toy):  # a measure registered since: new results, a new key
    assert stage.key_settings(base.analysis)['measures'][-1] == 'toy_eraser'
  logs = []  # the results computed at the default chunks are these settings' too
  _run(runtime, analysed.out, analysed.model, analysed.params, analysed.data, logs)
  assert any('eraser' in line and 'verified and skipped' in line for line in logs), logs


def test_settings_are_checked_in_one_line():
  cfg = _config()
  cfg.analysis.eraser.fractionz = (0.1,)
  with pytest.raises(ConfigError, match=r"unknown config key 'analysis.eraser.fractionz'") as e:
    config_lib.validate(cfg)
  assert '\n' not in str(e.value) and 'analysis.eraser.fractions' in str(e.value)
  for key, value, said in (('rounding', 'nearest', 'choose from floor, ceil, round'),
                           ('fractions', (0.5, 0.1), 'increasing fractions'),
                           ('random_rankings', 0, 'random_rankings >= 1')):
    cfg = config_lib.default_config('synthetic', 'cnn', 'smoke')
    cfg.analysis.eraser[key] = value
    with pytest.raises(ConfigError, match=said):
      config_lib.validate(cfg)


class _Batch:
  tokens = np.zeros((2, 9), np.int32)
  lengths = np.array([9, 7], np.int32)


@pytest.mark.parametrize('budget,want', [(None, (4, None)), (10_000, (4, None)), (2_000, (3, None)),
                                         (1_650, (2, None)), (1_350, (1, None)), (500, (1, 2))])
def test_a_chunk_holds_as_many_documents_as_the_measured_memory_allows(monkeypatch, budget, want):
  def temp_bytes(self, name, make, *args):  # XLA's analysis, made up: 1000 + 300 a document, 100 a row
    del self, make, args
    docs, rows = name.split(':')[-2:]
    return 1000 + (300 * int(docs) if rows == 'None' else 100 * int(rows))

  monkeypatch.setattr(AnalysisContext, 'temp_bytes', temp_bytes)
  cfg = ml_collections.ConfigDict({'model': {}, 'analysis': {'eraser': {'docs_per_chunk': 4,
                                                                         'max_chunk_bytes': budget}}})
  ctx = AnalysisContext(None, None, None, 'test', cfg, '', '')
  assert eraser.eraser_chunks(ctx, _Batch(), None, ('alpha',)) == want
