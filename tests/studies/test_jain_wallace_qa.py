"""The J&W QA study: its 18 bAbI arms, its table beside J&W's published
values, the known-evidence table and figure, and J&W's code beside it with the
equivalence test."""

import json
import os

import pytest

from attn_jax.papers import published
from attn_jax.tables import jain_wallace_qa_report as jain_wallace_qa, known_evidence
from attn_jax.studies import STUDIES
from reference_trees import ours, theirs

STUDY = STUDIES['jw_qa']
ROW = (0.99, 0.25, 0.16, 0.50)  # babi1_bilstm_tanh: accuracy and the three τ, ± SPREAD
JW_CODE = (0.995, 0.26, 0.30, 0.49)  # J&W's code: τ(α, LOO) 0.14 away, the rest within the margins
EVIDENCE = {'alpha': 0.62, 'gradient': 0.55, 'loo': 0.70, 'decision_gradient': 0.40}


def with_evidence(root, arm, values, seeds=5):
  for k in range(seeds):
    folder = root / arm / f'seed{k}' / 'analyses' / 'evidence' / 'test-10docs-0123456789abcdef'
    folder.mkdir(parents=True)
    measures = {m: {'mean_ap': v + 0.002 * k} for m, v in values.items()}
    folder.joinpath('summary.json').write_text(json.dumps(
        {'key': {'split': 'test', 'stage': 'evidence'}, 'documents': 10, 'measures': measures,
         'chance': {'mean_ap': 0.21}, 'best': max(measures, key=lambda m: measures[m]['mean_ap'])}))


@pytest.fixture
def tree(tmp_path):
  results = tmp_path / 'results'
  ours(results / 'jw_qa', 'babi1_bilstm_tanh', ROW)
  with_evidence(results / 'jw_qa', 'babi1_bilstm_tanh', EVIDENCE)
  theirs(results / 'jw_qa_reference', 'babi1_bilstm_tanh', JW_CODE, spread=(-0.004, 0.0, 0.004, -0.002, 0.002))
  return results


def test_the_study_is_every_babi_row_with_the_evidence_stage():
  assert STUDY.kind == 'qa_grid' and STUDY.seeds == 5 and len(STUDY.arms) == 18
  assert {(a.dataset, a.encoder, a.overrides['model.attention']) for a in STUDY.arms} == {
      k for k in published.JAIN_WALLACE_QA_GRID if k[0].startswith('babi')}
  cfg = STUDY.arms[0].config(5, STUDY.analyses)
  assert cfg.analyses.endswith(',evidence') and cfg.sweep == 'seed=0,1,2,3,4'
  assert cfg.train.batch_order == 'own' and cfg.model.query


def test_the_table_sets_each_row_beside_jws_published_values(tree, capsys):
  rows = jain_wallace_qa.grid_rows(STUDY, str(tree / 'jw_qa'))
  row = next(r for r in rows if r[0] == 'babi1_bilstm_tanh')
  assert row[1] == '5' and row[2].startswith('0.990 ±') and '[1.000 ✗]' in row[2]
  assert '[0.251 ✓]' in row[3] and '[0.160 ✓]' in row[4]
  assert next(r for r in rows if r[0] == 'babi2_cnn_dot')[1] == '0 (not run yet)'
  snli = [r for r in rows if r[0].startswith('snli_')]  # no number under SNLI's name: its train split is missing
  assert len(snli) == 6 and all(r[1] == 'needs SNLI train' and r[2] == '– [0.779]' for r in snli[:1])


def test_the_evidence_table_names_the_best_measure_and_whether_it_is_apart(tree):
  arms = [('babi1_bilstm_tanh', str(tree / 'jw_qa' / 'babi1_bilstm_tanh'))]
  rows = known_evidence.study_rows(arms)
  header, row = rows[0], rows[1]
  assert row[header.index('leave-one-out')].startswith('0.704 ±')
  assert row[header.index('chance: random words')].startswith('0.210')
  # 0.70 vs α's 0.62 in every seed: the paired differences have no spread, so the numbers decide
  assert row[header.index('best vs next (paired over seeds)')] == 'leave-one-out ≠ α (Δ +0.080 [+0.080, +0.080])'
  # no config.json: the data, and so the position baselines, are not known
  assert row[header.index('later words first')] == '–' and row[header.index('beat later words first')] == '–'
  assert row[header.index('beat chance')] == 'all 4'
  lines = known_evidence.headline([('babi1_bilstm_tanh', 'bilstm', arms[0][1])])
  assert lines[0] == ('bilstm: the best measure shown above the next (paired over seeds) on 1 of 1 rows '
                      '(babi1_bilstm_tanh: leave-one-out); tied on 0')
  assert 'the best measure tied with the next on 0 of 1 rows' in lines
  paths = known_evidence.study_figure(arms, str(tree / 'figure' / 'evidence_ap'))
  assert [p.rsplit('.', 1)[1] for p in paths] == ['png', 'svg']


# bAbI 1's baselines as the study's evidence_baselines.json records them (made-up Monte Carlo details).
BASELINES = {'questions': 1000, 'file': 'qa1_single-supporting-fact_test.txt', 'sha256': 'f' * 64,
             'random_words': 0.282, 'evidence_words': 5.0, 'later_words_first': 0.567,
             'last_statement_first': 0.632, 'random_word_types': 0.246, 'random_word_types_se': 5e-05,
             'draws': 2000, 'seed': 0}


def evidence_arm(root, arm, encoder, per_seed, chance=0.282, evidence_words=5.0):
  """An arm of 5 seeds: config.json (babi1, `encoder`), eval.json, and an
  evidence summary with `per_seed` {measure: 5 mean APs}."""
  for k in range(5):
    seed = root / arm / f'seed{k}'
    folder = seed / 'analyses' / 'evidence' / 'test-1000docs-0123456789abcdef'
    folder.mkdir(parents=True)
    (seed / 'eval.json').write_text(json.dumps({'accuracy': 0.9}))
    (seed / 'config.json').write_text(json.dumps({'data': {'dataset': 'babi1'}, 'model': {'encoder': encoder}}))
    measures = {m: {'mean_ap': v[k]} for m, v in per_seed.items()}
    folder.joinpath('summary.json').write_text(json.dumps(
        {'key': {'split': 'test', 'stage': 'evidence'}, 'documents': 1000, 'measures': measures,
         'chance': {'mean_ap': chance}, 'evidence_words': {'mean': evidence_words},
         'best': max(measures, key=lambda m: measures[m]['mean_ap'])}))


@pytest.fixture
def baseline_tree(tmp_path, monkeypatch):
  monkeypatch.delenv('ATTN_JAX_DATA', raising=False)  # the recorded baselines, not the data folder's
  root = tmp_path / 'jw_qa'
  root.mkdir()
  (root / known_evidence.BASELINES_FILE).write_text(json.dumps(
      {'version': known_evidence.BASELINES_VERSION, 'tasks': {'babi1': BASELINES}}))
  evidence_arm(root, 'babi1_bilstm_tanh', 'bilstm', {
      'loo': [0.70, 0.72, 0.74, 0.71, 0.73],            # far above later words first (0.567): beats it
      'gradient_l2': [0.69, 0.73, 0.72, 0.72, 0.72],    # as far, and paired with LOO: tied with it
      'gradient': [0.50, 0.70, 0.55, 0.65, 0.60],       # mean 0.60 > 0.567, but the spread: not shown above
      'alpha': [0.40, 0.42, 0.44, 0.41, 0.43]})         # above chance only
  evidence_arm(root, 'babi1_average_tanh', 'average', {
      'loo': [0.27, 0.28, 0.26, 0.27, 0.28],            # below random words (0.282), above random word types (0.246)
      'alpha': [0.25, 0.24, 0.25, 0.26, 0.24]})         # at the word types' chance
  return root


def test_the_evidence_table_tests_each_measure_against_the_baselines(baseline_tree):
  arms = [(n, str(baseline_tree / n)) for n in ('babi1_bilstm_tanh', 'babi1_average_tanh')]
  rows = known_evidence.study_rows(arms)
  header, bilstm, average = rows[0], rows[1], rows[2]
  col = header.index
  assert [bilstm[col(c)] for c in ('later words first', 'last statement first', 'random word types')] == [
      '0.567', '0.632', '–']  # the types' chance only where measures tie by type
  assert average[col('random word types')] == '0.246'
  assert bilstm[col('beat later words first')] == 'Meister g(x), leave-one-out'
  assert bilstm[col('beat last statement first')] == 'Meister g(x), leave-one-out'
  assert bilstm[col('beat chance')] == 'all 4'
  assert bilstm[col('best vs next (paired over seeds)')].startswith('tied: leave-one-out, Meister g(x) (')
  # Average: chance is the random ranking of word types, which LOO beats though below random words
  assert average[col('beat chance')] == 'leave-one-out'
  assert average[col('beat later words first')] == 'none'
  assert average[col('best vs next (paired over seeds)')].startswith('leave-one-out ≠ α (Δ +0.024')
  found = known_evidence.arm_evidence(arms[1][1])
  assert not known_evidence.beats(found['tests']['loo']['random_words'])  # below random words (by < the margin)
  assert found['tests']['loo']['random_words']['difference'] < 0
  lines = known_evidence.headline([(n, n.split('_')[1], f) for n, f in arms])
  assert 'the best measure tied with the next on 1 of 2 rows' in lines
  assert ('rows where a measure beats chance (random word types on Average rows, random words on the others): '
          '2 of 2') in lines
  assert 'rows where a measure beats later words first: 1 of 2 (babi1_bilstm_tanh)' in lines
  assert any(line.startswith('babi1 baselines, mean AP over its 1000 test questions: random words 0.282, random '
                             'word types 0.246 (Monte Carlo, 2000 type orders a question, standard error 0.00005)')
             and line.endswith('(the study\'s evidence_baselines.json); the same questions as the models\' '
                               'evidence stage: chance AP and mean evidence-word count equal on 10 of 10 models')
             for line in lines)
  assert any(line.startswith('per-question APs') and 'for 0 of 10 models' in line for line in lines)


def test_baselines_of_other_questions_are_not_used(baseline_tree):
  evidence_arm(baseline_tree, 'babi1_cnn_tanh', 'cnn', {'loo': [0.7, 0.72, 0.74, 0.71, 0.73]}, chance=0.25)
  header, row = known_evidence.study_rows([('babi1_cnn_tanh', str(baseline_tree / 'babi1_cnn_tanh'))])
  assert row[header.index('later words first')] == '–' and row[header.index('beat later words first')] == '–'
  found = known_evidence.arm_evidence(str(baseline_tree / 'babi1_cnn_tanh'))
  assert found['checked'] == (0, 5) and set(found['baselines']) == {'random_words'}


def test_save_keeps_the_evidence_stages_per_question_aps(tree, tmp_path):
  from attn_jax.tables import studies as tables_studies  # pylint: disable=g-import-not-at-top
  folder = tree / 'jw_qa' / 'babi1_bilstm_tanh' / 'seed0' / 'analyses' / 'evidence' / 'test-10docs-0123456789abcdef'
  import numpy as np  # pylint: disable=g-import-not-at-top
  np.savez_compressed(folder / 'kept.npz', ap=np.full((2, 10), 0.5, np.float16), names=np.array(['alpha', 'loo']))
  tables_studies.save(STUDY, str(tree / 'jw_qa'), str(tmp_path / 'saved'))
  saved = tmp_path / 'saved' / 'babi1_bilstm_tanh' / 'seed0' / 'analyses' / 'evidence' / folder.name
  assert (saved / 'summary.json').exists() and (saved / 'kept.npz').exists()
  assert not (tmp_path / 'saved' / 'babi1_bilstm_tanh' / 'seed1' / 'analyses' / 'evidence' / folder.name /
              'kept.npz').exists()
  kept = known_evidence.per_question(str(tmp_path / 'saved' / 'babi1_bilstm_tanh' / 'seed0'))
  assert set(kept) == {'alpha', 'loo'} and kept['loo'].shape == (10,)


def test_jws_code_beside_with_the_equivalence_test(tree, capsys):
  rows = jain_wallace_qa.reference_rows(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  header, row = rows[0], rows[1]
  assert row[:2] == ['babi1_bilstm_tanh', '5 / 5']
  assert row[header.index('τ(α, grad): verdict')].startswith('equivalent')
  assert '(Δ -0.010' in row[header.index('τ(α, grad): verdict')]
  assert row[header.index('τ(α, LOO): verdict')].startswith('different (Δ -0.140')
  assert row[header.index('accuracy: verdict')].startswith('equivalent')


def test_the_reference_table_counts_its_verdicts_as_the_grids_does(tree):
  # babi1_average_tanh: one seed of J&W's code, so no cell of it is tested
  ours(tree / 'jw_qa', 'babi1_average_tanh', (0.42, 0.7, 0.7, 0.6))
  theirs(tree / 'jw_qa_reference', 'babi1_average_tanh', (0.42, 0.7, 0.7, 0.6), spread=(0.0,))
  compared = jain_wallace_qa.compare_with_code(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  assert [c[0].name for c in compared] == ['babi1_bilstm_tanh', 'babi1_average_tanh']
  line, = jain_wallace_qa.reference_counts(compared)
  # babi1_bilstm_tanh (JW_CODE): τ(α, LOO) 0.14 apart, shown different; the other three shown equivalent, two of
  # them with a small difference shown too (Δ 0.01 at a tighter spread)
  assert line == ('row × statistic cells: 4 tested: 1 equivalent, 2 equivalent with a difference smaller than the '
                  'margin, 1 different, 0 inconclusive; with Holm\'s correction across the 4: 3 equivalent, 0 '
                  'equivalent with a difference smaller than the margin, 1 different, 0 inconclusive; all four '
                  'statistics shown equivalent (≡ or ≡Δ) in 0 of 1 rows')
  assert jain_wallace_qa.reference_rows(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'), compared) == \
      jain_wallace_qa.reference_rows(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  assert jain_wallace_qa.reference_counts([]) == []


def test_a_row_whose_four_statistics_are_shown_equivalent_is_named(tree):
  ours(tree / 'jw_qa', 'babi1_bilstm_dot', ROW)
  theirs(tree / 'jw_qa_reference', 'babi1_bilstm_dot', ROW, spread=(-0.004, 0.0, 0.004, -0.002, 0.002))
  compared = jain_wallace_qa.compare_with_code(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  line, = jain_wallace_qa.reference_counts(compared)
  # babi1_bilstm_tanh: τ(α, LOO) different, the rest equivalent (JW_CODE); babi1_bilstm_dot: all four
  assert line.startswith('row × statistic cells: 8 tested: 5 equivalent, 2 equivalent with a difference smaller '
                         'than the margin, 1 different, 0 inconclusive')
  assert line.endswith('all four statistics shown equivalent (≡ or ≡Δ) in 1 of 2 rows (babi1_bilstm_dot)')


def test_report_writes_the_three_blocks(tree, tmp_path, capsys):
  readme = tmp_path / 'page.md'
  readme.write_text('\n'.join(f'<!-- {b}:start -->\n<!-- {b}:end -->' for b in
                              ('jw_qa-table', 'jw_qa-evidence', 'jw_qa-reference')) + '\n')
  jain_wallace_qa._tabulate(STUDY, str(tree / 'jw_qa'), None, [str(readme)], None)  # pylint: disable=protected-access
  text = readme.read_text()
  assert '| babi1_bilstm_tanh | 5 |' in text and 'leave-one-out ≠ α' in text and 'different (Δ' in text
  out = capsys.readouterr().out
  assert "J&W's own code on the same inputs" in out and 'Known evidence' in out


def test_seeds_at_the_marginal_plateau_are_counted_with_fishers_exact_test(tree):
  """bAbI 1 Average + tanh: some seeds never leave the plateau of predicting
  the answers' marginal; the note counts them per side and tests the counts
  (2 of 5 against 0 of 5: Fisher's p = 0.44, by hand: of the tables with two
  plateau seeds in all, (2, 0) and (0, 2) are as likely as the one observed,
  C(5,2)·C(5,0)/C(10,2) = 10/45 each, and (1, 1) more likely: p = 20/45)."""
  ours(tree / 'jw_qa', 'babi1_average_tanh', (0.40, 0.55, 0.7, 0.6))
  for k, accuracy in enumerate((0.42, 0.43, 0.17, 0.16, 0.41)):
    (tree / 'jw_qa' / 'babi1_average_tanh' / f'seed{k}' / 'eval.json').write_text(json.dumps({'accuracy': accuracy}))
  theirs(tree / 'jw_qa_reference', 'babi1_average_tanh', (0.42, 0.55, 0.7, 0.6),
         spread=(-0.02, -0.01, 0.0, 0.01, 0.02))
  notes = jain_wallace_qa.plateau_notes(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  assert notes == [
      "babi1_average_tanh: seeds below accuracy 0.25 (at the plateau of predicting the answers' marginal): "
      "attn-jax 2 of 5, J&W's code 0 of 5; Fisher's exact test p = 0.44 (no difference detected: not a "
      "showing of sameness)"]  # babi1_bilstm_tanh: no seed below on either side, no note


def test_a_row_trained_on_an_earlier_recipe_says_which_keys_differ(tree):
  """A recipe fix (J&W's QA trainer decays the attention too) changes a
  default; a saved row trained before it says so in its seeds cell."""
  from attn_jax.tables import studies as tables_studies  # pylint: disable=g-import-not-at-top
  from attn_jax.workdirs import model_axis  # pylint: disable=g-import-not-at-top
  arm = next(a for a in STUDY.arms if a.name == 'babi1_bilstm_tanh')
  cfg = arm.config(STUDY.seeds, STUDY.analyses)
  folder = tree / 'jw_qa' / 'babi1_bilstm_tanh'
  today = model_axis.model_config(cfg, {'seed': 0}).to_dict()
  (folder / 'seed0' / 'config.json').write_text(json.dumps(today))
  assert tables_studies.seeds_cell(STUDY, arm, str(folder), 5) == '5'
  del today['train']['decay_attention']  # saved before the key existed: J&W's classifier rule, no decay
  (folder / 'seed0' / 'config.json').write_text(json.dumps(today))
  assert tables_studies.seeds_cell(STUDY, arm, str(folder), 5) == '5 (earlier recipe: train.decay_attention)'
  assert tables_studies.seeds_cell(STUDY, arm, str(folder), 0) == '0 (not run yet)'
  theirs(tree / 'jw_qa_reference', 'babi1_average_tanh', (0.42, 0.55, 0.7, 0.6))
  assert [r[1] for r in jain_wallace_qa.reference_rows(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))[1:]] == [
      '5 / 5 (attn-jax: earlier recipe, train.decay_attention)', '0 / 3']


TINY_BABI = """1 Mary moved to the bathroom.
2 John went to the hallway.
3 Where is Mary? \tbathroom\t1
4 Daniel went back to the hallway.
5 Where is Daniel? \thallway\t4
"""


def test_the_baselines_read_each_question_of_a_babi_file(tmp_path):
  path = tmp_path / 'qa1_single-supporting-fact_test.txt'
  path.write_text(TINY_BABI)
  q = known_evidence.question_arrays(str(path))
  # question 1: 'Mary moved to the bathroom . John went to the hallway' (SOS first, EOS after)
  assert q['lengths'].tolist() == [13, 20]
  assert q['evidence'][0].nonzero()[0].tolist() == [1, 2, 3, 4, 5]  # statement 1 without its '.'
  assert q['separators'][0].nonzero()[0].tolist() == [6]
  assert q['evidence'][1].nonzero()[0].tolist() == [13, 14, 15, 16, 17, 18]  # statement 4, the last
  assert q['types'][0, 4] == q['types'][0, 10]  # 'the' twice: one type
  found = known_evidence.compute_baselines(str(path), draws=500)
  # question 1: later words first puts its 5 evidence words last of 11 (ranks 7-11); the last
  # statement first puts them second, tied with the '.' (ranks 6-11 for 6 words)
  want_later_1 = sum((k + 1) / (6 + k + 1) for k in range(5)) / 5
  assert found['later_words_first'] == pytest.approx((want_later_1 + 1.0) / 2)
  assert found['last_statement_first'] == pytest.approx((5 / 11 + 1.0) / 2)
  assert found['questions'] == 2 and found['evidence_words'] == 5.5


@pytest.mark.skipif(not os.environ.get('ATTN_JAX_DATA'), reason='set ATTN_JAX_DATA to read ../shared/data')
def test_the_committed_baselines_are_those_of_the_babi_1_test_file():
  """results/jw_qa/evidence_baselines.json, which the docs quote, is what the
  code computes from the data folder's bAbI 1 test file (the Monte Carlo is seeded)."""
  recorded = json.loads(open(os.path.join(os.path.dirname(__file__), '..', '..', 'results', 'jw_qa',
                                          known_evidence.BASELINES_FILE)).read())['tasks']['babi1']
  path = known_evidence._test_file('babi1')  # pylint: disable=protected-access
  found = known_evidence.compute_baselines(path)
  assert found['sha256'] == recorded['sha256'] and found['questions'] == 1000
  for name in ('random_words', 'random_word_types', 'later_words_first', 'last_statement_first'):
    assert found[name] == pytest.approx(recorded[name], abs=1e-12), name
  assert round(found['later_words_first'], 3) == 0.567 and round(found['random_word_types'], 3) == 0.246
