"""Meister et al.'s tables, measured beside published (Meister et al. Tables 1–6).

    python -m attn_jax.report meister RUN ... [--save results/meister] [--readme FILE]

Each RUN is a base model's workdir (or `--output_dir`, or the copy `--save`
writes): its `importance` and `state_importance` stage summaries, its
`sparsegen_sweep` and `adversary_regimes` experiment summaries and its
eval.json / config.json (dataset, encoder, projection). Makes the README
blocks `meister-table1` (entropy of g_{h_p}(x)), `meister-table6` (τ of α
with each importance measure), `meister-table2` and `meister-sweep` (the λ
grid), `meister-table3` (accuracy), `meister-table5` (frozen and unfrozen
adversaries) and `meister-wall-time`; the qualitative checks go below the
tables they are about.
"""

import os

from attn_jax.analysis import measure
from attn_jax.core import atomic_io, errors
from attn_jax.core.registry import EXPERIMENTS, STAGES
from attn_jax.papers import published
from attn_jax.tables import render
from attn_jax.tables.common import (check_markers, load_experiment_summaries, load_run, publish, save_experiment_run,
                                     save_summary, saved_runs)
from attn_jax.tables.report_registry import (COMMANDS, SECTIONS, TABLES, Command, PaperSections, Table, blocks,
                                              made_tables, titles)
from attn_jax.stages import stage_store
from attn_jax.stages import importance as importance_stage

MEAN_CLOSE = 0.05  # a mean within this of Meister's is "as published" (Tables 1, 3, 5)
TAU_CLOSE = 0.10   # Table 6: τ means within this (their spread over documents is 0.05-0.28)
HIGH_ENTROPY = 0.5  # qualitative (i): H̃(g_{h_p}(x)) high for every projection
# {'g_y_x': 'g_ŷ(x)', ...}: the importance stage's measures' columns, from their records (read when used).
NAMES = measure.Labels('importance')
TABLE6 = importance_stage.IMPORTANCE_KEYED  # Meister's Table 6 columns: the measures of their claims


def shown(taus: list) -> list:
  """The importance measures a table shows: Table 6's four, and any other
  registered for the stage that one of `taus` ({measure: τ}) has, in registry order."""
  return [m for m in importance_stage.measures() if m in TABLE6 or any(m in t for t in taus)]


def _f(x, digits: int = 2) -> str:
  return '–' if x is None else f'{x:.{digits}f}'


def _verdict(measured, paper, tolerance: float) -> str:
  if paper is None or measured is None:
    return 'no published number'
  return 'as published' if abs(measured - paper) <= tolerance else f'MISSED (Δ {measured - paper:+.2f})'


def load(path: str) -> dict:
  """A run: name, dataset, encoder, projection, accuracy, and its stage and
  experiment summaries."""
  run = load_run(path)
  config = atomic_io.read_json(os.path.join(path, 'config.json'))
  stages = {}
  for stage in (s.name for s in STAGES.of_paper('meister')):
    found = stage_store.most_complete(path, stage)
    if found is not None:
      stages[stage] = found.summary
  return {'name': run['name'], 'path': path, 'dataset': run['dataset'],
          'encoder': config['model']['encoder'], 'projection': config['model']['projection'],
          'accuracy': run['results'].get('accuracy'), 'embeddings': run['embed_init'], 'stages': stages,
          'experiments': load_experiment_summaries(path)}


def model_key(run: dict) -> str:
  return f'{run["encoder"]}_{run["projection"]}'


def table1_rows(runs: list) -> list[list[str]]:
  rows = [['dataset', 'model', 'run', 'H̃(g_{h_p}(x)) mean ± std (Meister)', 'per-document mean',
           'verdict', 'pairs']]
  for r in runs:
    s = r['stages'].get('state_importance')
    if s is None:
      continue
    cell = s['table1'][s['last_layer']]
    paper = published.MEISTER_TABLE1.get((r['dataset'], model_key(r)))
    rows.append([r['dataset'], model_key(r), r['name'],
                 f'{_f(cell["mean"])} ± {_f(cell["std"])} ({_f(paper and paper[0])} ± {_f(paper and paper[1])})',
                 f'{_f(cell["doc_mean"])} ± {_f(cell["doc_std"])}',
                 _verdict(cell['mean'], paper and paper[0], MEAN_CLOSE), str(cell['n_pairs'])])
  return rows


def table1_notes(runs: list) -> list[str]:
  notes = []
  for r in runs:
    s = r['stages'].get('state_importance')
    if s is None:
      continue
    means = {k: v['mean'] for k, v in s['table1'].items()}
    high = all(m is not None and m >= HIGH_ENTROPY for m in means.values())
    layers = ', '.join(f'{k} {_f(m)}' for k, m in means.items())
    notes.append(f'{r["name"]}: H̃ ≥ {HIGH_ENTROPY} ({layers}): {"yes" if high else "NO"} '
                 '(Meister: high for every projection)')
  return notes


def table6_rows(runs: list) -> list[list[str]]:
  measures = shown([r['stages']['importance']['tau'] for r in runs if 'importance' in r['stages']])
  rows = [['dataset', 'model', 'run'] + [f'τ(α, {NAMES[m]}) (Meister)' for m in measures] + ['verdict']]
  for r in runs:
    s = r['stages'].get('importance')
    if s is None:
      continue
    paper = published.MEISTER_TABLE6.get((r['dataset'], model_key(r)), {})
    cells, missed = [], []
    for m in measures:
      t, p = s['tau'].get(m), paper.get(m)
      if t is None:  # a measure registered since this run was analysed
        cells.append('–')
        continue
      cells.append(f'{_f(t["nanmean"])} ± {_f(t["nanstd"])} ({_f(p and p[0])} ± {_f(p and p[1])})')
      if p is not None and abs(t['nanmean'] - p[0]) > TAU_CLOSE:
        missed.append(NAMES[m])
    verdict = ('no published number' if not paper else
               'as published' if not missed else 'MISSED: ' + ', '.join(missed))
    rows.append([r['dataset'], model_key(r), r['name']] + cells + [verdict])
  return rows


def table6_notes(runs: list) -> list[str]:
  notes = []
  for r in runs:
    s = r['stages'].get('importance')
    if s is None:
      continue
    tau = {m: s['tau'][m]['nanmean'] for m in TABLE6}
    intermediate, inputs = max(tau['g_y_i'], tau['d_y_i']), max(tau['g_y_x'], tau['d_y_x'])
    notes.append(f'{r["name"]}: τ with intermediate importance {"≫" if intermediate > inputs + 0.2 else "not ≫"} '
                 f'τ with input importance ({_f(intermediate)} vs {_f(inputs)}); '
                 f'{s["alpha_zero_fraction"]:.0%} of words get α = 0; '
                 f'H̃(g_ŷ(x)) {_f(s["entropy"]["g_y_x"]["nanmean"])}, H̃(α) {_f(s["entropy"]["alpha"]["nanmean"])}')
  by_model = {}  # the first run listed of each model: later ones are variants of its recipe
  for r in runs:
    if 'importance' in r['stages']:
      by_model.setdefault((r['dataset'], r['encoder'], r['projection']), r)
  for (dataset, encoder, projection), r in sorted(by_model.items()):
    soft = by_model.get((dataset, encoder, 'softmax'))
    if projection == 'sparsemax' and soft is not None:
      h_sparse = r['stages']['importance']['entropy']['g_y_x']['nanmean']
      h_soft = soft['stages']['importance']['entropy']['g_y_x']['nanmean']
      falls = h_sparse < h_soft - 0.02
      notes.append(f'{dataset} {encoder}: input-importance entropy {"FALLS" if falls else "does not fall"} '
                   f'with sparsemax ({_f(h_soft)} softmax → {_f(h_sparse)} sparsemax; Meister: does not fall)')
  return notes


def table2_rows(runs: list) -> list[list[str]]:
  rows = [['dataset', 'encoder', 'run', 'λ values', 'Pearson r(λ, H̃(g_ŷ(x))) (Meister)', 'Spearman ρ',
           'r(λ, τ(α, g_ŷ(x)))', 'verdict']]
  for r in runs:
    s = r['experiments'].get('sparsegen_sweep')
    if s is None or not s.get('correlation'):
      continue
    c = s['correlation']
    paper = published.MEISTER_TABLE2.get((r['dataset'], r['encoder']))
    value = c['pearson_lambda_entropy_g_y_x']
    sign = 'negative, as published' if value < 0 else 'MISSED: not negative'
    rows.append([r['dataset'], r['encoder'], r['name'], str(c['models']), f'{value:.3f} ({_f(paper, 3)})',
                 f'{c["spearman_lambda_entropy_g_y_x"]:.3f}', f'{c["pearson_lambda_tau_g_y_x"]:.3f}',
                 f'{sign}; {_verdict(value, paper, 0.1)}'])
  return rows


def sweep_rows(runs: list) -> list[list[str]]:
  sweeps = [r['experiments']['sparsegen_sweep'] for r in runs if r['experiments'].get('sparsegen_sweep')]
  measures = shown([x['tau'] for s in sweeps for x in (s['base'], *s['rows']) if 'tau' in x])
  rows = [['run', 'λ', 'accuracy', 'H̃(g_ŷ(x))', 'H̃(α)', 'α = 0'] + [f'τ(α, {NAMES[m]})' for m in measures]]
  for r in runs:
    s = r['experiments'].get('sparsegen_sweep')
    if s is None:
      continue
    base = s['base']
    points = [(f'{base["projection"]} (base)', base)] + [(f'{x["lambda"]:g}', x) for x in s['rows']]
    for label, x in points:
      if 'failed' in x:
        rows.append([r['name'], label, 'failed'] + [''] * 8)
        continue
      rows.append([r['name'], label, _f(x['accuracy'], 3), _f(x['entropy_g_y_x'], 3),
                   _f(x['entropy_alpha'], 3), f'{x["alpha_zero_fraction"]:.0%}']
                  + [_f(x['tau'].get(m)) for m in measures])
  return rows


def table3_rows(runs: list) -> list[list[str]]:
  # The embeddings column keeps runs made before and after a default changed
  # (CBOW -> skip-gram vectors, 2026-11-25) from being compared unawares.
  rows = [['dataset', 'model', 'run', 'embeddings', 'test accuracy (Meister, softmax)', 'verdict']]
  for r in runs:
    paper = published.MEISTER_TABLE3.get((r['dataset'], r['encoder']))
    verdict = _verdict(r['accuracy'], paper, MEAN_CLOSE) if r['projection'] == 'softmax' else '(Meister: softmax only)'
    rows.append([r['dataset'], model_key(r), r['name'], r.get('embeddings', '–'),
                 f'{_f(r["accuracy"], 3)} ({_f(paper)})', verdict])
  return rows


def table5_rows(runs: list) -> list[list[str]]:
  rows = [['dataset', 'encoder', 'run', 'regime', 'λ (chosen on train)', 'JSD (Meister)',
           'accuracy (Meister)', 'Δ accuracy (Meister)', 'verdict']]
  for r in runs:
    s = r['experiments'].get('adversary_regimes')
    if s is None:
      continue
    for regime, entry in s['regimes'].items():
      x = entry['chosen']
      paper = published.MEISTER_TABLE5.get((r['dataset'], r['encoder'], regime))
      jsd_ok = paper is not None and abs(x['mean_jsd'] - paper[0]) <= MEAN_CLOSE
      acc_ok = paper is not None and abs(x['accuracy'] - paper[1]) <= MEAN_CLOSE
      verdict = ('no published number' if paper is None else 'as published' if jsd_ok and acc_ok
                 else 'MISSED: ' + ', '.join(n for n, ok in (('JSD', jsd_ok), ('accuracy', acc_ok)) if not ok))
      rows.append([r['dataset'], r['encoder'], r['name'], regime, f'{entry["chosen_lambda"]:g}',
                   f'{x["mean_jsd"]:.2f} ({_f(paper and paper[0])})',
                   f'{x["accuracy"]:.2f} ({_f(paper and paper[1])})',
                   f'{x["delta_accuracy"]:+.2f} ({"–" if paper is None else f"{paper[2]:+.2f}"})', verdict])
  return rows


def table5_notes(runs: list) -> list[str]:
  """Every λ of each regime, not only the chosen one: Meister do not say how
  they chose λ, and the frozen regime's trade-off is all in the other rows."""
  notes = []
  for r in runs:
    s = r['experiments'].get('adversary_regimes')
    if s is None:
      continue
    settings = s.get('key', {}).get('settings', {})
    for regime, entry in s['regimes'].items():
      each = '; '.join(f'λ {x["lambda"]:g}: JSD {x["mean_jsd"]:.2f}, accuracy {x["accuracy"]:.2f} '
                       f'({x["delta_accuracy"]:+.2f}), train TVD {x["train_mean_tvd"]:.3f}'
                       for x in entry['rows'])
      notes.append(f'{r["name"]} {regime} ({settings.get("epochs", "?")} epochs, patience '
                   f'{settings.get("patience", "?")}; chosen: {entry.get("why", "?")}): {each}')
  return notes


def wall_time_rows(runs: list) -> list[list[str]]:
  rows = [['run', 'dataset', 'model', 'what', 'documents', 'seconds']]
  for r in runs:
    for stage in (e.name for e in STAGES.of_paper('meister')):
      s = r['stages'].get(stage)
      if s is not None:
        rows.append([r['name'], r['dataset'], model_key(r), f'stage {stage}', str(s.get('documents', '?')),
                     f'{s.get("seconds", 0):.1f}'])
    for name in (e.name for e in EXPERIMENTS.of_paper('meister')):
      s = r['experiments'].get(name)
      if s is not None:
        rows.append([r['name'], r['dataset'], model_key(r), f'experiment {name}', str(s.get('n', '?')),
                     f'{s.get("seconds", 0):.1f}'])
  return rows


# The tables, in the order they print: adding one is a registration here.
TABLES.register(Table('meister-table1', 'paper', 10, table1_rows, paper='meister', command='meister',
                      title='Meister Table 1: entropy of g_{h_p}(x)', notes=table1_notes))
TABLES.register(Table('meister-table6', 'paper', 20, table6_rows, paper='meister', command='meister',
                      title='Meister Table 6: τ of α with each importance measure', notes=table6_notes))
TABLES.register(Table('meister-table2', 'paper', 30, table2_rows, paper='meister', command='meister',
                      title='Meister Table 2: sparsegen λ against input-importance entropy'))
TABLES.register(Table('meister-sweep', 'paper', 40, sweep_rows, paper='meister', command='meister',
                      title='The sparsegen λ grid, model by model'))
TABLES.register(Table('meister-table3', 'paper', 50, table3_rows, paper='meister', command='meister',
                      title='Meister Table 3: test accuracy'))
TABLES.register(Table('meister-table5', 'paper', 60, table5_rows, paper='meister', command='meister',
                      title='Meister Table 5: frozen and unfrozen adversaries', notes=table5_notes))
TABLES.register(Table('meister-wall-time', 'paper', 70, wall_time_rows, paper='meister', command='meister',
                      title='Wall time of Meister\'s stages and experiments'))


def tables(runs: list) -> dict:
  """README block -> (rows, notes)."""
  return made_tables('meister', runs)


def save(run: dict, directory: str) -> str:
  """Copies a run's small files, stage summaries (with figures) and experiment
  summaries to `<directory>/<name>/`; returns that folder."""
  target = save_experiment_run(run['path'], os.path.basename(os.path.normpath(run['path'])),
                            run['experiments'], directory)
  for stage, summary in run['stages'].items():
    save_summary(run['path'], target, os.path.join('analyses', stage), summary, stage_store.SUMMARY)
  return target


def write(paths: list[str], save_to=None, readme=None) -> dict:
  """Prints the tables for the runs at `paths` (from `save_to` after copying
  there, if given) and rewrites their README blocks; returns {block: (rows, notes)}."""
  if readme:
    check_markers(readme, blocks('meister'))
  paths, runs = saved_runs(paths, save_to, load, save)
  if not any(run['stages'] or run['experiments'] for run in runs):  # test accuracy alone is not Meister's report
    raise errors.NothingToReport(
        f'nothing to report: {", ".join(paths)} hold{"s" if len(paths) == 1 else ""} no results of Meister et al.\'s '
        'stages or experiments (importance, state_importance; sparsegen_sweep, adversary_regimes): run them first '
        '(python run.py ... --config.analyses=importance,state_importance), or give runs that hold them')
  return publish(tables(runs), 'meister', paths, ('analyses', 'experiments'), readme)


def _command(parser, args, argv) -> None:
  del parser, argv
  write(args.runs, args.save, args.readme)


COMMANDS.register(Command('meister', 50, 'RUN ... [--save results/meister]',
                          "Meister et al.'s Tables 1, 2, 3, 5 and 6 beside theirs", _command, papers=('meister',)))

def _holds(r) -> bool:
  return any(r.of_paper('meister'))


def _sections(runs) -> list[render.Section]:
  chosen = [load(r.path) for r in runs if _holds(r)]
  return render.paper_sections('Meister et al.', tables(chosen), titles('meister')) if chosen else []


SECTIONS.register(PaperSections(
    'meister', 'meister', 40, _sections,
    missing=lambda runs: None if any(_holds(r) for r in runs) else (
        'Meister et al.: no run holds their stages or experiments (`--config.analyses='
        + ','.join(s.name for s in STAGES.of_paper('meister')) + '`, `--config.experiments='
        + ','.join(e.name for e in EXPERIMENTS.of_paper('meister')) + '`)'),
    ran=lambda r: ', '.join(sum(r.of_paper('meister'), [])) or 'not run'))
