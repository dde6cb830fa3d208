"""The J&W QA study: its 18 bAbI arms, its table beside J&W's published
values, the known-evidence table and figure, and J&W's code beside it with the
equivalence test."""

import json

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
  assert row[header.index('chance')].startswith('0.210')
  assert row[-1] == 'leave-one-out (yes)'  # 0.70 vs α's 0.62: intervals of ± ~0.004 apart
  assert known_evidence.headline([('babi1_bilstm_tanh', 'bilstm', arms[0][1])]) == [
      'bilstm: the highest mean evidence AP on 1 of 1 rows: leave-one-out']
  paths = known_evidence.study_figure(arms, str(tree / 'figure' / 'evidence_ap'))
  assert [p.rsplit('.', 1)[1] for p in paths] == ['png', 'svg']


def test_the_evidence_headline_names_a_tie_in_one_order(monkeypatch):
  best = {'a': 'leave-one-out (no)', 'b': 'Meister g(x) (no)', 'c': 'leave-one-out (yes)', 'd': '–'}
  monkeypatch.setattr(known_evidence, 'arm_intervals', lambda folder: folder)
  monkeypatch.setattr(known_evidence, 'best_cell', lambda cis: best[cis])
  tie = [('r1', 'bilstm', 'a'), ('r2', 'bilstm', 'b'), ('r3', 'bilstm', 'd')]  # a row not run yet is no vote
  assert known_evidence.headline(tie) == [  # the measures' order, not the rows': the same line on every run
      'bilstm: the highest mean evidence AP on 1 of 2 rows: Meister g(x) and leave-one-out (tied: each on as many rows)']
  most = [('r1', 'cnn', 'b'), ('r2', 'cnn', 'a'), ('r3', 'cnn', 'c')]
  assert known_evidence.headline(most) == [
      'cnn: the highest mean evidence AP on 2 of 3 rows: leave-one-out (others: Meister g(x))']


def test_jws_code_beside_with_the_equivalence_test(tree, capsys):
  rows = jain_wallace_qa.reference_rows(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  header, row = rows[0], rows[1]
  assert row[:2] == ['babi1_bilstm_tanh', '5 / 5']
  assert row[header.index('τ(α, grad): TOST')].startswith('equivalent (Δ -0.010')
  assert row[header.index('τ(α, LOO): TOST')].startswith('different (Δ -0.140')
  assert row[header.index('accuracy: TOST')].startswith('equivalent')


def test_the_reference_table_counts_its_verdicts_as_the_grids_does(tree):
  # babi1_average_tanh: one seed of J&W's code, so no cell of it is tested
  ours(tree / 'jw_qa', 'babi1_average_tanh', (0.42, 0.7, 0.7, 0.6))
  theirs(tree / 'jw_qa_reference', 'babi1_average_tanh', (0.42, 0.7, 0.7, 0.6), spread=(0.0,))
  compared = jain_wallace_qa.compare_with_code(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  assert [c[0].name for c in compared] == ['babi1_bilstm_tanh', 'babi1_average_tanh']
  line, = jain_wallace_qa.reference_counts(compared)
  # babi1_bilstm_tanh (JW_CODE): τ(α, LOO) 0.14 apart, shown different; the other three shown equivalent
  assert line == ('4 row × statistic cells tested: 3 shown equivalent, 1 shown different, 0 inconclusive; '
                  'all four statistics shown equivalent in 0 of 1 rows')
  assert jain_wallace_qa.reference_rows(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'), compared) == \
      jain_wallace_qa.reference_rows(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  assert jain_wallace_qa.reference_counts([]) == []


def test_a_row_whose_four_statistics_are_shown_equivalent_is_named(tree):
  ours(tree / 'jw_qa', 'babi1_bilstm_dot', ROW)
  theirs(tree / 'jw_qa_reference', 'babi1_bilstm_dot', ROW, spread=(-0.004, 0.0, 0.004, -0.002, 0.002))
  compared = jain_wallace_qa.compare_with_code(STUDY, str(tree / 'jw_qa'), str(tree / 'jw_qa_reference'))
  line, = jain_wallace_qa.reference_counts(compared)
  # babi1_bilstm_tanh: τ(α, LOO) different, the rest equivalent (JW_CODE); babi1_bilstm_dot: all four
  assert line.startswith('8 row × statistic cells tested: 7 shown equivalent, 1 shown different, 0 inconclusive')
  assert line.endswith('all four statistics shown equivalent in 1 of 2 rows (babi1_bilstm_dot)')


def test_report_writes_the_three_blocks(tree, tmp_path, capsys):
  readme = tmp_path / 'page.md'
  readme.write_text('\n'.join(f'<!-- {b}:start -->\n<!-- {b}:end -->' for b in
                              ('jw_qa-table', 'jw_qa-evidence', 'jw_qa-reference')) + '\n')
  jain_wallace_qa._tabulate(STUDY, str(tree / 'jw_qa'), None, [str(readme)], None)  # pylint: disable=protected-access
  text = readme.read_text()
  assert '| babi1_bilstm_tanh | 5 |' in text and 'leave-one-out (yes)' in text and 'different (Δ' in text
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
