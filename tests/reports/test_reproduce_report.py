"""`python -m attn_jax.report reproduce`: one self-contained HTML report and a
Markdown one, from a synthetic smoke run (figures, heatmaps, explained texts,
the command) and from hand-made summaries of SST runs (the verdicts)."""

import base64
import html
import json
import os
import re
import shutil
import subprocess
import sys

import jax
import numpy as np
import pytest

from attn_jax import config as config_lib
from attn_jax.tables import report_command_line as report, run_command
from attn_jax.stages import stage_store as store
from attn_jax.tables.common import SAVED
import helpers

TEXT = 'w0003 w0010 good0 w0042 w0007'
# An attribute that loads something from elsewhere: a page that must open offline has none.
EXTERNAL = re.compile(r'''(?:src|href|srcset|action|poster|data)\s*=\s*["']?\s*(?:https?:|//|file:)|'''
                      r'''url\(\s*["']?\s*(?:https?:|//)|@import''', re.I)


@pytest.fixture(scope='module')
def run(tmp_path_factory):
  """A synthetic smoke model with the stages the chosen documents come from."""
  path = tmp_path_factory.mktemp('reproduce') / 'synthetic'
  with jax.numpy_dtype_promotion('standard'):  # training runs optax (conftest.optax_promotion)
    helpers.run(helpers.synthetic_config(top__analyses='kendall,adversarial'), path)
  return str(path)


@pytest.fixture(scope='module')
def written(run, tmp_path_factory):
  out = tmp_path_factory.mktemp('report')
  report.main(['reproduce', run, '--out', str(out), '--text', TEXT])
  return str(out)


def read(path):
  with open(path, encoding='utf-8') as f:
    return f.read()


def arrays(run, stage):
  found = store.most_complete(run, stage)
  return store.load_arrays(found.directory, found.summary)


def test_the_html_is_self_contained_and_embeds_every_figure(run, written):
  page = read(os.path.join(written, 'index.html'))
  assert not EXTERNAL.search(page), EXTERNAL.search(page).group(0)
  assert '<script' not in page.lower() and '<link' not in page.lower()
  images = re.findall(r'<img src="([^"]+)"', page)
  figures = ['training_curves.png'] + [f for stage in ('kendall', 'adversarial')
                                       for f in store.most_complete(run, stage).summary['figures']
                                       if f.endswith('.png')]
  assert len(images) == len(figures) == 3
  for uri in images:
    assert uri.startswith('data:image/png;base64,')
    assert base64.b64decode(uri.split(',', 1)[1])[:8] == b'\x89PNG\r\n\x1a\n'
  assert '<details><summary>config.json</summary>' in page


def test_the_markdown_has_its_figures_as_files_beside_it(written):
  text = read(os.path.join(written, 'REPORT.md'))
  linked = re.findall(r'!\[[^\]]*\]\((figures/[^)]+\.png)\)', text)
  assert len(linked) == 3 + 3 + 1  # figures, chosen documents, the text
  assert all(os.path.isfile(os.path.join(written, f)) for f in linked)
  assert '```bash\npython run.py --config=configs/synthetic.py:smoke' in text


def test_the_chosen_documents_are_shown_word_by_word(run, written):
  tau = arrays(run, 'kendall')['tau_attention_gradient']
  jsd = arrays(run, 'adversarial')['max_jsd']
  page = read(os.path.join(written, 'index.html'))
  for row, why in ((np.nanargmax(tau), 'highest τ(α, gradient)'), (np.nanargmin(tau), 'lowest τ(α, gradient)'),
                   (np.argmax(jsd), 'largest adversarial max JSD')):
    assert re.search(rf'test document {row} \(label \d, ŷ = [0-9.]+\): [^<]*{re.escape(why)}', page), why
  # The words are the split's, one coloured box per word and measure.
  vocab = json.loads(read(os.path.join(run, 'vocab.json')))
  gradient = arrays(run, 'gradient')
  row = int(np.argmax(jsd))
  words = re.split(r'test document |<h\d', page.split(f'test document {row} (')[1])[0]
  shown = re.findall(r'α = [^"]*"[^>]*>([^<]+)</span>', words)
  assert len(shown) == int(gradient['lengths'][row]) - 2
  assert all(w in vocab for w in shown)
  assert 'adversarial α (JSD' in words


def test_a_text_of_ones_own_is_explained(written):
  page = read(os.path.join(written, 'index.html'))
  section = page.split('Your texts</h2>')[1]
  assert html.escape(f'"{TEXT}" (ŷ = ') in section
  assert all(f'>{w}</span>' in section for w in TEXT.split())


def test_the_command_names_the_config_file_and_what_differs(run):
  command = run_command.reproduce(run)
  assert command.command == (f'python run.py --config=configs/synthetic.py:smoke --workdir={run} '
                             '--config.analyses=kendall,adversarial --config.train.progress=False')
  assert command.config['name'] == 'synthetic_bilstm_smoke'
  assert 'attn-jax' in run_command.version()


def test_a_run_without_analyses_says_what_is_missing(run, tmp_path):
  bare = tmp_path / 'bare'
  shutil.copytree(run, bare, ignore=shutil.ignore_patterns('analyses'))
  out = tmp_path / 'out'
  report.main(['reproduce', str(bare), '--out', str(out)])
  page = read(out / 'index.html')
  assert 'not in these runs' in page and 'J&amp;W&#x27;s analyses: no run holds them' in page
  assert 'S&amp;S&#x27;s erasure: no run holds it' in page
  assert 'holds no kendall or adversarial results: no documents to show' in page
  assert '--config.analyses=&#x27;&#x27;' in page  # the command asks for no stages, as the folder holds none
  assert (out / 'REPORT.md').exists()


def test_data_that_do_not_load_leave_a_line_instead_of_heatmaps(run, tmp_path):
  moved = tmp_path / 'moved'
  shutil.copytree(run, moved, ignore=shutil.ignore_patterns('checkpoints'))
  os.remove(moved / 'vocab.json')  # the data are read with the run's own vocabulary
  out = tmp_path / 'out'
  report.main(['reproduce', str(moved), '--out', str(out)])
  page = read(out / 'index.html')
  assert 'heatmaps missing: the test split of' in page and 'could not be loaded' in page
  assert '--workdir=WORKDIR --output_dir=' in page  # no checkpoints: an --output_dir


def sst_run(root, name, mean_tau, adversarial_jsd, predictions=False):
  """A hand-made SST run folder: eval.json, config.json, a kendall and an
  adversarial summary (saved copies, no arrays), W&P's uniform summary, and
  with `predictions` test predictions at J&W's accuracy."""
  folder = root / name
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.train.epochs = 3
  summary = lambda stage, numbers: {**numbers, 'documents': 1725, 'seconds': 1.0, 'documents_per_second': 1.0,
                                    'key': {'stage': stage, 'split': 'test', 'hash': f'{stage:0<16}', 'data': 'f' * 16}}
  entry = lambda mean: {'mean': mean, 'nanmean': mean, 'std': 0.2, 'pval_sig': 0.5, 'n': 1725,
                        'bootstrap_ci95': [mean - 0.02, mean + 0.02]}
  kendall = {'pairs': {pair: {g: entry(mean_tau) for g in ('overall', 'neg', 'pos')}
                       for pair in ('attention_gradient', 'attention_loo', 'gradient_loo')}}
  adversarial = {g: {'n': 800, 'mean_max_jsd': adversarial_jsd, 'fraction_above_0.5': 0.4,
                     'bootstrap_ci95': [adversarial_jsd - 0.02, adversarial_jsd + 0.02]} for g in ('neg', 'pos')}
  uniform = {'experiment': 'uniform', 'dataset': 'sst', 'split': 'test', 'n': 1725, 'key': {'hash': 'u' * 16},
             'seconds': 60.0, 'learned': {'f1_pos': 0.83}, 'uniform': {'f1_pos': 0.82}, SAVED: True}
  files = {'eval.json': {'accuracy': 0.81, 'f1_pos': 0.8, 'roc_auc': 0.9, 'n': 1725, 'selected_epoch': 1,
                         'selection_dev_roc_auc': 0.88, 'data_fingerprint': 'f' * 16},
           'config.json': cfg.to_dict(), 'analyses/kendall/summary.json': summary('kendall', kendall),
           'analyses/adversarial/summary.json': summary('adversarial', adversarial),
           'experiments/uniform/summary.json': uniform}
  for path, content in files.items():
    (folder / path).parent.mkdir(parents=True, exist_ok=True)
    (folder / path).write_text(json.dumps(content))
  if not predictions:
    return str(folder)
  labels = np.arange(1725) % 2
  right = np.arange(1725) < round(0.808 * 1725)  # J&W's SST accuracy
  np.savez(folder / 'predictions_test.npz', labels=labels, probs=np.where(right, labels, 1 - labels) * 0.8 + 0.1)
  return str(folder)


def test_measured_beside_published_with_a_verdict_per_row(tmp_path):
  runs = [sst_run(tmp_path, 'close', 0.35, 0.48, predictions=True), sst_run(tmp_path, 'far', 0.10, 0.20)]
  out = tmp_path / 'out'
  report.main(['reproduce', *runs, '--out', str(out)])
  page = read(out / 'index.html')
  assert re.search(r'<td>close</td><td>τ\(α, gradient\) overall</td><td>0.350 ± 0.200 \(sig 0.50\)</td>'
                   r'<td>0.351 ± 0.211 \(sig 0.49\)</td><td class="ok">within \(95% CI 0.330–0.370\)</td>', page)
  assert re.search(r'<td>far</td><td>adversarial max JSD neg</td>.*?<td class="miss">MISSED \(95% CI', page)
  assert 'W&amp;P Table 2' in page and '0.830 (0.831)' in page  # learned F1 beside W&P's
  assert 'Meister Table' not in page and 'Meister et al.: no run holds their stages' in page
  assert 'holds the kendall summary only (no results.npz)' in page
  assert re.search(r'<td>close</td><td>test accuracy</td><td>0.808</td><td>0.808</td><td class="ok">within', page)
  markdown = read(out / 'REPORT.md')
  assert '| close | τ(α, gradient) overall | 0.350 ± 0.200 (sig 0.50) |' in markdown
  assert '--config.train.epochs=3' in markdown


def test_the_cli_exits_1_with_one_line_for_a_folder_that_is_not_a_run(tmp_path, capsys):
  with pytest.raises(SystemExit) as exit_:
    report.main(['reproduce', str(tmp_path), '--out', str(tmp_path / 'out')])
  assert exit_.value.code == 1
  assert f'error: {tmp_path} holds no run (no config.json)' in capsys.readouterr().err
  with pytest.raises(SystemExit) as exit_:
    report.main(['reproduce'])
  assert exit_.value.code == 1
  assert not (tmp_path / 'out').exists()
  done = subprocess.run([sys.executable, '-m', 'attn_jax.report', 'reproduce', str(tmp_path)],
                        capture_output=True, text=True, cwd=tmp_path, check=False)
  assert done.returncode == 1 and done.stderr.startswith('error: ') and len(done.stderr.splitlines()) == 1


def test_a_model_of_a_program_is_reproduced_by_its_program(tmp_path):
  from attn_jax.workdirs import model_axis  # pylint: disable=g-import-not-at-top
  program = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  program.sweep = 'seed=0,1'
  member = model_axis.members(program, str(tmp_path))[1]
  for folder, cfg in ((tmp_path, program), (tmp_path / 'seed1', member.cfg)):
    os.makedirs(folder / 'checkpoints', exist_ok=True)
    (folder / 'config.json').write_text(cfg.to_json_best_effort())
  command = run_command.reproduce(str(tmp_path / 'seed1'))
  assert command.command == (f"python run.py --config=configs/synthetic.py:smoke --workdir={tmp_path} "
                             "--config.analyses='' --config.sweep=seed=0,1")
  assert command.notes[0] == f'{tmp_path / "seed1"} is one model of the program in {tmp_path}: ' \
                             'the command trains the whole program'


def test_a_users_own_files_in_the_out_folder_survive_every_report(run, tmp_path, capsys):
  """Only what attn-jax wrote in --out (its manifest) is overwritten or removed."""
  out = tmp_path / 'mine'
  out.mkdir()
  (out / 'notes.txt').write_text('my notes')
  with pytest.raises(SystemExit) as exit_:  # someone else's folder: refused, nothing written
    report.main(['reproduce', run, '--out', str(out)])
  err = capsys.readouterr().err
  assert exit_.value.code == 1 and len(err.strip().splitlines()) == 1
  assert 'holds files attn-jax did not write (notes.txt)' in err and '--force' in err
  assert sorted(os.listdir(out)) == ['notes.txt']
  # A file of the user's where the report would write one: refused even with --force.
  (out / 'index.html').write_text('<p>my page</p>')
  with pytest.raises(SystemExit):
    report.main(['reproduce', run, '--out', str(out), '--force'])
  assert 'index.html would be overwritten, and attn-jax did not write it' in capsys.readouterr().err
  assert read(out / 'index.html') == '<p>my page</p>'
  # --force writes beside the user's files; a later report removes its own stale figures, never theirs.
  (out / 'index.html').unlink()
  (out / 'figures').mkdir()
  (out / 'figures' / 'my_plot.png').write_bytes(b'not attn-jax')
  report.main(['reproduce', run, '--out', str(out), '--force', '--text', TEXT])
  ours = json.loads(read(out / '.attn_jax-written.json'))['files']
  assert 'index.html' in ours and 'notes.txt' not in ours and 'figures/my_plot.png' not in ours
  text_figures = {f for f in ours if f.startswith('figures/') and 'text' in f}
  assert text_figures and all((out / f).exists() for f in text_figures)
  report.main(['reproduce', run, '--out', str(out)])  # without the text: its heatmaps are stale now
  assert not any((out / f).exists() for f in text_figures)
  assert read(out / 'notes.txt') == 'my notes' and (out / 'figures' / 'my_plot.png').read_bytes() == b'not attn-jax'
