"""S&S's data and recipe: sentences, multi-class labels, metrics and loss,
the config's checks, and the report's verdicts."""

import os

import jax.numpy as jnp
import numpy as np
import scipy.stats
import pytest

from attn_jax import config as config_lib
from attn_jax.config.serrano_smith_config import model_name, parse_variant, ss_config
from attn_jax.core.errors import ConfigError
from attn_jax.data import serrano_smith_documents as serrano_smith, sentences
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.tables import serrano_smith_models_report as serrano_smith_models
from attn_jax.training.evaluation import cross_entropy_mean
from attn_jax.training.loss import mean_cross_entropy
from attn_jax.training.metrics import multiclass_metrics
from conftest import requires_real_data


@pytest.mark.parametrize('text,expected', [
    ('I loved it. Mr. Smith was great!<br /><br />The end... really?',
     ['I loved it.', 'Mr. Smith was great!', 'The end...', 'really?']),
    ('J. R. R. Tolkien wrote it. It is long.', ['J. R. R. Tolkien wrote it.', 'It is long.']),
    ('no capitals here. at all!   what a film', ['no capitals here.', 'at all!', 'what a film']),
    ('Version 3.5 came out, e.g. on Monday. "Yes." (Maybe.) Fine',
     ['Version 3.5 came out, e.g. on Monday.', '"Yes."', '(Maybe.)', 'Fine']),
    ('line one\nwraps here.\n\nNew paragraph', ['line one wraps here.', 'New paragraph']),
    ('... !!! <br/> Hi', ['Hi']),
])
def test_sentence_splitting(text, expected):
  assert sentences.split_sentences(text) == expected


def test_sentence_words_are_lower_case_and_keep_punctuation():
  assert serrano_smith.sentence_words('It was GREAT, 10/10. Loved it!') == [
      ['it', 'was', 'great', ',', '10/10', '.'], ['loved', 'it', '!']]  # numbers kept whole, as spaCy


def test_vocabulary_can_count_occurrences():
  docs = [['a', 'a', 'b'], ['a', 'c']]
  assert Vocabulary.build(docs, 2).tokens[4:] == ('a',)
  assert Vocabulary.build(docs, 2, count_tokens=True).tokens[4:] == ('a',)
  assert Vocabulary.build(docs, 1, count_tokens=True).tokens[4:] == ('a', 'b', 'c')
  assert Vocabulary.build([['x', 'x', 'x']], 3, count_tokens=True).tokens[4:] == ('x',)
  assert Vocabulary.build([['x', 'x', 'x']], 3).tokens[4:] == ()


def test_multiclass_metrics_and_loss_against_loops():
  rng = np.random.default_rng(0)
  logits = rng.normal(size=(50, 5))
  probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
  labels = rng.integers(0, 5, size=50)
  m = multiclass_metrics(labels, probs)
  predicted = [int(np.argmax(p)) for p in probs]
  assert m['accuracy'] == pytest.approx(sum(p == y for p, y in zip(predicted, labels)) / 50)
  f1 = []
  for c in range(5):
    tp = sum(p == c and y == c for p, y in zip(predicted, labels))
    prec = tp / max(sum(p == c for p in predicted), 1)
    rec = tp / max(sum(y == c for y in labels), 1)
    f1.append(0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec))
  assert m['macro_f1'] == pytest.approx(np.mean(f1))
  # Classes that occur in neither labels nor predictions do not count (bAbI's 36 answer words).
  wide = np.concatenate([probs, np.zeros((50, 3))], axis=1)
  assert multiclass_metrics(labels, wide)['macro_f1'] == pytest.approx(np.mean(f1))
  expected = -np.mean([np.log(probs[i, labels[i]]) for i in range(50)])
  assert cross_entropy_mean(labels, probs) == pytest.approx(expected, rel=1e-6)
  weights = np.ones(50, np.float32)
  weights[40:] = 0.0  # filler rows do not count
  loss = mean_cross_entropy(jnp.asarray(logits, jnp.float32), jnp.asarray(labels, jnp.float32),
                            jnp.asarray(weights))
  assert float(loss) == pytest.approx(-np.mean([np.log(probs[i, labels[i]]) for i in range(40)]), rel=1e-5)


def test_ss_configs_validate_and_name_their_models():
  for dataset in ('imdb_ratings', '20news_topics'):
    for family in ('han', 'flan'):
      for encoder in ('rnn', 'conv', 'noenc'):
        cfg = ss_config(dataset, family, encoder)
        config_lib.validate(cfg)
        assert cfg.name == f'{dataset}_{model_name(family, cfg.model.encoder)}'
        assert cfg.train.patience == (10 if encoder == 'noenc' else 5)
  assert parse_variant('noenc,smoke') == ('noenc', {'smoke'}) and parse_variant('') == ('rnn', set())
  assert parse_variant('conv,previous') == ('conv', {'previous'})
  with pytest.raises(ConfigError, match='unknown S&S config variant'):
    parse_variant('lstm')


@pytest.mark.parametrize('key,value,message', [
    ('model.classes', 2, 'imdb_ratings has 8 classes'),
    ('train.loss', 'weighted_bce', 'does not fit 8 classes'),
    ('train.select_by', 'roc_auc', 'needs binary data'),
    ('analyses', 'erasure,gradient', "stage 'gradient' is for models over words, not a HAN"),
    ('analyses', 'erasure,importance', "stage 'importance' is for binary models"),
    ('model.encoder', 'bilstm', 'a HAN is built from'),
    ('train.plateau_factor', 1.5, 'plateau_factor must be in'),
])
def test_ss_config_mistakes_are_named(key, value, message):
  cfg = ss_config('imdb_ratings', 'han', 'smoke')
  config_lib.set_key(cfg, key, value)
  with pytest.raises(ConfigError, match=message):
    config_lib.validate(cfg)


def test_a_han_needs_a_dataset_with_sentences():
  cfg = config_lib.default_config('sst', 'bigru', 'smoke')
  cfg.model.hierarchical = True
  cfg.model.attention = 'context'
  cfg.analyses = 'erasure'
  with pytest.raises(ConfigError, match='needs documents with sentences'):
    config_lib.validate(cfg)


def test_jw_configs_keep_their_result_keys():
  """S&S's keys are left out of J&W's result keys at their defaults, so
  results and workdirs made before they existed stay valid."""
  items = config_lib.result_items(config_lib.default_config('sst', 'bilstm'))
  for key in ('model.hierarchical', 'model.classes', 'vectors.method',
              'data.max_batch_tokens', 'model.output_dropout'):
    assert key not in items
  # J&W's optimiser rule changed on 2026-11-26 (PyTorch's AMSGrad): the key
  # enters new models' keys, and optax's rule keeps the older ones valid.
  assert items['train.optimizer'] == 'torch_amsgrad'
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.train.optimizer = 'amsgrad'
  assert 'train.optimizer' not in config_lib.result_items(cfg)


# ---------------------------------------------------------------- the report's verdicts

def fake_run(dataset, model, single, gradient, medians):
  removal = {k: {'n_flipped': 10, 'n_never_flipped': 5, 'median_fraction_removed': v,
                 'fraction_removed_above_0.5': 0.0} for k, v in medians.items()}
  erasure = {'single_weight': dict(zip(('percent_both_flip', 'percent_top_only', 'percent_other_only',
                                        'percent_neither'), single), n=100),
             'removal': removal,
             'comparisons': {'gradient_vs_attention': dict(zip(('b_fewer', 'a_fewer', 'ties'), gradient),
                                                           n=sum(gradient))}}
  return serrano_smith_models.ModelRun('x', dataset, model, {'accuracy': 0.4}, erasure)


def test_verdicts_follow_the_numbers():
  holds = [fake_run('imdb_ratings', 'HANrnn', (2, 12, 1, 85), (60, 20, 20), {'attention': 0.6}),
           fake_run('imdb_ratings', 'HANconv', (1, 5, 1, 93), (55, 30, 15), {'attention': 0.2}),
           fake_run('imdb_ratings', 'HANnoenc', (1, 5, 1, 93), (10, 80, 10), {'attention': 0.1})]
  v = {claim[:3]: verdict for _, claim, verdict, _ in serrano_smith_models.verdicts(holds)}
  assert v == {'(a)': 'HOLDS', '(b)': 'HOLDS', '(c)': 'HOLDS', '(d)': 'HOLDS'}
  fails = [fake_run('imdb_ratings', 'HANrnn', (2, 1, 12, 85), (30, 20, 50), {'attention': 0.1}),
           fake_run('imdb_ratings', 'HANconv', (1, 5, 1, 93), (20, 30, 50), {'attention': 0.2})]
  v = {claim[:3]: verdict for _, claim, verdict, _ in serrano_smith_models.verdicts(fails)}
  assert v == {'(a)': 'partly', '(b)': 'FAILS', '(c)': 'FAILS', '(d)': 'FAILS'}
  table3 = serrano_smith_models.table3_rows(holds)
  assert table3[1][:4] == ['HANrnn', '40.0', '50.3', '– + –']
  # (d)-(f): within each family, across families, and §5.5's FLANrnn.
  late = holds + [fake_run('imdb_ratings', 'FLANrnn', (2, 12, 1, 85), (60, 20, 20), {'attention': 0.7}),
                  fake_run('imdb_ratings', 'FLANconv', (2, 12, 1, 85), (60, 20, 20), {'attention': 0.3})]
  v = {claim[:3]: verdict for _, claim, verdict, _ in serrano_smith_models.verdicts(late)}
  assert (v['(d)'], v['(e)'], v['(f)']) == ('HOLDS', 'HOLDS', 'HOLDS')
  early = holds + [fake_run('imdb_ratings', 'FLANrnn', (2, 12, 1, 85), (60, 20, 20), {'attention': 0.01}),
                   fake_run('imdb_ratings', 'FLANconv', (2, 12, 1, 85), (60, 20, 20), {'attention': 0.02})]
  v = {claim[:3]: verdict for _, claim, verdict, _ in serrano_smith_models.verdicts(early)}
  assert (v['(d)'], v['(e)'], v['(f)']) == ('partly', 'FAILS', 'FAILS')


def test_claims_b_and_c_are_decided_from_the_interval_over_seeds():
  """Seeds of a model pool into an interval: the claim holds or fails for the
  model only where the interval lies on one side of the threshold."""
  def seeds(model, counts):
    return [fake_run('imdb_ratings', model, (2, 12, 1, 85), c, {'attention': 0.5}) for c in counts]
  # HANrnn's ratios 2.0, 2.1, 1.9: an interval above 1.6 -> holds.
  clear = seeds('HANrnn', [(60, 30, 10), (63, 30, 7), (57, 30, 13)])
  # HANconv's ratios 1.0, 2.4, 1.2: the interval straddles 1.6 -> undecided.
  wide = seeds('HANconv', [(40, 40, 20), (60, 25, 15), (42, 35, 23)])
  v = {claim[:3]: (verdict, text) for _, claim, verdict, text in serrano_smith_models.verdicts(clear + wide)}
  assert v['(b)'][0] == 'UNDECIDED'
  assert 'HANrnn 2.00× [' in v['(b)'][1] and '(3 seeds): holds' in v['(b)'][1]
  assert 'HANconv' in v['(b)'][1] and 'undecided (≈' in v['(b)'][1]
  decisions = serrano_smith_models.threshold_decisions(
      wide, lambda r: serrano_smith_models.ratio(serrano_smith_models.comparison(r.erasure, 'gradient_vs_attention')),
      1.6)
  t = decisions[0]['interval']
  values = np.array([1.0, 60 / 25, 42 / 35])
  half = scipy.stats.t.ppf(0.975, 2) * values.std(ddof=1) / np.sqrt(3)
  np.testing.assert_allclose([t['mean'], t['low'], t['high']], [values.mean(), values.mean() - half,
                                                                   values.mean() + half])
  # Below the threshold for every seed, narrowly: fails.
  low = seeds('HANconv', [(30, 30, 40), (31, 30, 39), (29, 30, 41)])
  v = {claim[:3]: verdict for _, claim, verdict, _ in serrano_smith_models.verdicts(clear + low)}
  assert v['(b)'] == 'FAILS'


@pytest.mark.heavy
@requires_real_data
def test_imdb_ratings_protocol(tfds_dir):
  from attn_jax.data import builders, dataset  # pylint: disable=g-import-not-at-top
  raw, source = builders.load('imdb', tfds_data_dir=tfds_dir)
  # Through the process's cache of prepared splits: the end-to-end test reuses them.
  prepared = dataset._prepared('imdb_ratings', ('train', 'dev', 'test'), raw, source)  # pylint: disable=protected-access
  sizes = {k: len(v) for k, v in prepared.splits.items()}
  assert sizes == {'train': 22500, 'dev': 2500, 'test': 25000}
  assert len(prepared.classes) == 8 and prepared.count_tokens
  for split in prepared.splits.values():
    assert all(sum(s) == len(d) for s, d in zip(split.sentence_lengths, split.docs))
    assert set(np.unique(split.labels)) == set(range(8))
  dev = np.bincount(prepared.splits['dev'].labels) / 2500
  train = np.bincount(prepared.splits['train'].labels) / 22500
  np.testing.assert_allclose(dev, train, atol=0.002)  # stratified
  stats = serrano_smith.statistics([prepared.splits['test']])
  assert 200 < stats['words_mean'] < 350 and 8 < stats['sentences_mean'] < 20
  assert os.environ.get('ATTN_JAX_DATA')


def test_appendix_tables_count_as_s_and_s_do():
  """Figures 4/8, 11, 12–13 from erasure summaries, and the before → after rows."""
  from attn_jax.tables import serrano_smith_appendix, serrano_smith_recipe  # pylint: disable=g-import-not-at-top

  def run(model, flips, g_flips, p_flips, masses, bins):
    r = fake_run('imdb_ratings', model, (flips, 10, 1, 89 - flips), (60, 20, 20), {'attention': 0.5})
    other = lambda f: {'percent_both_flip': 0.0, 'percent_top_only': f, 'percent_other_only': 1.0,
                       'percent_neither': 99.0 - f}
    r.erasure['single_weight_other_tops'] = {'gradient': other(g_flips), 'gradient_x_attention': other(p_flips)}
    r.erasure['single_weight']['delta_js_negative_by_delta_alpha'] = [
        {'delta_alpha': [i / 10, (i + 1) / 10], 'n': n, 'delta_js_negative': n // 2} for i, n in enumerate(bins)]
    for ranking, median in masses.items():
      r.erasure['removal'].setdefault(ranking, {'n_flipped': 1, 'n_never_flipped': 0})
      r.erasure['removal'][ranking]['attention_mass_percentiles'] = {
          '5': 0.0, '25': median / 2, '50': median, '75': 1.0, '95': 1.0}
    return r

  bins = [10, 10, 10, 20, 0, 0, 0, 0, 0, 50]
  han = run('HANrnn', 2, 5, 20, {'attention': 0.9, 'gradient': 0.6, 'gradient_x_attention': 0.7}, bins)
  flan = run('FLANrnn', 2, 20, 30, {'attention': 0.5}, bins)
  assert serrano_smith_appendix.share_at_least(han.erasure) == pytest.approx(0.7)  # 20 + 50 of 100
  assert serrano_smith_appendix.mass_shift(han.erasure, 'gradient') == pytest.approx(0.3)
  assert serrano_smith_appendix.mass_shift(flan.erasure, 'gradient') is None
  # i* flips: HANrnn α 12 %, gradient 5 %, product 20 %; FLANrnn α 12 %, gradient 20 %, product 30 %.
  assert serrano_smith_appendix.other_tops_counts([han, flan]) == {'gradient': (1, 1, 2), 'gradient_x_attention': (0, 2, 2)}
  rows = serrano_smith_appendix.delta_alpha_rows([han])
  assert rows[1][2] == '70.0' and rows[1][3] == '5 / 10' and rows[1][-1] == '25 / 50'
  assert serrano_smith_appendix.mass_rows([han])[1][2] == '0.90 [0.45–1.00]'
  before = fake_run('imdb_ratings', 'HANrnn', (1, 5, 1, 93), (30, 60, 10), {'attention': 0.2})
  after = serrano_smith_recipe.rows([before], [han])
  assert after[1][:3] == ['aclImdb ratings (8 cl.)', 'HANrnn', '40.0 → 40.0']
  assert after[1][5] == '0.20 → 0.50' and after[1][6] == '0.50 → 3.00'
  assert serrano_smith_recipe.tables([], [han]) == {}
