"""The measured-vs-published report and the README blocks it writes."""

import json

import pytest

from attn_jax.tables import report_command_line as report


def fake_run(root, name, dataset, accuracy):
  folder = root / name
  folder.mkdir()
  (folder / 'eval.json').write_text(json.dumps({
      'accuracy': accuracy, 'f1_pos': 0.5, 'roc_auc': 0.75, 'n': 10, 'selected_epoch': 2,
      'selection_dev_roc_auc': 0.7, 'training_seconds': 120.0}))
  (folder / 'config.json').write_text(json.dumps({
      'seed': 3, 'data': {'dataset': dataset},
      'model': {'encoder': 'bilstm', 'attention': 'tanh', 'projection': 'softmax', 'embed_init_std': 0.1}}))
  return str(folder)


def test_training_table_sets_measured_beside_published(tmp_path, capsys):
  runs = [fake_run(tmp_path, 'a', 'sst', 0.8), fake_run(tmp_path, 'b', 'synthetic', 1.0)]
  readme = tmp_path / 'README.md'
  readme.write_text('intro\n<!-- training-results:start -->\nold\n<!-- training-results:end -->\nrest\n')
  report.main(['training', *runs, '--save', str(tmp_path / 'results'), '--readme', str(readme)])
  printed = capsys.readouterr().out
  assert '0.800 (0.808)' in printed and '1.000 (–)' in printed and 'N(0, 0.1²)' in printed
  text = readme.read_text()
  assert 'old' not in text and text.startswith('intro\n') and text.endswith('rest\n')
  assert '| a | bilstm + tanh / softmax | N(0, 0.1²) | 3 | 10 | 0.800 (0.808) |' in text
  assert '`results/a/eval.json`' in text and (tmp_path / 'results' / 'b' / 'config.json').exists()


def test_training_results_saved_under_other_names_say_their_vectors(tmp_path, capsys):
  run = fake_run(tmp_path, 'sst_bilstm_tanh_softmax', 'sst', 0.8)
  config = json.loads((tmp_path / 'sst_bilstm_tanh_softmax' / 'config.json').read_text())
  config['model']['embeddings_file'], config['vectors'] = 'in_domain', {'sg': 1}
  (tmp_path / 'sst_bilstm_tanh_softmax' / 'config.json').write_text(json.dumps(config))
  report.main(['training', run, '--save', str(tmp_path / 'results'), '--save-as', 'sst_bilstm'])
  assert (tmp_path / 'results' / 'sst_bilstm' / 'eval.json').exists()
  assert '| sst_bilstm ' not in capsys.readouterr().out  # printed before saving: the workdir's name
  readme = tmp_path / 'README.md'
  readme.write_text('<!-- training-results:start -->\n<!-- training-results:end -->\n')
  report.main(['training', str(tmp_path / 'results' / 'sst_bilstm'), '--readme', str(readme)])
  assert '| sst_bilstm | bilstm + tanh / softmax | in-domain skip-gram vectors |' in readme.read_text()
  with pytest.raises(SystemExit):
    report.main(['training', run, '--save', str(tmp_path / 'results'), '--save-as', 'a', '--save-as', 'b'])


def test_data_table_from_a_saved_file(tmp_path, capsys):
  saved = tmp_path / 'splits.json'
  saved.write_text(json.dumps({'sst': {'train': [6355, 3034, 3321], 'test': [1725, 863, 862], 'vocab': 13826}}))
  readme = tmp_path / 'README.md'
  readme.write_text('<!-- data-splits:start --><!-- data-splits:end -->')
  report.main(['data', str(saved), '--readme', str(readme)])
  assert '1725/863/862' in capsys.readouterr().out
  assert '| sst | 6355/3034/3321 | – | 1725/863/862 | 1725/863/862 | 13826 | 13826 |' in readme.read_text()


def fake_kendall(mean_ag):
  def entry(mean, ci):
    e = {'mean': mean, 'nanmean': mean, 'std': 0.2, 'pval_sig': 0.5, 'n': 10, 'n_nan': 0}
    return {**e, 'bootstrap_ci95': [mean - ci, mean + ci]} if ci else e
  pairs = {'attention_gradient': (mean_ag, 0.02), 'attention_loo': (0.285, 0.01),
           'gradient_loo': (0.656, None)}  # summaries of attn-jax <= 0.1 have no interval
  return {'pairs': {p: {g: entry(*m) for g in ('overall', 'neg', 'pos')} for p, m in pairs.items()},
          'documents': 10, 'seconds': 2.5, 'documents_per_second': 4.0}


def test_analyses_table_marks_misses_against_the_published_numbers(tmp_path, capsys):
  run = fake_run(tmp_path, 'a', 'sst', 0.8)
  stage = tmp_path / 'a' / 'analyses' / 'kendall'
  stage.mkdir(parents=True)
  (stage / 'summary.json').write_text(json.dumps(fake_kendall(0.2)))
  readme = tmp_path / 'README.md'
  readme.write_text('<!-- analysis-results:start -->\n<!-- analysis-results:end -->\n'
                    '<!-- analysis-timings:start -->\n<!-- analysis-timings:end -->\n')
  report.main(['analyses', run, '--save', str(tmp_path / 'results'), '--readme', str(readme)])
  lines = capsys.readouterr().out.splitlines()
  overall_ag = next(line for line in lines if 'τ(α, gradient) overall' in line)
  assert '0.200 ± 0.200' in overall_ag and '0.351 ± 0.211' in overall_ag
  assert 'MISSED (95% CI 0.180–0.220)' in overall_ag
  overall_al = next(line for line in lines if 'τ(α, LOO) overall' in line)
  assert 'within (95% CI 0.275–0.295)' in overall_al  # J&W's 0.291 is inside
  overall_gl = next(line for line in lines if 'τ(gradient, LOO) overall' in line)
  assert 'within (±0.07, no CI recorded)' in overall_gl
  assert (tmp_path / 'results' / 'a' / 'analyses' / 'kendall' / 'summary.json').exists()
  assert 'MISSED' in readme.read_text()
  assert '| a | kendall | 10 | 2.5 | 4.0 |' in readme.read_text()


def test_benchmark_table_from_the_benchmark_files(tmp_path, capsys):
  row = {'analysis': 'loo', 'docs': 100, 'seconds': 12.0, 'compile_seconds': 2.0,
         'docs_per_second': 10.0, 'peak_rss_mb': 900.0, 'baseline_docs': 8,
         'baseline_docs_per_second': 0.5, 'speedup': 20.0, 'max_abs_difference': 1e-7,
         'vectorised_docs_per_second_on_baseline_docs': 10.0, 'reencode_docs_per_second': 4.0}
  saved = tmp_path / 'bench.json'
  saved.write_text(json.dumps({'workdir': '/w/imdb', 'dataset': 'imdb', 'rows': [row]}))
  readme = tmp_path / 'README.md'
  readme.write_text('<!-- analysis-benchmarks:start -->\n<!-- analysis-benchmarks:end -->\n')
  report.main(['benchmarks', str(saved), '--readme', str(readme)])
  assert '20.0x (2.5x over re-encoding the rows)' in capsys.readouterr().out
  assert '| imdb | loo | 100 | 12.0 (2.0) | 10.0 | 900 | 0.50 on 8 |' in readme.read_text()


def test_model_axis_and_vector_tables_from_their_files(tmp_path, capsys):
  arm = lambda rate, compile_s: {'tokens_per_second': rate, 'compile_seconds': compile_s,
                                 'peak_rss_mb': 900.0, 'rss_before_mb': 800.0}
  bench = tmp_path / 'model_axis.json'
  bench.write_text(json.dumps({'dataset': 'sst', 'rows': [{
      'encoder': 'bilstm', 'models': 5, 'vmap': arm(1000, 10), 'loop': arm(2100, 10),
      'sequential': arm(2000, 50), 'speedup': {'vmap': 0.5, 'loop': 1.05},
      'max_abs_param_difference': {'vmap': 1e-5, 'loop': 0.0}}]}))
  vectors = tmp_path / 'sst_abc.json'
  vectors.write_text(json.dumps({
      'recipe': {'target': 'sst', 'epochs': 5}, 'corpus_tokens': 100,
      'corpus': {'sst': {'documents': 8, 'held_out': 3, 'tokens': 100}},
      'words_with_vectors': 9, 'vocabulary_words': 10, 'coverage': 0.9, 'seconds': 12.0}))
  readme = tmp_path / 'README.md'
  readme.write_text('<!-- model-axis-benchmarks:start --><!-- model-axis-benchmarks:end -->\n'
                    '<!-- vector-coverage:start --><!-- vector-coverage:end -->\n')
  report.main(['model-axis', str(bench), '--readme', str(readme)])
  report.main(['vectors', str(vectors), '--save', str(tmp_path / 'saved'), '--readme', str(readme)])
  text = readme.read_text()
  assert '| sst | bilstm | 5 | shared | 1000 | 2100 | 2000 | 0.50x | 1.05x | 10 / 10 / 50 | +100 / +100 / +100 |' in text
  assert '| sst | fastText CBOW | sst 8 (3) | 100 | 9 of 10 (90.0%) | – | 5 | 12 |' in text
  assert (tmp_path / 'saved' / 'sst.json').exists() and '`saved/sst.json`' in text


def test_train_throughput_table_from_its_file(tmp_path, capsys):
  arm = lambda rates, faults: {'tokens_per_second': rates, 'median_tokens_per_second': rates[1],  # noqa: E731
                               'ms_per_step': [1.0] * 3, 'minor_faults_per_step': faults}
  bench = tmp_path / 'train.json'
  bench.write_text(json.dumps({
      'dataset': 'imdb', 'batches': 40, 'tokens': 1000, 'padded_slots': 1250,
      'peak_rss_mb': {'system': [900.0, 950.0, 920.0], 'kept': [1000.0, 990.0, 1010.0]},
      'rows': [{'encoder': 'bilstm', 'system': arm([90, 100, 110], [40000, 41000, 42000]),
                'kept': arm([120, 150, 160], [0, 5, 0]), 'speedup_per_round': [1.33, 1.5, 1.45],
                'speedup_median': 1.45, 'max_abs_param_difference': 0.0}]}))
  readme = tmp_path / 'README.md'
  readme.write_text('<!-- training-benchmarks:start --><!-- training-benchmarks:end -->\n')
  report.main(['train-throughput', str(bench), '--readme', str(readme)])
  assert '1.45x (1.33–1.50)' in capsys.readouterr().out
  assert ('| – | imdb | bilstm | 40 (1000 / 1250) | 3 | 100 | 150 | 1.45x (1.33–1.50) | 41000 → 0 | '
          '950 / 1010 | 0.0e+00 | – | – | – |') in readme.read_text()  # a record without the FLOP count
  record = json.loads(bench.read_text())
  record['rows'][0]['matmul_gflop_per_step'] = 18.64
  record['rows'][0]['kept'].update(gflops=[150.0, 160.0, 170.0], input_gemm_gflops=[200.0, 210.0, 190.0],
                                   matmul_2048_gflops=[300.0, 280.0, 290.0])
  bench.write_text(json.dumps(record))
  report.main(['train-throughput', str(bench), '--readme', str(readme)])
  assert '| 0.0e+00 | 18.6 | 160 (200; 290) | – |' in readme.read_text()
  record.update(device='cuda:0', cpus=16, gpu_determinism='on')  # a GPU run says how it ran
  bench.write_text(json.dumps(record))
  report.main(['train-throughput', str(bench), '--readme', str(readme)])
  assert readme.read_text().count('| cuda:0, 16 CPUs | imdb | bilstm |') == 1
  assert '| 160 (200; 290) | on |' in readme.read_text()


def test_vector_records_from_the_cache_get_their_mean_norm_and_a_recipe_name(tmp_path, capsys):
  record = {'recipe': {'target': 'imdb', 'epochs': 5, 'sg': 1}, 'corpus_tokens': 100,
            'corpus': {'imdb': {'documents': 8, 'held_out': 3, 'tokens': 100}},
            'words_with_vectors': 2, 'vocabulary_words': 2, 'coverage': 1.0, 'seconds': 3.0}
  (tmp_path / 'imdb_abc.json').write_text(json.dumps(record))
  (tmp_path / 'imdb_abc.vec').write_text('2 2\ngood 3 4\nbad 0 1\n')  # norms 5 and 1
  report.main(['vectors', str(tmp_path / 'imdb_abc.json'), '--save', str(tmp_path / 'saved')])
  assert 'fastText skip-gram' in capsys.readouterr().out
  saved = json.loads((tmp_path / 'saved' / 'imdb_skipgram.json').read_text())
  assert saved['mean_norm'] == 3.0


def _one_line_error(capsys, *argv) -> str:
  with pytest.raises(SystemExit) as stop:
    report.main(list(argv))
  assert stop.value.code == 1
  err = capsys.readouterr().err.strip()
  assert len(err.splitlines()) == 1 and err.startswith('error: ') and 'Traceback' not in err, err
  return err


@pytest.mark.parametrize('command', ['training', 'analyses', 'meister', 'ss', 'wp', 'reproduce'])
def test_every_run_command_on_a_missing_or_unfinished_run_says_so_in_one_line(tmp_path, capsys, command):
  assert 'does not exist' in _one_line_error(capsys, command, str(tmp_path / 'nowhere'))
  run = tmp_path / 'run'
  run.mkdir()
  (run / 'config.json').write_text(json.dumps({'model': {}, 'data': {'dataset': 'sst'}, 'seed': 0}))
  if command != 'wp':  # W&P's saved copies have no eval.json
    assert 'eval.json is missing' in _one_line_error(capsys, command, str(run))
  lock = run / 'training.lease'
  lock.write_text(json.dumps({'what': 'training', 'host': 'far.example', 'pid': 7, 'started': 0, 'token': 't'}))
  if command != 'wp':
    assert 'is still training (host far.example' in _one_line_error(capsys, command, str(run))


@pytest.mark.parametrize('command', ['model-axis', 'state-importance', 'train-throughput', 'vectors'])
def test_every_file_command_on_a_missing_or_damaged_file_says_so_in_one_line(tmp_path, capsys, command):
  assert 'is not a file' in _one_line_error(capsys, command, str(tmp_path / 'nowhere.json'))
  damaged = tmp_path / 'damaged.json'
  damaged.write_text('{"cut')
  assert 'is damaged (JSONDecodeError)' in _one_line_error(capsys, command, str(damaged))


def test_a_benchmark_of_its_own_prints_the_table_its_record_carries(tmp_path, capsys):
  table = {'block': 'toy-benchmarks', 'header': ['L', 'rows/s'], 'rows': [[8, '100'], [16, '60']]}
  record = tmp_path / 'toy.json'
  record.write_text(json.dumps({'device': 'cpu', 'table': table}))
  readme = tmp_path / 'page.md'
  readme.write_text('<!-- toy-benchmarks:start -->\n<!-- toy-benchmarks:end -->\n')
  report.main(['benchmark', str(record), '--readme', str(readme)])
  assert 'rows/s' in capsys.readouterr().out
  assert '| 8 | 100 |' in readme.read_text() and '| 16 | 60 |' in readme.read_text()
  bare = tmp_path / 'bare.json'
  bare.write_text(json.dumps({'device': 'cpu'}))
  with pytest.raises(SystemExit):
    report.main(['benchmark', str(bare)])
  assert 'carries no table' in capsys.readouterr().err


def test_saving_another_model_under_a_saved_name_is_refused_and_the_old_records_kept(tmp_path, capsys):
  run = fake_run(tmp_path, 'sst_bilstm_tanh_softmax', 'sst', 0.8)
  saved = tmp_path / 'results' / 'sst_bilstm'
  report.main(['training', run, '--save', str(tmp_path / 'results'), '--save-as', 'sst_bilstm'])
  kept = saved / 'analyses' / 'gradient' / 'test-10docs-0ld'
  kept.mkdir(parents=True)
  (kept / 'summary.json').write_text('{}')
  report.main(['training', run, '--save', str(tmp_path / 'results'), '--save-as', 'sst_bilstm'])
  assert kept.exists()  # the same model saved again: its saved analyses stay
  config = json.loads((tmp_path / 'sst_bilstm_tanh_softmax' / 'config.json').read_text())
  first_seed, config['seed'] = config['seed'], config['seed'] + 1  # a rerun with other defaults: another model
  (tmp_path / 'sst_bilstm_tanh_softmax' / 'config.json').write_text(json.dumps(config))
  capsys.readouterr()
  with pytest.raises(SystemExit) as exit_:
    report.main(['training', run, '--save', str(tmp_path / 'results'), '--save-as', 'sst_bilstm'])
  err = capsys.readouterr().err
  assert exit_.value.code == 1 and len(err.strip().splitlines()) == 1
  assert 'holds the saved records of another model (seed differ from' in err and '--save-as NAME' in err
  # Nothing of the old model's records was touched; under another name both are kept.
  assert kept.exists() and json.loads((saved / 'config.json').read_text())['seed'] == first_seed
  report.main(['training', run, '--save', str(tmp_path / 'results'), '--save-as', 'sst_bilstm_next'])
  assert json.loads((tmp_path / 'results' / 'sst_bilstm_next' / 'config.json').read_text())['seed'] == first_seed + 1

@pytest.mark.parametrize('command', ['analyses', 'meister'])
def test_a_report_of_runs_without_its_results_says_nothing_to_report_and_fails(tmp_path, capsys, command):
  run = fake_run(tmp_path, 'trained_only', 'sst', 0.8)  # eval.json, no stage or experiment results
  with pytest.raises(SystemExit) as exit_:
    report.main([command, run])
  err = capsys.readouterr().err
  assert exit_.value.code == 1 and len(err.strip().splitlines()) == 1
  assert err.startswith(f'error: nothing to report: {run} holds no '), err


def test_a_study_report_of_a_root_without_its_arms_names_what_is_there(tmp_path, capsys):
  from attn_jax.studies import __main__ as studies_cli  # pylint: disable=g-import-not-at-top
  root = tmp_path / 'jw_grid'
  (root / 'sst_bilstm_tanh-smoke' / 'seed0').mkdir(parents=True)
  (root / 'sst_bilstm_tanh-smoke' / 'seed0' / 'eval.json').write_text(json.dumps({'accuracy': 0.5}))
  with pytest.raises(SystemExit) as exit_:
    studies_cli.main(['report', 'jw_grid', f'--root={root}'])
  err = capsys.readouterr().err
  assert exit_.value.code != 0 and len(err.strip().splitlines()) == 1
  assert 'nothing to report' in err and 'sst_bilstm_tanh-smoke' in err and '--variant' in err
