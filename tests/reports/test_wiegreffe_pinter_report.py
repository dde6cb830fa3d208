"""The W&P report: tables and verdicts from hand-made experiment summaries,
the figures, and the README blocks `report wp --readme` rewrites."""

import json
import os

import numpy as np
import pytest

from attn_jax.core import digests
from attn_jax.tables import report_command_line as report, wiegreffe_pinter as wp_report
from attn_jax.tables.report_registry import blocks
from attn_jax.plots import wiegreffe_pinter_figures
from attn_jax.stages.stage_store import SELF_HASH


def uniform_summary(learned=0.83, uniform=0.82):
  return {'experiment': 'uniform', 'dataset': 'sst', 'split': 'test', 'n': 1725,
          'key': {'hash': 'aaaabbbbccccdddd'}, 'seconds': 300.0, 'training_seconds': 250.0,
          'learned': {'accuracy': 0.82, 'f1_pos': learned, 'roc_auc': 0.9, 'projection': 'softmax'},
          'uniform': {'accuracy': 0.81, 'f1_pos': uniform, 'roc_auc': 0.89, 'selected_epoch': 3},
          'f1_difference': learned - uniform}


def guides_summary(base=0.82, adversary=0.60):
  rows = [{'guide': g, 'f1_pos': f, 'accuracy': f, 'roc_auc': 0.9, 'selected_epoch': 1}
          for g, f in (('adversary', adversary), ('base', base), ('uniform', 0.81), ('trained_mlp', 0.815))]
  return {'experiment': 'guides', 'dataset': 'sst', 'split': 'test', 'n': 1725, 'key': {'hash': 'g' * 16},
          'seconds': 200.0, 'training_seconds': 180.0, 'rows': rows, 'adversary_lambda': 0.01,
          'adversary_choice': 'largest JSD with F1 within 0.05 of base', 'encoder': 'average'}


def adversary_summary(jsd=(0.01, 0.1, 0.3), failed_lambda=None):
  lambdas = [1e-3, 1e-2, 1e-1]
  rows = [{'lambda': l, 'f1_pos': 0.8, 'accuracy': 0.8, 'mean_tvd': 0.01 * (i + 1), 'mean_abs_dp': 0.02 * (i + 1),
           'mean_jsd': j, 'train_mean_tvd': 0.01, 'train_mean_jsd': j, 'selected_epoch': i,
           'epochs_trained': 20, 'train_loss': -1.0} for i, (l, j) in enumerate(zip(lambdas, jsd))]
  if failed_lambda is not None:
    rows.append({'lambda': failed_lambda, 'failed': '{"epoch": 3}'})
  return {'experiment': 'consistent_adversary', 'dataset': 'sst', 'split': 'test', 'n': 1725,
          'key': {'hash': 'c' * 16}, 'seconds': 500.0, 'training_seconds': 450.0, 'lambdas': lambdas,
          'rows': rows, 'base': {'f1_pos': 0.83, 'accuracy': 0.82},
          'jw_adversary': {'mean_tvd': 0.02, 'mean_jsd': 0.45, 'n': 100}}


def seeds_summary(median=0.02, adversary=0.47):
  return {'experiment': 'seeds', 'dataset': 'sst', 'split': 'test', 'n': 1725, 'key': {'hash': 's' * 16},
          'seconds': 1000.0, 'training_seconds': 900.0, 'base_seed': 10, 'seeds': [50, 257, 2],
          'median_jsd': {'median': median, 'mean': median, 'q10': 0.001, 'q90': 0.08, 'fraction_below_0.1': 0.93},
          'y_diff': {'mean': 0.03, 'median': 0.02},
          'jw_adversary': {'n': 100, 'mean_max_jsd': adversary, 'median_max_jsd': adversary} if adversary else None,
          'cells': [], 'seed_models': {'f1_pos': {'mean': 0.82, 'std': 0.01, 'values': [0.81, 0.82, 0.83]},
                                       'accuracy': {'mean': 0.82, 'std': 0.01, 'values': [0.81, 0.82, 0.83]}}}


def all_summaries():
  return {'uniform': uniform_summary(), 'seeds': seeds_summary(),
          'consistent_adversary': adversary_summary(), 'guides': guides_summary()}


def test_table2_sets_uniform_beside_learned_and_wp():
  runs = [('a', 'sst', {'uniform': uniform_summary(0.83, 0.82)}),
          ('b', 'sst', {'uniform': uniform_summary(0.83, 0.75)}),
          ('c', 'imdb', {'uniform': uniform_summary(0.90, 0.87)}),
          ('d', 'synthetic', {'uniform': uniform_summary(0.9, 0.9)}), ('e', 'sst', {})]
  rows = wp_report.table2_rows(runs)
  assert len(rows) == 5  # header + a..d; e has no uniform results
  assert rows[1][:5] == ['sst', 'a', '0.830 (0.831)', '0.820 (0.822)', '+0.010 (+0.009)']
  assert rows[1][5].startswith('as W&P: uniform within 0.02 of learned')
  assert rows[2][5].startswith('MISSED: uniform 0.080 below learned')
  # W&P's own IMDb gap (0.023) is over 0.02: a gap over 0.02 agrees with them.
  assert rows[3][5].startswith('as W&P: uniform 0.030 below learned')
  assert rows[4][2] == '0.900 (–)' and rows[4][5].endswith('(no W&P number)')
  assert rows[1][6] == '1725 test docs, key aaaabbbb'


def test_table3_adversary_guide_far_below_base_guide():
  rows = wp_report.table3_rows([('a', 'sst', {'guides': guides_summary(0.82, 0.60)}),
                                ('b', 'imdb', {'guides': guides_summary(0.90, 0.85)})])
  assert [r[2].split(' (')[0] for r in rows[1:5]] == ['UNIFORM', 'Trained MLP', 'Base LSTM', 'ADVERSARY']
  assert rows[3][3] == '0.820 (0.824)' and rows[1][3] == '0.810 (0.812)'
  assert 'λ = 0.01' in rows[4][2]
  assert rows[4][6].startswith('as W&P: adversary guide 0.220 below base guide')
  assert 'W&P 0.232 below' in rows[4][6]
  assert rows[8][6].startswith('MISSED: adversary guide only +0.050 below')
  assert all(r[6] == '' for r in rows[1:8] if 'ADVERSARY' not in r[2])


@pytest.mark.parametrize('jsd, verdict', [
    ((0.01, 0.1, 0.3), 'as W&P: JSD grows with λ, monotonically'),
    ((0.01, 0.2, 0.1), 'as W&P: JSD grows with λ, not monotonically: it falls at λ = 0.1'),
    ((0.3, 0.2, 0.1), 'MISSED: JSD does not grow with λ'),
])
def test_lambda_sweep_verdict(jsd, verdict):
  assert wp_report.sweep_verdict(adversary_summary(jsd)).startswith(verdict)


def test_lambda_sweep_rows_with_reference_rows_and_a_diverged_adversary():
  summary = adversary_summary(failed_lambda=1.0)
  rows = wp_report.sweep_rows([('a', 'sst', {'consistent_adversary': summary})])
  assert [r[2] for r in rows[1:]] == ['base model', '0.001', '0.01', '0.1', '1',
                                      'J&W adversary (100 docs)']
  assert rows[3][3:9] == ['0.800', '0.020', '0.040', '0.100', '2', '20']  # selected epoch 1-based
  assert rows[5][3] == 'diverged (non-finite loss)'
  assert rows[6][4] == '0.020' and rows[6][6] == '0.450'
  assert wp_report.sweep_verdict(summary).endswith('(JSD 0.010 at λ = 0.001 → 0.300 at λ = 0.1)')


def test_seed_rows_set_seed_jsd_against_the_jw_adversary():
  rows = wp_report.seed_rows([('a', 'sst', {'seeds': seeds_summary(0.02, 0.47)}),
                              ('b', 'sst', {'seeds': seeds_summary(0.2, 0.47)}),
                              ('c', 'sst', {'seeds': seeds_summary(0.02, 0.15)}),
                              ('d', 'sst', {'seeds': seeds_summary(0.02, None)})])
  assert rows[1][3] == '0.020 (0.001–0.080)' and rows[1][6] == '0.820 ± 0.010'
  assert rows[1][7] == '0.470 on 100 docs (≈0.48 / ≈0.49)'
  assert rows[1][8] == 'as W&P: seed JSD near 0 (median 0.020 ≤ 0.1), J&W adversary 0.470 ≈ 0.48'
  assert rows[2][8].startswith('MISSED: seed JSD NOT near 0')
  assert rows[3][8].startswith('MISSED:') and 'J&W adversary 0.150 NOT ≈ 0.48' in rows[3][8]
  assert rows[4][8].endswith('no J&W adversary to compare') and rows[4][7] == '– (≈0.48 / ≈0.49)'


def test_wall_time_shares_sum_to_the_suite():
  rows = wp_report.wall_time_rows([('a', 'sst', all_summaries())])
  by_experiment = {r[1]: r for r in rows[1:]}
  assert by_experiment['seeds'][2:5] == ['16.7', '15.0', '50%']
  assert by_experiment['uniform'][4] == '15%'
  assert by_experiment['all'][2:5] == ['33.3', '29.7', '100%']


def test_figures_are_written_as_png_and_svg_deterministically(tmp_path):
  rng = np.random.default_rng(0)
  n = 60
  adversary = rng.uniform(0.3, 0.6, n)
  adversary[::3] = np.nan
  arrays = {'median_jsd': rng.uniform(0, 0.1, n), 'max_attention': rng.uniform(0, 1, n),
            'predicted': rng.integers(0, 2, n), 'adversary_max_jsd': adversary}
  written = (wiegreffe_pinter_figures.seed_violins(arrays, str(tmp_path))
             + wiegreffe_pinter_figures.tradeoff_curve(adversary_summary(failed_lambda=1.0), str(tmp_path))
             + wiegreffe_pinter_figures.guide_bars(guides_summary(), str(tmp_path))
             + wiegreffe_pinter_figures.uniform_bars(uniform_summary(), str(tmp_path)))
  assert sorted(os.path.basename(p) for p in written) == sorted(
      f'{stem}.{ext}' for stem in ('seed_jsd_violins', 'consistent_adversary_tradeoff', 'guide_f1_bars',
                                   'uniform_vs_learned_bars') for ext in ('png', 'svg'))
  for path in written:
    with open(path, 'rb') as f:
      head = f.read(8)
    assert head == b'\x89PNG\r\n\x1a\n' if path.endswith('.png') else b'<?xml' in head
  before = [open(p, 'rb').read() for p in written[:2]]
  wiegreffe_pinter_figures.seed_violins(arrays, str(tmp_path))
  assert [open(p, 'rb').read() for p in written[:2]] == before  # same figure, same bytes
  # Nothing analysed by J&W's adversary: its panel is left out.
  wiegreffe_pinter_figures.seed_violins({**arrays, 'adversary_max_jsd': np.full(n, np.nan)}, str(tmp_path))
  assert open(written[0], 'rb').read() != before[0]


def fake_run(root, summaries: dict) -> str:
  """A run folder as `run.py` leaves it: eval.json, config.json and each
  experiment's sealed results folder plus its pointer copy."""
  run = root / 'sst_bilstm'
  run.mkdir()
  (run / 'eval.json').write_text(json.dumps({'accuracy': 0.82, 'f1_pos': 0.83, 'roc_auc': 0.9, 'n': 1725}))
  (run / 'config.json').write_text(json.dumps({'seed': 10, 'data': {'dataset': 'sst'}, 'model': {
      'encoder': 'bilstm', 'attention': 'tanh', 'projection': 'softmax'}}))
  for name, summary in summaries.items():
    folder = run / 'experiments' / name / summary['key']['hash']
    folder.mkdir(parents=True)
    (folder / 'results.npz').write_bytes(b'arrays')
    (folder / 'figure.png').write_bytes(b'png')
    record = {**summary, 'figures': [f'experiments/{name}/{folder.name}/figure.png'],
              'sha256': digests.of_files(str(folder), ['results.npz', 'figure.png'])}
    (folder / 'summary.json').write_text(json.dumps(digests.sealed(record, SELF_HASH)))
    (folder.parent / 'summary.json').write_text(json.dumps({**summary, 'folder': os.path.relpath(folder, run)}))
  return str(run)


README = ''.join(f'<!-- {b}:start -->\nold\n<!-- {b}:end -->\n' for b in blocks('wp'))


def test_report_wp_saves_summaries_and_rewrites_the_readme_blocks(tmp_path, capsys):
  run = fake_run(tmp_path, all_summaries())
  readme = tmp_path / 'README.md'
  readme.write_text('intro\n' + README + 'rest\n')
  report.main(['wp', run, '--save', str(tmp_path / 'results' / 'wp'), '--readme', str(readme)])
  printed = capsys.readouterr().out
  assert 'as W&P: uniform within 0.02 of learned' in printed
  saved = tmp_path / 'results' / 'wp' / 'sst_bilstm'
  copy = json.loads((saved / 'experiments' / 'seeds' / 'summary.json').read_text())
  assert 'sha256' not in copy and copy['figures'] == ['experiments/seeds/figure.png']
  assert (saved / 'experiments' / 'seeds' / 'figure.png').read_bytes() == b'png'
  text = readme.read_text()
  assert 'old' not in text and text.startswith('intro\n') and text.endswith('rest\n')
  assert 'python -m attn_jax.report wp results/wp/sst_bilstm --readme README.md' in text
  assert '| sst | sst_bilstm | 0.830 (0.831) | 0.820 (0.822) |' in text
  assert '- sst_bilstm (sst): as W&P: JSD grows with λ, monotonically' in text
  assert text.count('`results/wp/sst_bilstm/experiments/*/summary.json`') == len(blocks('wp'))
  # The saved copy reads back alone (results/ is what the README shows).
  assert wp_report.load(str(saved))[2].keys() == all_summaries().keys()


def test_damaged_results_are_not_shown_from_their_pointer_copy(tmp_path):
  run = fake_run(tmp_path, {'uniform': uniform_summary()})
  folder = os.path.join(run, 'experiments', 'uniform', 'aaaabbbbccccdddd')
  with open(os.path.join(folder, 'results.npz'), 'wb') as f:
    f.write(b'changed')
  assert wp_report.load(run) == ('sst_bilstm', 'sst', {})


def test_report_wp_names_a_missing_readme_marker_and_writes_nothing(tmp_path, capsys):
  run = fake_run(tmp_path, all_summaries())
  readme = tmp_path / 'README.md'
  text = README.replace('<!-- wp-seeds:end -->\n', '')
  readme.write_text(text)
  with pytest.raises(SystemExit) as raised:
    report.main(['wp', run, '--readme', str(readme)])
  assert raised.value.code == 1
  err = capsys.readouterr().err
  assert "no '<!-- wp-seeds:end -->' marker" in err and 'add the lines' in err
  assert readme.read_text() == text


def test_adversary_guide_rows_say_where_the_adversarys_attention_sits():
  guides = guides_summary(0.82, 0.33)
  focus = lambda m, shared, same, words: {'mean_max_alpha': m, 'mean_shared_mass': shared,  # noqa: E731
                                          'same_argmax_share': same, 'argmax_last_word_share': 0.1,
                                          'argmax_words': words}
  by_guide = {r['guide']: r for r in guides['rows']}
  by_guide['base']['attention_focus'] = focus(0.35, 1.0, 1.0, [['good', 0.05], ['bad', 0.04]])
  by_guide['adversary']['attention_focus'] = focus(0.97, 0.02, 0.01, [['.', 0.6], ['the', 0.1]])
  rows = wp_report.adversary_guide_rows([('wp_sst', 'sst', {'guides': guides,
                                                            'consistent_adversary': adversary_summary()})])
  header, row = rows
  cells = dict(zip(header, row))
  assert cells['max α (base)'] == '0.97 (0.35)' and cells['mass shared with base'] == '0.02'
  assert cells['same top word as base'] == '1%'
  assert cells['top words (share of documents)'] == '. 60%, the 10% (base: good 5%, bad 4%)'
  del by_guide['adversary']['attention_focus']  # a summary from before it was recorded
  row = wp_report.adversary_guide_rows([('wp_sst', 'sst', {'guides': guides})])[1]
  assert dict(zip(header, row))['max α (base)'] == '–'
