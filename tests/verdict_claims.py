"""The verdict sentences of README.md and docs/*.md that a test checks against
the committed result files (`tests/reports/test_verdict_words.py`): fragment ->
check(sentence). Each check reads results/, recomputes the verdict with
`attn_jax.analysis.verdicts.compare` (or the report function that prints it),
and asserts the verdict and the numbers the sentence states."""

import glob
import re
import json
import os

from attn_jax.analysis import verdicts
import helpers

ROOT = helpers.ROOT

def _values(pattern: str, key: str) -> list[float]:
  files = sorted(glob.glob(os.path.join(ROOT, pattern)))
  assert files, f'no result files {pattern}'
  return [json.load(open(f, encoding='utf-8'))[key] for f in files]


def _num(x: float) -> str:
  """+0.036 / −0.012 as the prose prints them (a rounded zero is +0.000)."""
  text = f'{x:+.3f}'
  return '+0.000' if text == '-0.000' else text.replace('-', '−')


def _interval(r: dict) -> str:
  return f"{_num(r['difference'])} [{_num(r['low95'])}, {_num(r['high95'])}]"


def _compare(a_pattern, b_pattern, key, margin):
  return verdicts.compare(_values(a_pattern, key), _values(b_pattern, key), margin)


def _wp_table2(dataset):
  return _compare(f'results/wp_table2/{dataset}_learned/seed*/eval.json',
                  f'results/wp_table2/{dataset}_uniform/seed*/eval.json', 'f1_pos', verdicts.MARGINS['f1'])


def check_readme_wp_imdb(sentence):
  """README: 20 Newsgroups learned − uniform inconclusive, IMDB different, with their intervals."""
  news, imdb = _wp_table2('20news'), _wp_table2('imdb')
  assert news['verdict'] == verdicts.INCONCLUSIVE and 'inconclusive' in sentence
  assert f'learned − uniform {_interval(news)}' in sentence, (_interval(news), sentence)
  assert imdb['verdict'] == verdicts.DIFFERENT
  assert f'IMDB: {_interval(imdb)}, different' in sentence, (_interval(imdb), sentence)


def check_readme_wp_sst(sentence):
  """README: on SST both arms equivalent to W&P's code (dev selection), learned equivalent to
  uniform on both sides, with the printed intervals."""
  for arm in ('learned', 'uniform'):
    r = _compare(f'results/wp_table2/sst_{arm}/seed*/eval.json',
                 f'results/wp_reference/sst_{arm}_devsel/seed*/summary.json', 'f1_pos', verdicts.MARGINS['f1'])
    assert r['verdict'] == verdicts.EQUIVALENT, (arm, r['verdict'])
  ours = _wp_table2('sst')
  theirs = _compare('results/wp_reference/sst_learned_devsel/seed*/summary.json',
                    'results/wp_reference/sst_uniform_devsel/seed*/summary.json', 'f1_pos', verdicts.MARGINS['f1'])
  assert ours['verdict'] == theirs['verdict'] == verdicts.EQUIVALENT
  assert 'both arms are equivalent' in sentence and 'learned attention is equivalent to uniform' in sentence
  assert f'(Δ {_interval(ours)})' in sentence, (_interval(ours), sentence)
  assert f"W&P's code ({_interval(theirs)})" in sentence, (_interval(theirs), sentence)


def check_jw_babi3_accuracy(sentence):
  """docs/jain_wallace.md: bAbI 3 BiLSTM + tanh accuracy, attn-jax vs J&W's code: different, higher."""
  r = _compare('results/jw_qa/babi3_bilstm_tanh/seed*/eval.json',
               'results/jw_qa_reference/babi3_bilstm_tanh/seed*/summary.json', 'accuracy', verdicts.MARGINS['accuracy'])
  assert r['verdict'] == verdicts.DIFFERENT and r['difference'] > 0 and not r['beyond_margin']
  assert f'(Δ {_interval(r)},' in sentence, (_interval(r), sentence)


def _grid_counts():
  """The J&W grid's summary counts against J&W's code (the README's block), as the report computes them."""
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  from attn_jax.tables import jain_wallace_summary  # pylint: disable=g-import-not-at-top
  _, counts = jain_wallace_summary.rows_and_counts(STUDIES['jw_grid'], os.path.join(ROOT, 'results/jw_grid'),
                                                   os.path.join(ROOT, 'results/jw_reference'))
  return counts


def check_jw_grid_cells(sentence):
  """docs/jain_wallace.md: the grid's cells against J&W's code by verdict, measured and with Holm's correction."""
  found = _grid_counts()['found']
  m, h = found['measured'], found['holm']
  assert (f'{found["tested"]} row × statistic cells, {m[verdicts.EQUIVALENT]} equivalent, '
          f'{m[verdicts.EQUIVALENT_SMALL]} equivalent with a difference smaller than the margin') in sentence
  assert f'{m[verdicts.DIFFERENT]} different, {m[verdicts.INCONCLUSIVE]}' in sentence
  assert f'{h[verdicts.EQUIVALENT]} equivalent and {h[verdicts.INCONCLUSIVE]} inconclusive' in sentence
  assert h[verdicts.EQUIVALENT_SMALL] == h[verdicts.DIFFERENT] == 0


def check_jw_grid_rows(sentence):
  """docs/jain_wallace.md: the rows with all four statistics equivalent (≡ or ≡Δ) to J&W's code."""
  rows = _grid_counts()['rows_tested']
  assert f'All four statistics equivalent on {sum(yes for _, yes in rows)} of {len(rows)} rows' in sentence


def check_wp_imdb(sentence):
  """docs/wiegreffe_pinter.md: IMDB learned − uniform, different and positive, with its interval."""
  imdb = _wp_table2('imdb')
  assert imdb['verdict'] == verdicts.DIFFERENT and imdb['difference'] > 0 and not imdb['beyond_margin']
  assert f'Learned − uniform is {_interval(imdb)}' in sentence and ': different' in sentence


def check_wp_sst_15(sentence):
  """docs/wiegreffe_pinter.md: with 15 seeds a side both arms equivalent to W&P's code and learned
  equivalent to uniform on both sides, with the printed intervals."""
  check_readme_wp_sst_arms()
  ours = _wp_table2('sst')
  assert ours['verdict'] == verdicts.EQUIVALENT and _interval(ours) in sentence, (_interval(ours), sentence)
  assert ('equivalent to W&P' in sentence) and ('learned' in sentence)
  for arm in ('learned', 'uniform'):  # the F1 means the sentence prints
    ci = _ci(_values(f'results/wp_table2/sst_{arm}/seed*/eval.json', 'f1_pos'))
    assert f'{arm} {ci}' in sentence, (arm, ci, sentence)


def check_readme_wp_sst_arms():
  for arm in ('learned', 'uniform'):
    r = _compare(f'results/wp_table2/sst_{arm}/seed*/eval.json',
                 f'results/wp_reference/sst_{arm}_devsel/seed*/summary.json', 'f1_pos', verdicts.MARGINS['f1'])
    assert r['verdict'] == verdicts.EQUIVALENT, (arm, r['verdict'])


def check_wp_sst_lstm2(sentence):
  """docs/wiegreffe_pinter.md: one batch order a side (results/wp_table2_lstm2), learned vs uniform
  equivalent with its interval, each arm equivalent to W&P's code."""
  r = _compare('results/wp_table2_lstm2/sst_learned/seed*/eval.json',
               'results/wp_table2_lstm2/sst_uniform/seed*/eval.json', 'f1_pos', verdicts.MARGINS['f1'])
  assert r['verdict'] == verdicts.EQUIVALENT and f'(Δ {_interval(r)}, equivalent' in sentence, (_interval(r), sentence)
  for arm in ('learned', 'uniform'):
    code = _compare(f'results/wp_table2_lstm2/sst_{arm}/seed*/eval.json',
                    f'results/wp_reference/sst_{arm}_devsel/seed*/summary.json', 'f1_pos', verdicts.MARGINS['f1'])
    assert code['equivalent'], (arm, code['verdict'])
  printed = [_ci(_values(f'results/wp_table2_lstm2/sst_{arm}/seed*/eval.json', 'f1_pos')) for arm in ('learned', 'uniform')]
  assert f'learned {printed[0]} and uniform {printed[1]}' in sentence, (printed, sentence)


# The J&W comparisons (attn-jax's grids against J&W's code on the same inputs), as the reports compute them.
JW_STATS = ('accuracy', 'tau_attention_gradient', 'tau_attention_loo', 'tau_gradient_loo')


def _ci(values) -> str:
  """'0.831 ± 0.011': mean ± 95 % Student-t half-width, as the prose prints an interval over seeds."""
  from attn_jax.analysis import statistics  # pylint: disable=g-import-not-at-top
  c = statistics.t_interval([v for v in values if v is not None])
  return f"{c['mean']:.3f} ± {c['half_width']:.3f}"


def _jw_row(root, arm, ref_seeds=None, reference='results/jw_reference'):
  """({stat: verdict test}, attn-jax's values, J&W code's values) of one grid row; `ref_seeds`: only
  those seeds of J&W's code (what it had when the sentence was written)."""
  from attn_jax.tables import jain_wallace_reference as jwr, study_results  # pylint: disable=g-import-not-at-top
  mine = study_results.collect_arm(jwr.ours_dir(os.path.join(ROOT, root), arm))['values']
  theirs = jwr.read_arm(os.path.join(ROOT, reference, arm))
  values = {s: [v for k, v in zip(theirs['seeds'], vs) if ref_seeds is None or k in ref_seeds]
            for s, vs in theirs['values'].items()}
  return {s: jwr.equivalence(mine[s], values[s], s) for s in JW_STATS}, mine, values


def _published(arm_name: str) -> dict:
  """J&W's published numbers of a J&W grid row, {statistic: value}."""
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  from attn_jax.tables import jain_wallace_summary  # pylint: disable=g-import-not-at-top
  arm = [a for a in STUDIES['jw_grid'].arms if a.name == arm_name][0]
  return jain_wallace_summary.published_values(arm)


def _published_text(arm_name: str, stats=JW_STATS[1:]) -> str:
  paper = _published(arm_name)
  return ' / '.join(f'{paper[s]:.3f}' for s in stats)


def _assert_verdicts(tests, expected: str, what=''):
  """`expected`: the four statistics' symbols (accuracy, τ(α, grad), τ(α, LOO), τ(grad, LOO)), e.g. '≡ ? ? ≡'."""
  found = [verdicts.SYMBOLS[tests[s]['verdict']] for s in JW_STATS]
  assert found == expected.split(), (what, found, expected)


def _seeds(test) -> str:
  return f"{test['seeds_needed']:,}"


def _ci_texts(values, stats=JW_STATS, joiner=' / ') -> str:
  return joiner.join(_ci(values[s]) for s in stats)


def check_readme_verdict_names(sentence):
  """README: the four verdicts named and marked as `verdicts` names and marks them."""
  for v in verdicts.ORDER:
    assert f'*{verdicts.WORDS[v]}* ({verdicts.SYMBOLS[v]})' in sentence, (v, sentence)


def check_jw_grid_imdb_bilstm(sentence):
  """docs/jain_wallace.md: results/jw_grid IMDB BiLSTM + tanh, 5 seeds, all four shown equivalent."""
  tests, mine, _ = _jw_row('results/jw_grid', 'imdb_bilstm_tanh')
  assert all(t['equivalent'] for t in tests.values()) and len(mine['accuracy']) == 5
  assert '(5 seeds;' in sentence and 'all four statistics shown equivalent' in sentence


def check_jw_grid_imdb_cnn_dot(sentence):
  """docs/jain_wallace.md: results/jw_grid IMDB CNN + dot against J&W's code's 3 seeds."""
  tests, mine, theirs = _jw_row('results/jw_grid', 'imdb_cnn_dot')
  _assert_verdicts(tests, '≡ ? ≡ ≡')
  seeds = mine['tau_attention_gradient']
  others = seeds[:1] + seeds[2:]
  assert f'our seed 1 gives {seeds[1]:.3f} where the other four give {min(others):.2f}–{max(others):.2f}' in sentence
  assert len(theirs['accuracy']) == 3 and "J&W's code's 3 seeds" in sentence
  assert ('accuracy, τ(α, LOO) and τ(gradient, LOO) are shown equivalent; τ(α, gradient) is inconclusive'
          in sentence)
  t = tests['tau_attention_gradient']
  assert f'(Δ {_interval(t)}; about {_seeds(t)} seeds a side would decide)' in sentence, (_interval(t), _seeds(t))


def check_jw_babi3_two_seeds(sentence):
  """docs/jain_wallace.md: bAbI 3 BiLSTM + tanh τ(α, gradient) against 2 and 5 seeds of J&W's code."""
  two, _, _ = _jw_row('results/jw_qa', 'babi3_bilstm_tanh', ref_seeds=range(2), reference='results/jw_qa_reference')
  five, _, theirs = _jw_row('results/jw_qa', 'babi3_bilstm_tanh', reference='results/jw_qa_reference')
  assert len(theirs['accuracy']) == 5
  assert two['tau_attention_gradient']['verdict'] == verdicts.EQUIVALENT
  assert f"shown equivalent to ours (Δ {_interval(two['tau_attention_gradient'])})" in sentence
  for s in JW_STATS[1:]:
    assert five[s]['verdict'] == verdicts.INCONCLUSIVE, s
  assert f"with five it is inconclusive (Δ {_interval(five['tau_attention_gradient'])})" in sentence


def check_jw_lstm2_scratch_rows(sentence):
  """docs/jain_wallace.md: the from-scratch rows of results/jw_grid_lstm2 against J&W's code."""
  sst, mine_sst, theirs_sst = _jw_row('results/jw_grid_lstm2', 'sst_bilstm_tanh_scratch')
  news, mine_news, theirs_news = _jw_row('results/jw_grid_lstm2', '20news_bilstm_tanh_scratch')
  _assert_verdicts(sst, '? ? ≡ ?', 'sst')
  _assert_verdicts(news, '? ≡ ≡ ?', '20news')
  sizes = {len(v['accuracy']) for v in (mine_sst, theirs_sst, mine_news, theirs_news)}
  assert sizes == {4, 5}, sizes
  assert ("neither is shown different from J&W's code in any statistic; SST's is shown equivalent in τ(α, LOO), "
          "20 Newsgroups' in τ(α, gradient) and τ(α, LOO), the other cells are inconclusive at 4–5 seeds a side"
          in sentence)


def check_jw_lstm2_sst_bilstm_tanh(sentence):
  """docs/jain_wallace.md: results/jw_grid_lstm2 SST BiLSTM + tanh against J&W's code's 15 seeds."""
  tests, _, theirs = _jw_row('results/jw_grid_lstm2', 'sst_bilstm_tanh')
  _assert_verdicts(tests, '≡ ? ? ≡')
  assert len(theirs['accuracy']) == 15
  ag, al = tests['tau_attention_gradient'], tests['tau_attention_loo']
  assert f"(Δ {_num(ag['difference'])} and {_num(al['difference'])}) are inconclusive" in sentence
  assert 'accuracy and τ(gradient, LOO) are shown equivalent, τ(α, gradient) and τ(α, LOO)' in sentence
  assert f'(about {_seeds(ag)} and {_seeds(al)} seeds a side would decide' in sentence
  assert 'and none is shown different' in sentence


def check_jw_lstm2_sst_bilstm_dot(sentence):
  """docs/jain_wallace.md: results/jw_grid_lstm2 SST BiLSTM + dot against J&W's code."""
  tests, _, _ = _jw_row('results/jw_grid_lstm2', 'sst_bilstm_dot')
  _assert_verdicts(tests, '≡ ? ? ≡')


def check_jw_lstm2_sst_scratch(sentence):
  """docs/jain_wallace.md: SST BiLSTM + tanh from scratch, with the fixes and before them."""
  tests, _, _ = _jw_row('results/jw_grid_lstm2', 'sst_bilstm_tanh_scratch')
  _assert_verdicts(tests, '? ? ≡ ?')
  assert 'τ(α, LOO) shown equivalent, the rest inconclusive' in sentence
  before, _, _ = _jw_row('results/jw_grid_before_fixes', 'sst_bilstm_tanh_scratch')
  t = before['tau_attention_gradient']
  assert t['verdict'] == verdicts.DIFFERENT
  assert f'its τ(α, gradient) was shown different (Δ {_interval(t)})' in sentence


def check_jw_fixed_sst_bilstm_tanh(sentence):
  """docs/jain_wallace.md: results/jw_grid_fixed SST BiLSTM + tanh against J&W's code's seeds 0–4, and its 15."""
  tests, mine, theirs = _jw_row('results/jw_grid_fixed', 'sst_bilstm_tanh', ref_seeds=range(5))
  _assert_verdicts(tests, '≡ ? ? ≡')
  assert (f"accuracy {_ci(mine['accuracy'])} and τ {_ci_texts(mine, JW_STATS[1:])} against J&W's published "
          f"{_published_text('sst_bilstm_tanh')}") in sentence
  assert f"{_ci(theirs['accuracy'])} and {_ci_texts(theirs, JW_STATS[1:])} (its seeds 0–4)" in sentence
  ag, al = tests['tau_attention_gradient'], tests['tau_attention_loo']
  assert f'τ(α, ·) inconclusive (about {_seeds(ag)} and {_seeds(al)} seeds a side would decide' in sentence
  assert 'none shown different' in sentence
  everything, _, _ = _jw_row('results/jw_grid_fixed', 'sst_bilstm_tanh')
  _assert_verdicts(everything, '≡ ≡ ≡ ≡', '15 seeds')
  assert 'with its 15 seeds, the table below, all four are shown equivalent' in sentence


def check_jw_fixed_sst_cnn_dot(sentence):
  """docs/jain_wallace.md: results/jw_grid_fixed SST CNN + dot against J&W's code's seeds 0–4."""
  tests, mine, theirs = _jw_row('results/jw_grid_fixed', 'sst_cnn_dot', ref_seeds=range(5))
  _assert_verdicts(tests, '≡ ? ? ≡')
  assert (f"τ(α, gradient) {_ci(mine['tau_attention_gradient'])} and τ(α, LOO) {_ci(mine['tau_attention_loo'])}"
          in sentence)
  assert f"accuracy {_ci(mine['accuracy'])}" in sentence
  _, before, _ = _jw_row('results/jw_grid_before_fixes', 'sst_cnn_dot')
  assert f"(from {_ci(before['tau_attention_gradient'])[:5]} and {_ci(before['tau_attention_loo'])[:5]})" in sentence
  assert f"published {_published_text('sst_cnn_dot', JW_STATS[1:3])})" in sentence
  assert (f"J&W's code gives {_ci(theirs['tau_attention_gradient'])} and {_ci(theirs['tau_attention_loo'])} "
          '(its seeds 0–4' in sentence)
  ag, al = tests['tau_attention_gradient'], tests['tau_attention_loo']
  assert ('accuracy and τ(gradient, LOO) shown equivalent, τ(α, ·) inconclusive (about '
          f'{_seeds(ag)} and {_seeds(al)} seeds a side), none shown different') in sentence


def check_jw_fixed_three_rows(sentence):
  """docs/jain_wallace.md: of the fixed grid's 3 SST rows (J&W's code's seeds 0–4), only the
  from-scratch row has cells shown different."""
  for arm in ('sst_bilstm_tanh', 'sst_cnn_dot'):
    tests, _, _ = _jw_row('results/jw_grid_fixed', arm, ref_seeds=range(5))
    assert not any(t['verdict'] == verdicts.DIFFERENT for t in tests.values()), arm
  tests, _, _ = _jw_row('results/jw_grid_fixed', 'sst_bilstm_tanh_scratch', ref_seeds=range(5))
  _assert_verdicts(tests, '≡ ≠ ≠ ?')
  ag, al = tests['tau_attention_gradient'], tests['tau_attention_loo']
  assert ag['beyond_margin'] and not al['beyond_margin'] and 'has cells shown different' in sentence
  assert f'(τ(α, gradient), Δ {_interval(ag)}, shown beyond the margin; τ(α, LOO), Δ {_interval(al)})' in sentence


NEWS_ROWS = ('20news_bilstm_tanh', '20news_bilstm_dot', '20news_cnn_tanh', '20news_cnn_dot', '20news_average_tanh',
             '20news_average_dot')


def check_jw_before_fixes_20news(sentence):
  """docs/jain_wallace.md: the 20 Newsgroups rows before the fixes against J&W's code, by verdict."""
  tests = {arm: _jw_row('results/jw_grid_before_fixes', arm)[0] for arm in NEWS_ROWS}
  cells = [t for row in tests.values() for t in row.values()]
  by = lambda v: sum(t['verdict'] == v for t in cells)
  assert len(cells) == 24 and by(verdicts.EQUIVALENT_SMALL) == 0
  rows_acc = sum(row['accuracy']['verdict'] == verdicts.EQUIVALENT for row in tests.values())
  assert f'{by(verdicts.EQUIVALENT)} of the 24 cells equivalent (accuracy in {rows_acc} rows)' in sentence
  different = [(arm, s) for arm, row in tests.items() for s, t in row.items() if t['verdict'] == verdicts.DIFFERENT]
  assert {arm for arm, _ in different} == {'20news_cnn_dot'}
  assert f'{len(different)} different (CNN + dot, below) and {by(verdicts.INCONCLUSIVE)} inconclusive' in sentence


def check_jw_before_fixes_20news_cnn_dot(sentence):
  """docs/jain_wallace.md: 20 Newsgroups CNN + dot before the fixes: two cells different, not beyond the margin."""
  tests, mine, theirs = _jw_row('results/jw_grid_before_fixes', '20news_cnn_dot')
  for s, label in (('tau_attention_gradient', 'τ(α, gradient)'), ('tau_gradient_loo', 'τ(gradient, LOO)')):
    t = tests[s]
    assert t['verdict'] == verdicts.DIFFERENT and not t['beyond_margin'], s
    assert f'{label} {_ci(mine[s])} against {_ci(theirs[s])}, Δ {_interval(t)}' in sentence, (s, _interval(t))
  assert 'both cells read *different*' in sentence and 'neither shown beyond the margin' in sentence


def _batch_seed_rows():
  """The batch_seeds table's rows and counts, as its report computes them."""
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  from attn_jax.tables import study_seeds  # pylint: disable=g-import-not-at-top
  table, counts = study_seeds.rows(STUDIES['batch_seeds'], os.path.join(ROOT, 'results/batch_seeds'),
                                   os.path.join(ROOT, 'results/jw_grid_lstm2'), os.path.join(ROOT, 'results/jw_reference'))
  return table, counts


def _batch_seed_verdicts(row: str, side: int) -> list[str]:
  """The four verdict texts of a row ('equivalent (Δ …', …), `side` 5 = one order, 6 = own orders."""
  table, _ = _batch_seed_rows()
  return [r[side] for r in table[1:] if r[0] == row and r[1] != 'selected epoch (1 = first)']


def check_jw_batch_order_20news_cnn_dot(sentence):
  """docs/jain_wallace.md: 20 Newsgroups CNN + dot with own batch orders: τ(gradient, LOO) equivalent, none different."""
  own = _batch_seed_verdicts('20news_cnn_dot', 6)
  assert len(own) == 4 and own[3].startswith('equivalent (') and not any(v.startswith('different') for v in own)
  assert 'τ(gradient, LOO) is shown equivalent and no cell different' in sentence


def check_jw_fixed_20news(sentence):
  """docs/jain_wallace.md: results/jw_grid_fixed's 20 Newsgroups rows against J&W's code."""
  expected = {'20news_bilstm_tanh': '? ? ? ≡', '20news_bilstm_dot': '? ? ≡ ?', '20news_cnn_tanh': '≡ ? ? ?',
              '20news_cnn_dot': '≡ ≠ ? ?', '20news_average_tanh': '≡ ? ≠ ?'}
  rows = {arm: _jw_row('results/jw_grid_fixed', arm) for arm in expected}
  for arm, symbols in expected.items():
    _assert_verdicts(rows[arm][0], symbols, arm)
  assert ('no cell of BiLSTM + tanh, BiLSTM + dot or CNN + tanh is shown different from J&W\'s code (equivalent: '
          'τ(gradient, LOO) of BiLSTM + tanh, τ(α, LOO) of BiLSTM + dot, accuracy of both CNN rows; the rest '
          'inconclusive but') in sentence and 'Average + tanh is shown different in τ(α, LOO)' in sentence
  cd = rows['20news_cnn_dot'][0]['tau_attention_gradient']
  assert not cd['beyond_margin']
  assert f"CNN + dot's τ(α, gradient), different: Δ {_interval(cd)}, not shown beyond the margin" in sentence
  tests, mine, theirs = rows['20news_average_tanh']
  t = tests['tau_attention_loo']
  assert (f"({_ci(mine['tau_attention_loo'])} against {_ci(theirs['tau_attention_loo'])}, Δ {_interval(t)}"
          in sentence)
  own = _batch_seed_verdicts('20news_average_tanh', 6)
  assert own[2].startswith('inconclusive (')
  table, _ = _batch_seed_rows()
  own_ci = [r[3] for r in table[1:] if r[0] == '20news_average_tanh' and r[1] == 'τ(α, LOO)'][0]
  assert f'with own batch orders inconclusive, {own_ci.split(" (n=")[0]})' in sentence, own_ci


def check_jw_lstm2_20news_bilstm(sentence):
  """docs/jain_wallace.md: results/jw_grid_lstm2's 20 Newsgroups BiLSTM rows against J&W's code."""
  tests, mine, theirs = _jw_row('results/jw_grid_lstm2', '20news_bilstm_tanh')
  _assert_verdicts(tests, '≡ ? ? ≡', 'tanh')
  assert (f"(accuracy {_ci(mine['accuracy'])}, τ {_ci_texts(mine, JW_STATS[1:])} against J&W's code's "
          f"{_ci(theirs['accuracy'])} and {_ci_texts(theirs, JW_STATS[1:])})") in sentence
  ag, al = tests['tau_attention_gradient'], tests['tau_attention_loo']
  assert 'is shown equivalent in accuracy and τ(gradient, LOO), inconclusive in τ(α, ·)' in sentence
  assert f'(about {_seeds(ag)} and {_seeds(al)} seeds a side would decide)' in sentence
  dot, _, _ = _jw_row('results/jw_grid_lstm2', '20news_bilstm_dot')
  _assert_verdicts(dot, '? ? ? ?', 'dot')
  needed = [t['seeds_needed'] for t in dot.values()]
  assert f'inconclusive in all four ({min(needed)}–{max(needed)} seeds a side); neither is shown different' in sentence


def check_jw_wp_sst_arms(sentence):
  """docs/jain_wallace.md: W&P's Table 2 on SST, 15 seeds a side, both arms equivalent to W&P's code."""
  check_readme_wp_sst_arms()
  for arm in ('learned', 'uniform'):
    assert len(_values(f'results/wp_table2/sst_{arm}/seed*/eval.json', 'f1_pos')) == 15
    assert len(_values(f'results/wp_reference/sst_{arm}_devsel/seed*/summary.json', 'f1_pos')) == 15
  assert '15 seeds a side' in sentence and 'shown equivalent on both arms' in sentence


def check_jw_lstm2_imdb_bilstm(sentence):
  """docs/jain_wallace.md: results/jw_grid_lstm2 IMDB BiLSTM + tanh, all four equivalent to J&W's code."""
  tests, mine, theirs = _jw_row('results/jw_grid_lstm2', 'imdb_bilstm_tanh')
  _assert_verdicts(tests, '≡ ≡ ≡ ≡')
  assert (f"accuracy {_ci(mine['accuracy'])}, τ {_ci_texts(mine, JW_STATS[1:])} against J&W's code's "
          f"{_ci(theirs['accuracy'])} and {_ci_texts(theirs, JW_STATS[1:])}") in sentence
  assert f"the gap in τ(gradient, LOO) ({_published('imdb_bilstm_tanh')['tau_gradient_loo']:.3f})" in sentence


def check_jw_lstm2_imdb_cnn_dot(sentence):
  """docs/jain_wallace.md: results/jw_grid_lstm2 IMDB CNN + dot, all four equivalent to J&W's code's 3 seeds."""
  tests, mine, theirs = _jw_row('results/jw_grid_lstm2', 'imdb_cnn_dot')
  _assert_verdicts(tests, '≡ ≡ ≡ ≡')
  assert len(mine['accuracy']) == 5 and len(theirs['accuracy']) == 3
  assert (f"accuracy {_ci(mine['accuracy'])}, τ {_ci_texts(mine, JW_STATS[1:])} against J&W's code's "
          f"{_ci(theirs['accuracy'])} and {_ci_texts(theirs, JW_STATS[1:])} (3 seeds;") in sentence
  _, before, _ = _jw_row('results/jw_grid_before_fixes', 'imdb_cnn_dot')
  assert f"τ(α, ·) was {_ci(before['tau_attention_gradient'])[:5]} / {_ci(before['tau_attention_loo'])[:5]})" in sentence
  assert f"miss the published {_published_text('imdb_cnn_dot')};" in sentence


def check_jw_lstm2_imdb_scratch(sentence):
  """docs/jain_wallace.md: IMDB BiLSTM + tanh from scratch, equivalent on all four, τ(α, gradient) with
  a difference smaller than the margin."""
  tests, mine, theirs = _jw_row('results/jw_grid_lstm2', 'imdb_bilstm_tanh_scratch')
  _assert_verdicts(tests, '≡ ≡Δ ≡ ≡')
  assert 'is shown equivalent on all four statistics, τ(α, gradient) with a difference smaller than the' in sentence
  t = tests['tau_attention_gradient']
  assert f"accuracy {_ci(mine['accuracy'])} against {_ci(theirs['accuracy'])};" in sentence
  assert (f"τ(α, gradient) {_ci(mine['tau_attention_gradient'])} against {_ci(theirs['tau_attention_gradient'])}, "
          f'Δ {_interval(t)}') in sentence
  assert f"p = {t['p_zero']:.3f}" in sentence


def check_jw_batch_order_imdb_scratch(sentence):
  """docs/jain_wallace.md: IMDB from scratch with own batch orders: all four equivalent."""
  own = _batch_seed_verdicts('imdb_bilstm_tanh_scratch', 6)
  assert len(own) == 4 and all(v.startswith('equivalent (') for v in own), own
  table, _ = _batch_seed_rows()
  own_ci = [r[3] for r in table[1:] if r[0] == 'imdb_bilstm_tanh_scratch' and r[1] == 'τ(α, gradient)'][0]
  assert f'τ(α, gradient) is {own_ci.split(" (n=")[0]}, and all four' in sentence, own_ci


def check_jw_fixed_welch_count(sentence):
  """docs/jain_wallace.md: the fixed grid's 11 rows × 4 statistics against J&W's code's seeds 0–4:
  Welch's differences, and the verdicts of those cells."""
  rows = ('sst_bilstm_tanh', 'sst_bilstm_dot', 'sst_cnn_tanh', 'sst_cnn_dot', 'sst_average_tanh', 'sst_average_dot',
          '20news_bilstm_tanh', '20news_bilstm_dot', '20news_cnn_tanh', '20news_cnn_dot', '20news_average_tanh')
  cells = {(arm, s): t for arm in rows for s, t in _jw_row('results/jw_grid_fixed', arm, ref_seeds=range(5))[0].items()}
  assert len(cells) == 44 and all(t['difference'] is not None for t in cells.values())
  welch = [key for key, t in cells.items() if t['p_zero'] < verdicts.ALPHA]
  assert f'found {len(welch)} differences where about {0.05 * len(cells):.1f} are expected' in sentence
  different = {key for key, t in cells.items() if t['verdict'] == verdicts.DIFFERENT}
  assert different == {('sst_cnn_tanh', 'tau_attention_gradient'), ('sst_average_tanh', 'tau_attention_loo'),
                       ('sst_average_dot', 'tau_attention_loo'), ('20news_cnn_dot', 'tau_attention_gradient'),
                       ('20news_average_tanh', 'tau_attention_loo')}, different
  assert {key for key in different if cells[key]['beyond_margin']} == {('20news_average_tanh', 'tau_attention_loo')}
  small = {key for key, t in cells.items() if t['verdict'] == verdicts.EQUIVALENT_SMALL}
  assert small == {('sst_cnn_tanh', 'tau_attention_loo')}, small
  assert f'reads {len(different)} of those 44 cells different' in sentence
  assert f'and {len(small)} equivalent with a difference smaller than the margin (SST CNN + tanh τ(α, LOO))' in sentence


def check_jw_batch_seed_counts(sentence):
  """docs/jain_wallace.md: the batch_seeds study's cells against J&W's code, one order and own orders."""
  _, counts = _batch_seed_rows()
  one, own = counts['one']['measured'], counts['own']['measured']
  assert own[verdicts.DIFFERENT] == own[verdicts.EQUIVALENT_SMALL] == 0 and counts['own']['tested'] == 28
  assert (f'{own[verdicts.EQUIVALENT]} of 28 cells shown equivalent, {own[verdicts.INCONCLUSIVE]} inconclusive; '
          f'with one order {one[verdicts.EQUIVALENT]} equivalent, {one[verdicts.EQUIVALENT_SMALL]} equivalent with a '
          f'difference smaller than the margin, {one[verdicts.DIFFERENT]} different and '
          f'{one[verdicts.INCONCLUSIVE]} inconclusive') in sentence


def check_jw_batch_seed_counts_summary(sentence):
  """docs/jain_wallace.md (summary list): the batch_seeds counts, one order and own orders."""
  _, counts = _batch_seed_rows()
  one, own = counts['one']['measured'], counts['own']['measured']
  assert (f'(7 rows, {counts["one"]["tested"]} cells' in sentence)
  assert (f'with one order {one[verdicts.EQUIVALENT]} cells are equivalent to J&W\'s code, '
          f'{one[verdicts.EQUIVALENT_SMALL]} equivalent with a difference smaller than the margin, '
          f'{one[verdicts.DIFFERENT]} different and {one[verdicts.INCONCLUSIVE]} inconclusive; with their own orders '
          f'{own[verdicts.EQUIVALENT]} equivalent, {own[verdicts.EQUIVALENT_SMALL]}, {own[verdicts.DIFFERENT]} and '
          f'{own[verdicts.INCONCLUSIVE]}') in sentence


def check_jw_grid_sst_cnn_tanh(sentence):
  """docs/jain_wallace.md: results/jw_grid SST CNN + tanh τ(α, gradient) equivalent to J&W's code."""
  tests, mine, theirs = _jw_row('results/jw_grid', 'sst_cnn_tanh')
  assert tests['tau_attention_gradient']['verdict'] == verdicts.EQUIVALENT and len(mine['accuracy']) == 15
  assert f"gives {_ci(theirs['tau_attention_gradient'])}, shown equivalent to ours" in sentence


def check_jw_lstm2_counts(sentence):
  """docs/jain_wallace.md: results/jw_grid_lstm2's cells against J&W's code by verdict (its summary block)."""
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  from attn_jax.tables import jain_wallace_summary  # pylint: disable=g-import-not-at-top
  _, counts = jain_wallace_summary.rows_and_counts(STUDIES['jw_grid'], os.path.join(ROOT, 'results/jw_grid_lstm2'),
                                                   os.path.join(ROOT, 'results/jw_reference'))
  found = counts['found']
  m = found['measured']
  assert (f'of {found["tested"]} cells against J&W\'s code {m[verdicts.EQUIVALENT]} equivalent, '
          f'{m[verdicts.EQUIVALENT_SMALL]} equivalent with a difference smaller than the margin, '
          f'{m[verdicts.DIFFERENT]} different, {m[verdicts.INCONCLUSIVE]} inconclusive') in sentence


def check_jw_babi_counts(sentence):
  """docs/jain_wallace.md: the bAbI rows against J&W's code: the cells by verdict, and the one different."""
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  from attn_jax.tables import jain_wallace_qa_report  # pylint: disable=g-import-not-at-top
  compared = jain_wallace_qa_report.compare_with_code(STUDIES['jw_qa'], os.path.join(ROOT, 'results/jw_qa'),
                                                      os.path.join(ROOT, 'results/jw_qa_reference'))
  cells = {(arm.name, s): t for arm, _, _, tests in compared for s, t in tests.items()}
  by = lambda v: sum(t['verdict'] == v for t in cells.values())
  different = [key for key, t in cells.items() if t['verdict'] == verdicts.DIFFERENT]
  assert different == [('babi3_bilstm_tanh', 'accuracy')], different
  two, _, _ = _jw_row('results/jw_qa', 'babi3_bilstm_tanh', ref_seeds=range(2), reference='results/jw_qa_reference')
  assert two['tau_attention_gradient']['verdict'] == verdicts.EQUIVALENT
  assert "τ(α, gradient), shown equivalent with 2 of J&W's seeds, lost it with 5" in sentence
  t = cells[different[0]]
  assert not t['beyond_margin'] and by(verdicts.EQUIVALENT) == by(verdicts.EQUIVALENT_SMALL) == 0
  assert (f'{by(verdicts.EQUIVALENT)} of {len(cells)} cells are shown equivalent, 1 is different (bAbI 3 BiLSTM + '
          f"tanh's accuracy, Δ {_interval(t)}, not shown beyond the margin) and {by(verdicts.INCONCLUSIVE)} are "
          'inconclusive') in sentence


def check_usage_vector_workers(sentence):
  """docs/usage.md: vectors built with 2 threads against 1: F1 and ROC-AUC equivalent, the rest inconclusive."""
  from attn_jax.tables import jain_wallace_reference as jwr, study_results  # pylint: disable=g-import-not-at-top
  one, two = (study_results.collect_arm(os.path.join(ROOT, f'results/vector_workers/sst_bilstm_tanh_workers{n}'))
              ['values'] for n in (1, 2))
  tests = {s: jwr.equivalence(two[s], one[s], s) for s in ('accuracy', 'f1_pos', 'roc_auc') + JW_STATS[1:]}
  assert tests['f1_pos']['verdict'] == tests['roc_auc']['verdict'] == verdicts.EQUIVALENT
  rest = ('accuracy',) + JW_STATS[1:]
  assert all(tests[s]['verdict'] == verdicts.INCONCLUSIVE for s in rest)
  assert len(one['accuracy']) == len(two['accuracy']) == 5
  assert f"by at most {abs(tests['accuracy']['difference']):.3f} in accuracy" in sentence
  assert f"and {max(abs(tests[s]['difference']) for s in JW_STATS[1:]):.3f} in a τ" in sentence
  assert 'F1 and ROC-AUC are shown equivalent' in sentence and 'none shown different' in sentence
  assert 'accuracy and the three τ are inconclusive at 5 seeds an arm' in sentence


def _wp_arms(root):
  """W&P's Table 2 on SST under `root`: ({arm: (values, test against W&P's code)}, learned − uniform)."""
  arms = {}
  for arm in ('learned', 'uniform'):
    values = _values(f'{root}/sst_{arm}/seed*/eval.json', 'f1_pos')
    code = _values(f'results/wp_reference/sst_{arm}_devsel/seed*/summary.json', 'f1_pos')
    arms[arm] = (values, verdicts.compare(values, code, verdicts.MARGINS['f1']))
  between = _compare(f'{root}/sst_learned/seed*/eval.json', f'{root}/sst_uniform/seed*/eval.json', 'f1_pos',
                     verdicts.MARGINS['f1'])
  return arms, between


def check_wp_sst_15_seeds(sentence):
  """docs/wiegreffe_pinter.md: 15 seeds a side, both arms equivalent to W&P's code, learned equivalent to
  uniform on both sides, with the printed intervals."""
  arms, ours = _wp_arms('results/wp_table2')
  theirs = _compare('results/wp_reference/sst_learned_devsel/seed*/summary.json',
                    'results/wp_reference/sst_uniform_devsel/seed*/summary.json', 'f1_pos', verdicts.MARGINS['f1'])
  for arm, (values, test) in arms.items():
    assert test['verdict'] == verdicts.EQUIVALENT and len(values) == 15, arm
    assert f'the {arm} arm ({_ci(values)})' in sentence, (arm, _ci(values))
  assert ours['verdict'] == theirs['verdict'] == verdicts.EQUIVALENT
  assert "are both equivalent to W&P's code" in sentence
  published = float(re.search(r'W&P publish ([+−]\d\.\d+), inside both intervals', sentence).group(1).replace('−', '-'))
  assert all(r['low95'] < published < r['high95'] for r in (ours, theirs))
  assert f'learned is equivalent to uniform in attn-jax (Δ {_interval(ours)})' in sentence
  assert f"as in W&P's code ({_interval(theirs)})" in sentence


def _wp_arms_said(root: str, sentence: str, said: str):
  """Both arms of `root` equivalent to W&P's code, and the sentence printing their F1 with `said`."""
  arms, between = _wp_arms(root)
  assert all(test['verdict'] == verdicts.EQUIVALENT for _, test in arms.values())
  assert f"gave {_ci(arms['learned'][0])} and {_ci(arms['uniform'][0])}, {said}" in sentence
  return arms, between


def check_wp_sst_one_order(sentence):
  """docs/wiegreffe_pinter.md: one batch order a side (results/wp_table2_lstm2)."""
  _, between = _wp_arms_said('results/wp_table2_lstm2', sentence, 'both shown equivalent')
  assert between['verdict'] == verdicts.EQUIVALENT
  assert f"uniform shown equivalent to learned (Δ {_num(between['difference'])})" in sentence


def check_wp_sst_two_fixes(sentence):
  """docs/wiegreffe_pinter.md: the first two fixes only (results/wp_table2_two_fixes)."""
  arms, _ = _wp_arms_said('results/wp_table2_two_fixes', sentence, 'also shown equivalent')
  assert f"(Δ {_interval(arms['learned'][1])} and {_interval(arms['uniform'][1])} against its 15 seeds)" in sentence
  assert all(arms[arm][1]['n_b'] == 15 for arm in arms)

CHECKED = {
    'IMDB: +0.036 [+0.005, +0.067], different': check_readme_wp_imdb,
    'learned attention is equivalent to uniform': check_readme_wp_sst,
    'Accuracy is different: higher on our side': check_jw_babi3_accuracy,
    'equivalent with a difference smaller than the margin (SST BiLSTM + tanh and': check_jw_grid_cells,
    'All four statistics equivalent on': check_jw_grid_rows,
    'Learned − uniform is +0.036': check_wp_imdb,
    'each shown equivalent to W&P\'s code\'s 15': check_wp_sst_15,
    'equivalent at a 0.02 margin), each equivalent to W&P': check_wp_sst_lstm2,
    'are compared by one function': check_readme_verdict_names,
    '106 min of training last session': check_jw_grid_imdb_bilstm,
    "Against J&W's code's 3 seeds (from the earlier grid": check_jw_grid_imdb_cnn_dot,
    'With two of its seeds τ(α, gradient) was shown equivalent': check_jw_babi3_two_seeds,
    "neither is shown different from J&W's code in any statistic; SST's": check_jw_lstm2_scratch_rows,
    "Against J&W's code's 15 seeds (the table below": check_jw_lstm2_sst_bilstm_tanh,
    'BiLSTM + dot: accuracy and τ(gradient, LOO) shown equivalent, τ(α, ·) inconclusive': check_jw_lstm2_sst_bilstm_dot,
    'linked into the grid root as `sst_bilstm_tanh_scratch`': check_jw_lstm2_sst_scratch,
    '(its seeds 0–4): accuracy and τ(gradient, LOO) shown equivalent': check_jw_fixed_sst_bilstm_tanh,
    'SST CNN + dot moved most': check_jw_fixed_sst_cnn_dot,
    'Of the 3 rows compared, only the third': check_jw_fixed_three_rows,
    "the old grid's 6 rows": check_jw_before_fixes_20news,
    "Welch's test of difference singled out CNN + dot": check_jw_before_fixes_20news_cnn_dot,
    'is shown equivalent and no cell different': check_jw_batch_order_20news_cnn_dot,
    "or CNN + tanh is shown different from J&W's code": check_jw_fixed_20news,
    'BiLSTM + tanh (accuracy 0.922': check_jw_lstm2_20news_bilstm,
    "**W&P's Table 2 through W&P's code**": check_jw_wp_sst_arms,
    "IMDB BiLSTM + tanh **is shown equivalent to J&W's code on all four statistics**": check_jw_lstm2_imdb_bilstm,
    'IMDB CNN + dot with the fixes (5 seeds) **is shown equivalent on all four too**': check_jw_lstm2_imdb_cnn_dot,
    'τ(α, gradient) with a difference smaller than the margin (accuracy': check_jw_lstm2_imdb_scratch,
    'and all four statistics are again shown equivalent': check_jw_batch_order_imdb_scratch,
    "Over the fixed grid's 11 tested": check_jw_fixed_welch_count,
    'With their own batch orders, none of these rows is shown different': check_jw_batch_seed_counts,
    '**One batch order for five seeds** narrowed': check_jw_batch_seed_counts_summary,
    'shown equivalent to ours: the gap is not attn-jax': check_jw_grid_sst_cnn_tanh,
    '(with the fixes, shared order: of': check_jw_lstm2_counts,
    '1 is different (bAbI 3 BiLSTM + tanh': check_jw_babi_counts,
    "Two threads moved no statistic beyond the seeds' spread": check_usage_vector_workers,
    "With 15 seeds a side (both attn-jax and W&P's code)": check_wp_sst_15_seeds,
    'With one batch order a side (`results/wp_table2_lstm2/`': check_wp_sst_one_order,
    'With the first two fixes only (one LSTM bias': check_wp_sst_two_fixes,
}
