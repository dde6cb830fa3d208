"""J&W's own code on the same inputs, beside attn-jax's seeds: the reader of
`results/jw_reference`, the verdicts (TOST and the test of zero), the table under the J&W grid's."""

import json

import pytest
import scipy.stats

from attn_jax.analysis import verdicts
from attn_jax.analysis import statistics
from attn_jax.tables import jain_wallace_reference, studies as report
from attn_jax.studies import STUDIES
from attn_jax.studies import __main__ as cli
from reference_trees import SPREAD, THEIRS, ours, theirs  # noqa: F401

GRID = STUDIES['jw_grid']
@pytest.fixture
def tree(tmp_path, monkeypatch):
  """results/jw_grid and results/jw_reference: J&W's sst_bilstm_tanh is
  0.8081 / 0.3512 / 0.2913 / 0.6559, sst_cnn_tanh 0.8232 / 0.477 / 0.3517 / 0.4879."""
  grid, reference = tmp_path / 'results' / 'jw_grid', tmp_path / 'results' / 'jw_reference'
  # τ(α, grad) far from J&W's, J&W's code shown equivalent and far from it too (inputs or versions);
  # τ(α, LOO) holds J&W's (—); τ(grad, LOO) far and J&W's code shown different (reimplementation differs).
  ours(grid, 'sst_bilstm_tanh', (0.81, 0.45, 0.29, 0.60))
  theirs(reference, 'sst_bilstm_tanh', (0.81, 0.45, 0.29, 0.70))
  ours(grid, 'sst_cnn_tanh', (0.82, 0.48, 0.35, 0.49))  # every statistic agrees
  theirs(reference, 'sst_cnn_tanh', (0.821, 0.479, 0.352, 0.49))
  ours(grid, 'sst_bilstm_dot', (0.82, 0.10, 0.10, 0.62))
  theirs(reference, 'sst_bilstm_dot', (0.82, 0.10, 0.10, 0.62), spread=(0.0,))  # one seed: no test
  scratch = tmp_path / 'elsewhere'
  ours(scratch, 'sst_bilstm_tanh_scratch', (0.78, 0.30, 0.20, 0.60))
  # accuracy shown different, τ(grad, LOO) 0.04 apart at a tight spread: different, inside the margin's reach;
  # no τ(α, LOO) computed
  theirs(reference, 'sst_bilstm_tanh_scratch', (0.70, 0.30, None, 0.64))
  monkeypatch.setitem(jain_wallace_reference.EXTRA_OURS, 'sst_bilstm_tanh_scratch',
                      str(scratch / 'sst_bilstm_tanh_scratch'))
  return grid, reference


def test_the_reader_gives_per_seed_values_and_their_intervals(tree):
  _, reference = tree
  assert jain_wallace_reference.arms(str(reference)) == ['sst_bilstm_dot', 'sst_bilstm_tanh', 'sst_bilstm_tanh_scratch',
                                               'sst_cnn_tanh']
  arm = jain_wallace_reference.read_arm(str(reference / 'sst_bilstm_tanh'))
  assert arm['seeds'] == [0, 1, 2] and arm['values']['accuracy'] == pytest.approx([0.802, 0.81, 0.818])
  assert arm['ci']['accuracy']['n'] == 3 and arm['ci']['f1_pos']['n'] == 0
  assert jain_wallace_reference.default_folder('results/jw_grid/') == 'results/jw_reference'
  assert jain_wallace_reference.arms(str(reference / 'nowhere')) == []


def tost(ours_mean, theirs_mean, margin, spread=THEIRS):
  """The verdict cell of the tree's two sides, from scipy's one-sided Welch tests by hand."""
  a, b = [ours_mean + d for d in SPREAD], [theirs_mean + d for d in spread]
  p_lower = scipy.stats.ttest_ind([x + margin for x in a], b, equal_var=False, alternative='greater').pvalue
  p_upper = scipy.stats.ttest_ind([x - margin for x in a], b, equal_var=False, alternative='less').pvalue
  test = verdicts.compare(a, b, margin)
  assert test['p_tost'] == pytest.approx(max(p_lower, p_upper))
  return jain_wallace_reference.verdict(test)


def test_the_table_sets_each_arm_beside_j_w_code_and_the_published_number(tree):
  grid, reference = tree
  comparisons = report.reference_comparisons(GRID, str(grid), str(reference))
  rows = report.reference_rows(comparisons)
  assert len(rows[0]) == 2 + 4 * 4 and rows[0][2:6] == [
      'accuracy: attn-jax', 'accuracy: J&W code', 'accuracy: J&W published', 'accuracy: verdict']
  # The study's order; a variant right after its configuration.
  assert [r[0] for r in rows[1:]] == ['sst_bilstm_tanh', 'sst_bilstm_tanh_scratch', 'sst_bilstm_dot', 'sst_cnn_tanh']
  bilstm, scratch, one_seed, cnn = rows[1:]
  assert bilstm[1] == '5 / 3' and bilstm[2:5] == ['0.810 ± 0.010', '0.810 ± 0.020', '0.808']
  assert bilstm[5] == tost(0.81, 0.81, 0.02) and bilstm[5].startswith('equivalent (Δ +0.000')
  assert bilstm[6:10] == ['0.450 ± 0.010', '0.450 ± 0.020', '0.351', tost(0.45, 0.45, 0.05)]
  assert bilstm[14:17] == ['0.600 ± 0.010', '0.700 ± 0.020', '0.656']
  assert bilstm[17] == tost(0.60, 0.70, 0.05) and bilstm[17].startswith('different (Δ -0.100')
  assert all(cnn[i].startswith('equivalent') for i in (5, 9, 13, 17))
  assert one_seed[1] == '5 / 1' and one_seed[3] == '0.820' and [one_seed[i] for i in (5, 9, 13, 17)] == ['–'] * 4
  # The variant is compared with J&W's published numbers of its configuration.
  assert scratch[4] == '0.808' and scratch[5].startswith('different (Δ +0.080') and scratch[11:14] == ['–', '0.291', '–']
  # 0.04 apart, 95 % interval off zero, 90 % interval not inside ± 0.05: a difference, not shown beyond the margin.
  assert scratch[17] == tost(0.60, 0.64, 0.05) and scratch[17].startswith('different (Δ -0.040')
  assert 'seeds' not in scratch[17]  # decided: nothing left for more seeds to decide


def test_the_lines_under_the_table_count_the_verdicts_and_say_where_each_gap_comes_from(tree):
  grid, reference = tree
  for k in range(len(SPREAD)):  # what attn-jax's seeds of a row share, as a trained row's configs say
    (grid / 'sst_cnn_tanh' / f'seed{k}' / 'config.json').write_text(json.dumps(
        {'seed': k, 'train': {'batch_seed': 0}, 'vectors': {'seed': 0}, 'model': {'embeddings_file': 'in_domain'}}))
  notes = report.reference_notes(report.reference_comparisons(GRID, str(grid), str(reference)))
  assert notes[0].startswith('TOST (α = 0.05) at margins 0.02 for accuracy and F1, 0.05 for each τ, and the test '
                             'of a zero difference (Welch, α = 0.05): ≡ equivalent')
  # 4 rows × 4 statistics: sst_bilstm_dot has one J&W seed (4 untested), the scratch row no τ(α, LOO) (1).
  assert notes[1] == ('cells (row × statistic): 11 tested: 8 equivalent, 0 equivalent with a difference smaller than '
                      'the margin, 3 different, 0 inconclusive; with Holm\'s correction across the 11: 6 equivalent, 0 '
                      'equivalent with a difference smaller than the margin, 3 different, 2 inconclusive; rows with '
                      'all four statistics shown equivalent (≡ or ≡Δ): 1 of 4 (sst_cnn_tanh)')
  assert notes[2].startswith('gap to J&W\'s published value: "—" inside')
  # τ(α, grad) of both bilstm rows: 0.45 against 0.351, J&W's code 0.45 ± 0.02 (one run reaches 0.45 ± ~0.04):
  # attributed; τ(grad, LOO): the implementations differ: not attributable.
  assert notes[3] == ("τ gaps to J&W's published values (attn-jax's interval misses the value): 4; attributed to the "
                      "inputs or library versions (not the reimplementation, not one run's luck): 2; not attributable "
                      'by these tests: 2 (0 not the reimplementation but within one run of J&W\'s code, 2 where the '
                      'reimplementation differs, 0 undecided)')
  assert notes[4].startswith("J&W code's intervals: seed k seeds") and 'own initial weights and batch order' in notes[4]
  assert notes[5] == "attn-jax's intervals over model seeds 0–4; one batch order; one set of vectors (sst_cnn_tanh)"
  assert notes[6:] == [
      'sst_bilstm_tanh: τ(α, grad) inputs or versions, τ(α, LOO) —, τ(grad, LOO) reimplementation differs',
      # From outside the grid's root (EXTRA_OURS): the row says where.
      "sst_bilstm_tanh_scratch: τ(α, grad) inputs or versions, τ(α, LOO) n/a, τ(grad, LOO) reimplementation differs; "
      "attn-jax's side from ../elsewhere/sst_bilstm_tanh_scratch/, not this root",
      'sst_bilstm_dot: τ(α, grad) n/a, τ(α, LOO) n/a, τ(grad, LOO) n/a',
      'sst_cnn_tanh: τ(α, grad) —, τ(α, LOO) —, τ(grad, LOO) —']


def test_a_row_says_what_its_tau_were_computed_over_when_not_the_whole_split(tree):
  grid, reference = tree
  for k in range(len(THEIRS)):  # J&W's code given attn-jax's sample of 10 documents
    path = reference / 'sst_cnn_tanh' / f'seed{k}' / 'summary.json'
    path.write_text(json.dumps({**json.loads(path.read_text()), 'documents': 10,
                                'test_sample': {'docs': 10, 'seed': 0}}))
  path = reference / 'sst_bilstm_tanh' / 'seed0' / 'summary.json'  # one seed over other documents
  path.write_text(json.dumps({**json.loads(path.read_text()), 'documents': 12}))
  notes = report.reference_notes(report.reference_comparisons(GRID, str(grid), str(reference)))
  assert notes[-1] == ('sst_cnn_tanh: τ(α, grad) —, τ(α, LOO) —, τ(grad, LOO) —; τ over 10 test documents '
                       "(attn-jax), 10 (J&W's code); a sample of 10 drawn with seed 0 (`analysis.sample_docs`; "
                       'the same documents on both sides)')
  assert notes[5] == ('sst_bilstm_tanh: τ(α, grad) inputs or versions, τ(α, LOO) —, τ(grad, LOO) reimplementation '
                      "differs; τ over 10 test documents (attn-jax), 12 (J&W's code)")


def test_the_grid_report_prints_the_table_after_its_own_and_rewrites_the_block_where_it_stands(tree, capsys):
  grid, reference = tree
  page, readme = grid.parent.parent / 'page.md', grid.parent.parent / 'README.md'
  readme.write_text('<!-- jw_grid-table:start -->\n<!-- jw_grid-table:end -->\n')
  page.write_text(readme.read_text() + '\n<!-- jw_reference-table:start -->\n<!-- jw_reference-table:end -->\n')
  cli.main(['report', 'jw_grid', f'--root={grid}', f'--readme={page}', f'--readme={readme}'])
  out = capsys.readouterr().out
  assert out.index('seeds (ours / J&W code)') > out.index('test docs analysed')  # after the grid's table
  assert 'rows with all four statistics shown equivalent (≡ or ≡Δ): 1 of 4 (sst_cnn_tanh)' in out
  text = page.read_text()
  assert '| sst_cnn_tanh | 5 / 3 | 0.820 ± 0.010 | 0.821 ± 0.020 | 0.823 | equivalent (Δ -0.001' in text
  # The line names every file the command wrote to: it remakes them all as written.
  assert ('generated by `python -m attn_jax.studies report jw_grid --root=results/jw_grid --readme page.md '
          '--readme README.md`' in text) and '`results/jw_reference/<arm>/<seed>/summary.json`' in text
  assert 'jw_reference' not in readme.read_text()  # README.md carries only the grid's table
  # Another reference folder is named in the command that remakes the block.
  other = grid.parent.parent / 'other_reference'
  reference.rename(other)
  report.write(GRID, str(grid), readme=str(page), reference=str(other))
  assert '--reference=other_reference --readme page.md`' in page.read_text()


def test_without_a_reference_the_report_prints_nothing_more(tree, capsys):
  grid, reference = tree
  for arm in reference.iterdir():
    for seed in arm.iterdir():
      (seed / 'summary.json').unlink()  # folders of models still training
  rows = report.write(GRID, str(grid))
  assert len(rows) == 1 + len(GRID.arms)
  assert 'J&W code' not in capsys.readouterr().out
  assert report.reference_table(GRID, str(grid), str(grid.parent / 'nowhere')) is None


def test_another_grid_root_writes_a_block_of_its_own(tree):
  grid, reference = tree
  fixed = grid.parent / 'jw_grid_fixed'
  grid.rename(fixed)
  page = grid.parent.parent / 'page.md'
  page.write_text('<!-- jw_reference-table:start -->\nold\n<!-- jw_reference-table:end -->\n'
                  '<!-- jw_reference-table-jw_grid_fixed:start -->\n<!-- jw_reference-table-jw_grid_fixed:end -->\n')
  assert report.reference_block(str(grid)) == 'jw_reference-table'
  assert report.reference_block(str(fixed) + '/') == 'jw_reference-table-jw_grid_fixed'
  report.reference_table(GRID, str(fixed), str(reference), str(page))
  text = page.read_text()
  assert 'old' in text  # the other root's block is left alone
  assert text.index('| sst_cnn_tanh | 5 / 3 |') > text.index('jw_reference-table-jw_grid_fixed:start')


def test_a_variant_held_by_the_grid_root_is_compared_before_the_extra_folder(tree):
  grid, reference = tree
  ours(grid, 'sst_bilstm_tanh_scratch', (0.70, 0.30, 0.30, 0.60))  # beside the grid's arms
  comparisons = dict((arm, c) for arm, c, _ in report.reference_comparisons(GRID, str(grid), str(reference)))
  assert comparisons['sst_bilstm_tanh_scratch']['ours']['ci']['accuracy']['mean'] == pytest.approx(0.70)
  assert jain_wallace_reference.ours_dir(str(grid), 'sst_bilstm_tanh_scratch') == str(grid / 'sst_bilstm_tanh_scratch')


def test_the_readme_table_sets_each_row_beside_published_and_jws_code_and_counts_in_sentences(tree, tmp_path):
  from attn_jax.tables import jain_wallace_summary as summary
  grid, reference = tree
  rows, counts = summary.rows_and_counts(GRID, str(grid), str(reference))
  assert rows[0] == ['configuration', 'seeds (attn-jax / J&W code)', 'accuracy', 'τ(α, grad)', 'τ(α, LOO)',
                     'τ(grad, LOO)']
  assert [r[0] for r in rows[1:]] == [a.name for a in GRID.arms]  # every row of the grid; variants left out
  by_name = {r[0]: r for r in rows[1:]}
  bilstm, one_seed, cnn = by_name['sst_bilstm_tanh'], by_name['sst_bilstm_dot'], by_name['sst_cnn_tanh']
  assert bilstm[1] == '5 / 3'
  assert bilstm[2] == '0.810 ± 0.010 [0.808 ✓] · code 0.810 ± 0.020 ≡'
  assert bilstm[3] == '0.450 ± 0.010 [0.351 ✗] · code 0.450 ± 0.020 ≡'
  assert bilstm[5] == '0.600 ± 0.010 [0.656 ✗] · code 0.700 ± 0.020 ≠'
  assert one_seed[2] == '0.820 ± 0.010 [0.823 ✓] · code 0.820'  # one J&W seed: no interval, no verdict
  assert by_name['imdb_cnn_tanh'][1:] == ['0 / 0', '– [0.901]', '– [0.452]', '– [0.295]', '– [0.513]']
  # By hand: J&W's τ (0.351, 0.291, 0.656) against our means 0.45 / 0.29 / 0.60 (0.099 off: out of reach),
  # J&W's code's 0.45 / 0.29 / 0.70 (out); sst_cnn_tanh's (0.477, 0.352, 0.488) against 0.48 / 0.35 / 0.49 and
  # 0.479 / 0.352 / 0.49 (both within 0.08); sst_bilstm_dot's (0.073, 0.064, 0.708) against 0.10 / 0.10 / 0.62
  # (0.088 off: out) on both sides.
  assert counts['reach'] == {'ours': [('sst_bilstm_tanh', False), ('sst_bilstm_dot', False), ('sst_cnn_tanh', True)],
                             'code': [('sst_bilstm_tanh', False), ('sst_bilstm_dot', False), ('sst_cnn_tanh', True)]}
  lines = summary.notes(counts)
  assert lines[0] == ("Within reach of J&W's published τ (all three means within 0.08; J&W's own two runs of their "
                      "code differ by up to 0.068 in a class's mean τ): attn-jax 1 of 3 rows (sst_cnn_tanh); J&W's "
                      "own code on the same inputs 1 of 3 rows (sst_cnn_tanh).")
  # The same rows over tolerances: sst_bilstm_tanh (0.099 off) and sst_bilstm_dot (0.088) come in at 0.10.
  assert lines[1] == ("On the 3 rows both implementations have, rows within reach at each tolerance (attn-jax / "
                      "J&W's code): 0.04: 1 / 1, 0.06: 1 / 1, 0.08: 1 / 1, 0.10: 3 / 3, 0.12: 3 / 3.")
  # Rows with both sides tested in all four statistics: sst_bilstm_tanh (3 equivalent, 1 different), sst_cnn_tanh (4).
  assert lines[2] == ("Against J&W's own code on the same inputs, row × statistic cells: 8 tested: 7 equivalent, 0 "
                      'equivalent with a difference smaller than the margin, 1 different, 0 inconclusive; with Holm\'s '
                      'correction across the 8: 7 equivalent, 0 equivalent with a difference smaller than the margin, '
                      '1 different, 0 inconclusive; all four statistics shown equivalent (≡ or ≡Δ) in 1 of 2 rows '
                      '(sst_cnn_tanh).')
  doc = tmp_path / 'README.md'
  (tmp_path / 'setup.cfg').write_text('')
  doc.write_text('<!-- jw_grid-summary:start -->\n<!-- jw_grid-summary:end -->\n')
  summary.write(GRID, str(grid), str(reference), [str(doc)])
  text = doc.read_text()
  assert 'report jw_grid --root=results/jw_grid --readme README.md`' in text and '| sst_cnn_tanh | 5 / 3 |' in text
  assert summary.block_name('results/jw_grid_lstm2') == 'jw_grid-summary-jw_grid_lstm2'


def test_a_gap_is_attributed_only_where_one_run_of_jws_code_misses_the_published_value_too():
  ours_ci = statistics.t_interval([0.45 + d for d in SPREAD])
  close = verdicts.compare([0.45 + d for d in SPREAD], [0.45 + d for d in THEIRS], 0.05)
  assert close['verdict'] == 'equivalent'
  # J&W's code tight around 0.45: one of its runs does not reach 0.351.
  assert jain_wallace_reference.gap_source(ours_ci, 0.351, close, [0.45 + d for d in THEIRS]) == 'inputs or versions'
  # J&W's code spread wide: a run of it reaches 0.351, so J&W's one published run may be that run's luck.
  wide = [0.45 - 0.09, 0.45, 0.45 + 0.09]
  test = verdicts.compare([0.45 + d for d in SPREAD], wide, 0.2)
  assert test['equivalent']
  assert jain_wallace_reference.gap_source(ours_ci, 0.351, test, wide) == 'not the reimplementation'
  # Inside attn-jax's interval: no gap; an inconclusive comparison: undecided.
  assert jain_wallace_reference.gap_source(ours_ci, 0.45, close, THEIRS) == '—'
  loose = verdicts.compare([0.45 + d for d in SPREAD], wide, 0.05)
  assert loose['verdict'] == 'inconclusive'
  assert jain_wallace_reference.gap_source(ours_ci, 0.351, loose, wide) == 'undecided'


def test_saving_a_study_over_another_models_records_is_refused_before_anything_is_copied(tree, tmp_path):
  grid, _ = tree
  target = tmp_path / 'saved'
  config = {'seed': 0, 'model': {'encoder': 'bilstm'}, 'train': {'learning_rate': 0.001}}
  for arm in ('sst_bilstm_tanh', 'sst_cnn_tanh'):
    for k in range(len(SPREAD)):
      (grid / arm / f'seed{k}' / 'config.json').write_text(json.dumps({**config, 'seed': k}))
  report.save(GRID, str(grid), str(target))
  saved = json.loads((target / 'sst_cnn_tanh' / 'seed0' / 'eval.json').read_text())
  # Another model now stands in the grid's sst_cnn_tanh/seed4: saving again would replace its saved twin.
  (grid / 'sst_cnn_tanh' / 'seed4' / 'config.json').write_text(json.dumps({**config, 'seed': 4,
                                                                           'train': {'learning_rate': 0.01}}))
  (grid / 'sst_cnn_tanh' / 'seed0' / 'eval.json').write_text(json.dumps({'accuracy': 0.5}))
  with pytest.raises(report.errors.ConfigError, match='holds the saved records of another model'):
    report.save(GRID, str(grid), str(target))
  assert json.loads((target / 'sst_cnn_tanh' / 'seed0' / 'eval.json').read_text()) == saved  # nothing copied
  assert json.loads((target / 'sst_cnn_tanh' / 'seed4' / 'config.json').read_text())['train']['learning_rate'] == 0.001


def test_damaged_results_are_named_under_the_table_not_dropped_silently(tree, capsys):
  grid, reference = tree
  kendall = next((grid / 'sst_cnn_tanh' / 'seed1' / 'analyses' / 'kendall').iterdir()) / 'summary.json'
  kendall.write_text('{}')  # a summary that is not one (it records no key)
  (grid / 'sst_cnn_tanh' / 'seed2' / 'eval.json').write_text('{}')
  lines = report.damaged(GRID, str(grid))
  assert lines == [
      f'damaged, not counted: sst_cnn_tanh/seed1, kendall: {kendall} is not a stage summary (it records no key): '
      'rerun the stage, or restore the file',
      'damaged, not counted: sst_cnn_tanh/seed2/eval.json (no test accuracy): restore it or rerun the model']
  assert report.totals(GRID, str(grid))[:2] == lines
  cli.main(['report', 'jw_grid', f'--root={grid}'])
  assert 'damaged, not counted: sst_cnn_tanh/seed1, kendall' in capsys.readouterr().out
