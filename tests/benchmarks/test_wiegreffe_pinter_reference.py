"""W&P's code as a reference for Table 2: the patched copy of their checkout
(a fixture in their layout), the job plan, and the side-by-side report read
from summaries in the format `benchmarks/original_code/wiegreffe_pinter_child.py` writes."""

import json
import os
import sys

import pytest
import scipy.stats
import helpers

from attn_jax.analysis import verdicts
from attn_jax.analysis import statistics
from attn_jax.tables import jain_wallace_reference, wiegreffe_pinter_table2_report as wiegreffe_pinter_table2
from attn_jax.studies import STUDIES
from attn_jax.studies import __main__ as cli

BENCHMARKS = os.path.join(helpers.ROOT, 'benchmarks', 'original_code')
sys.path.insert(0, BENCHMARKS)
import jain_wallace_patches  # pylint: disable=g-import-not-at-top,wrong-import-position
import wiegreffe_pinter_patches  # pylint: disable=g-import-not-at-top,wrong-import-position
import test_jain_wallace_reference_harness as jw_harness  # pylint: disable=g-import-not-at-top,wrong-import-position

STUDY = STUDIES['wp_table2']


def fake_checkout(folder, drop_anchor=None):
  return jw_harness.fake_checkout(folder, drop_anchor, wiegreffe_pinter_patches.WP)


def test_their_copy_is_the_package_their_imports_name_with_every_change(tmp_path):
  repo = fake_checkout(str(tmp_path / 'repo'))
  record = wiegreffe_pinter_patches.prepare(repo, str(tmp_path / 'code'))
  assert [c['file'] for c in record['changes']] == [c.file for c in wiegreffe_pinter_patches.CHANGES]
  for change in wiegreffe_pinter_patches.CHANGES:
    text = (tmp_path / 'code' / 'attention' / change.file).read_text()
    assert change.old + '\n' not in text and change.new in text
  # The stand-in for GitPython gives what their config reads.
  namespace = {}
  exec(wiegreffe_pinter_patches.CHANGES[-1].new, namespace)  # pylint: disable=exec-used
  repo_info = namespace['git'].Repo(search_parent_directories=True)
  assert repo_info.active_branch.name and repo_info.head.object.hexsha
  with pytest.raises(jain_wallace_patches.PatchError, match="W&P's repository"):
    wiegreffe_pinter_patches.prepare(str(tmp_path), str(tmp_path / 'other'))
  repo = fake_checkout(str(tmp_path / 'repo2'), drop_anchor='attn.masked_fill_(self.masks, 0)')
  with pytest.raises(jain_wallace_patches.PatchError, match='model/modelUtils.py'):
    wiegreffe_pinter_patches.prepare(repo, str(tmp_path / 'code2'))


def test_the_plan_has_both_attentions_and_selections_seed_by_seed(monkeypatch, tmp_path):
  import wiegreffe_pinter_reference  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(wiegreffe_pinter_reference.jain_wallace_inputs, 'export', lambda cfg, folder: os.path.join(folder, 'sst.npz'))
  jobs = wiegreffe_pinter_reference.plan_seeds(2, ['test', 'dev'], str(tmp_path))
  assert [(j['arm'], j['seed']) for j in jobs[:4]] == [
      ('sst_learned_testsel', 0), ('sst_uniform_testsel', 0), ('sst_learned_devsel', 0), ('sst_uniform_devsel', 0)]
  assert len(jobs) == 8 and jobs[1]['args'] == ['--attention=frozen', '--selection=test']
  assert all(j['child'] == 'wiegreffe_pinter_child.py' and j['inputs'] == os.path.join('inputs', 'sst.npz') for j in jobs)


LEARNED, UNIFORM = (0.82, 0.83, 0.84, 0.83, 0.825), (0.79, 0.80, 0.795, 0.80, 0.805)


@pytest.fixture
def tree(tmp_path):
  root, reference = tmp_path / 'results' / 'wp_table2', tmp_path / 'results' / 'wp_reference'
  for arm, values in (('sst_learned', LEARNED), ('sst_uniform', UNIFORM)):
    for k, f1 in enumerate(values):
      (root / arm / f'seed{k}').mkdir(parents=True)
      (root / arm / f'seed{k}' / 'eval.json').write_text(json.dumps({'accuracy': f1, 'f1_pos': f1}))
  for arm, values in (('sst_learned_devsel', (0.83, 0.832, 0.836)), ('sst_uniform_devsel', (0.83, 0.834, 0.82)),
                      ('sst_learned_testsel', (0.84,))):
    for k, f1 in enumerate(values):
      (reference / arm / f'seed{k}').mkdir(parents=True)
      (reference / arm / f'seed{k}' / 'summary.json').write_text(json.dumps({'f1_pos': f1, 'accuracy': f1}))
  return root, reference


def test_the_table_tests_attn_jax_against_their_code_under_the_same_selection(tree):
  root, reference = tree
  assert wiegreffe_pinter_table2.default_reference(str(root)) == str(reference)
  rows, notes = wiegreffe_pinter_table2.rows(STUDY, str(root), str(reference))
  assert len(rows) == 3  # 20 Newsgroups and IMDB have no model on either side: no rows
  assert [r[0] for r in rows[1:]] == ['sst', 'sst']
  rows = [r[1:] for r in rows]
  assert rows[1][0] == 'learned' and rows[1][4] == '0.831' and rows[2][4] == '0.822'
  assert rows[1][3] == '0.840 (n=1)' and rows[2][3] == '–'  # one seed: no interval; none: a dash
  ours_learned = verdicts.compare(LEARNED, (0.83, 0.832, 0.836), 0.02)
  assert rows[1][-1] == jain_wallace_reference.verdict(ours_learned) and rows[1][-1].startswith('equivalent')
  p_lower = scipy.stats.ttest_ind([x + 0.02 for x in UNIFORM], (0.83, 0.834, 0.82), equal_var=False,
                                  alternative='greater').pvalue
  uniform = verdicts.compare(UNIFORM, (0.83, 0.834, 0.82), 0.02)
  assert uniform['p_lower'] == pytest.approx(p_lower) and rows[2][-1] == jain_wallace_reference.verdict(uniform)
  assert notes[0].startswith('TOST (α = 0.05) at margins 0.02')
  assert notes[1] == 'sst: W&P published: learned − uniform = +0.009'
  gap = sum(LEARNED) / 5 - sum(UNIFORM) / 5
  assert notes[2].startswith(f'sst: attn-jax: learned − uniform = {gap:+.3f} (learned vs uniform: different')
  assert notes[3].startswith("sst: W&P's code, dev selection: learned − uniform = ")
  assert len(notes) == 4  # test selection: no uniform seed, no line


def test_another_dataset_has_its_rows_beside_its_published_values(tree):
  root, reference = tree
  for arm, values in (('imdb_learned', (0.90, 0.91)), ('imdb_uniform', (0.89,))):
    for k, f1 in enumerate(values):
      (root / arm / f'seed{k}').mkdir(parents=True)
      (root / arm / f'seed{k}' / 'eval.json').write_text(json.dumps({'accuracy': f1, 'f1_pos': f1}))
  rows, notes = wiegreffe_pinter_table2.rows(STUDY, str(root), str(reference))
  assert [r[:2] for r in rows[1:]] == [['sst', 'learned'], ['sst', 'uniform'], ['imdb', 'learned'],
                                       ['imdb', 'uniform']]
  # Fewer seeds than the study's 5: shown as unfinished, no gap computed from them.
  assert rows[3][2] == '0.905 ± 0.064 (n=2 of 5, unfinished)' and rows[3][5] == '0.902' and rows[4][5] == '0.879'
  assert rows[3][6] == '–'  # no W&P code seeds there: no test
  assert 'imdb: W&P published: learned − uniform = +0.023' in notes
  assert 'imdb: attn-jax: learned − uniform not computed: the learned and uniform arms are unfinished' in notes


def test_the_report_command_prints_and_rewrites_its_block(tree, capsys):
  root, _ = tree
  page = root.parent.parent / 'page.md'
  page.write_text('<!-- wp_table2-table:start -->\n<!-- wp_table2-table:end -->\n')
  cli.main(['report', 'wp_table2', f'--root={root}', f'--readme={page}'])
  assert 'F1: W&P published' in capsys.readouterr().out
  text = page.read_text()
  assert 'python -m attn_jax.studies report wp_table2 --root=results/wp_table2' in text
  assert '`results/wp_reference/<arm>/<seed>/summary.json`' in text


def test_the_docs_list_every_change_made_to_their_code():
  docs = os.path.join(helpers.ROOT, 'docs')
  with open(os.path.join(docs, 'wiegreffe_pinter.md')) as f:
    assert wiegreffe_pinter_patches.markdown_table() in f.read()
  with open(os.path.join(docs, 'jain_wallace.md')) as f:
    assert jain_wallace_patches.markdown_table() in f.read()
