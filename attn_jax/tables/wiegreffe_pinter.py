"""The W&P experiments' numbers beside Wiegreffe & Pinter's (W&P Tables 2 and 3).

    python -m attn_jax.report wp RUN ... [--save results/wp] [--readme FILE]

Reads each run's experiment summaries (`attn_jax.experiments.experiment_store`, or the
copies `--save` writes) and makes six tables, each a README block: W&P
Table 2 (uniform attention, `wp-table2`), Table 3 (the MLP with guide
attention, `wp-table3`), the ADVERSARY guide along λ (`wp-adversary-guides`:
the MLP guided by each λ's adversary, `experiment.guides.every_adversary`),
the consistent adversary's λ sweep
(`wp-lambda-sweep`), seed variance against J&W's adversary (`wp-seeds`) and
each experiment's wall time (`wp-wall-time`). The row functions take
`runs`: [(run name, dataset, {experiment: summary})].
"""

import os

from attn_jax.core import atomic_io, errors
from attn_jax.core.registry import EXPERIMENTS
from attn_jax.papers import published
from attn_jax.tables import render
from attn_jax.tables.common import (check_markers, load_experiment_summaries, load_run, no_results_reason, publish,
                                     save_experiment_run)
from attn_jax.tables.report_registry import (COMMANDS, SECTIONS, TABLES, Command, PaperSections, Table, blocks,
                                              made_tables, titles)

UNIFORM_CLOSE = 0.02  # W&P's reading of Table 2: uniform F1 within this of learned
FAR_BELOW = 0.10      # Table 3: an adversary guide this much below the base guide is "far below"
SEED_NEAR_ZERO = 0.1  # seed-variance median JSD at most this is "near 0" (W&P Fig. 3)
ADVERSARY_NEAR = 0.1  # J&W's adversary max JSD within this of J&W's ≈0.5 is "as published"
MONOTONE_SLACK = 1e-3  # JSD falls within the printed precision (3 decimals) do not break monotonicity
JW_ADVERSARY_TYPICAL = 0.5  # J&W's adversary max JSD where no dataset-specific value is published
GUIDE_NAMES = {'uniform': 'UNIFORM', 'trained_mlp': 'Trained MLP', 'base': 'Base LSTM',
               'adversary': 'ADVERSARY'}


def _f(x, digits: int = 3) -> str:
  return '–' if x is None else f'{x:.{digits}f}'


def source_label(summary: dict) -> str:
  """Which results a row comes from: test documents, split and key."""
  key = summary.get('key')
  key = key.get('hash', '?') if isinstance(key, dict) else (key or '?')
  return f'{summary.get("n", "?")} {summary.get("split", "?")} docs, key {str(key)[:8]}'


def table2_verdict(delta: float, paper_delta) -> str:
  """Whether uniform attention is within UNIFORM_CLOSE of learned F1, and
  whether W&P found the same; MISSED when the two readings differ."""
  close = abs(delta) <= UNIFORM_CLOSE
  measured = (f'uniform within {UNIFORM_CLOSE} of learned' if close
              else f'uniform {abs(delta):.3f} {"below" if delta > 0 else "above"} learned')
  if paper_delta is None:
    return measured + ' (no W&P number)'
  paper_close = abs(paper_delta) <= UNIFORM_CLOSE
  return (('as W&P' if close == paper_close else 'MISSED') + f': {measured}; W&P Δ {paper_delta:.3f}')


def table2_rows(runs: list) -> list[list[str]]:
  """W&P Table 2: the base model's F1 (W&P's 'attention') and its uniform twin's."""
  rows = [['dataset', 'run', 'learned F1 (W&P attention)', 'uniform F1 (W&P)', 'Δ learned − uniform (W&P)',
           'verdict', 'from (documents, key)']]
  for name, dataset, summaries in runs:
    s = summaries.get('uniform')
    if s is None:
      continue
    paper = published.WIEGREFFE_PINTER_TABLE2.get(dataset, {})
    learned, uniform = s['learned']['f1_pos'], s['uniform']['f1_pos']
    delta = s.get('f1_difference', learned - uniform)
    paper_delta = paper['attention'] - paper['uniform'] if paper else None
    paper_cell = '–' if paper_delta is None else f'{paper_delta:+.3f}'
    rows.append([dataset, name, f'{learned:.3f} ({_f(paper.get("attention"))})',
                 f'{uniform:.3f} ({_f(paper.get("uniform"))})', f'{delta:+.3f} ({paper_cell})',
                 table2_verdict(delta, paper_delta), source_label(s)])
  return rows


def table3_verdict(rows_by_guide: dict, paper: dict) -> str:
  """The adversary guide's drop below the base guide: 'far' when >= FAR_BELOW."""
  if 'adversary' not in rows_by_guide or 'base' not in rows_by_guide:
    return ''
  drop = rows_by_guide['base']['f1_pos'] - rows_by_guide['adversary']['f1_pos']
  paper_drop = paper['base'] - paper['adversary'] if {'base', 'adversary'} <= paper.keys() else None
  note = f'; W&P {paper_drop:.3f} below' if paper_drop is not None else ''
  if drop >= FAR_BELOW:
    return f'as W&P: adversary guide {drop:.3f} below base guide (≥ {FAR_BELOW}){note}'
  return f'MISSED: adversary guide only {drop:+.3f} below base guide (< {FAR_BELOW}){note}'


def table3_rows(runs: list) -> list[list[str]]:
  """W&P Table 3: the diagnostic MLP's F1 with each guide's attention imposed."""
  rows = [['dataset', 'run', 'guide weights', 'F1 (W&P)', 'accuracy', 'ROC-AUC', 'verdict',
           'from (documents, key)']]
  for name, dataset, summaries in runs:
    s = summaries.get('guides')
    if s is None:
      continue
    paper = published.WIEGREFFE_PINTER_TABLE3.get(dataset, {})
    by_guide = {r['guide']: r for r in s['rows']}
    for guide in (g for g in GUIDE_NAMES if g in by_guide):  # other λ: `adversary_guide_rows`
      r = by_guide[guide]
      label = GUIDE_NAMES.get(guide, guide)
      if guide == 'adversary' and s.get('adversary_lambda') is not None:
        label += f' (λ = {s["adversary_lambda"]:g})'
      rows.append([dataset, name, label, f'{r["f1_pos"]:.3f} ({_f(paper.get(guide))})',
                   _f(r.get('accuracy')), _f(r.get('roc_auc')),
                   table3_verdict(by_guide, paper) if guide == 'adversary' else '', source_label(s)])
  return rows


def adversary_guide_rows(runs: list) -> list[list[str]]:
  """The MLP guided by each trained λ's adversary (the chosen one, and the
  others with `experiment.guides.every_adversary`): its F1 beside how far
  that adversary's attention is from the base model's (JSD, train and test)
  and its predictions (TVD ½|Δp|)."""
  rows = [['dataset', 'run', 'adversary λ', 'adversary train JSD', 'adversary test JSD',
           'adversary test TVD ½∣Δp∣', 'guided F1 (W&P ADVERSARY)', 'guided accuracy', 'chosen',
           'max α (base)', 'mass shared with base', 'same top word as base',
           'top words (share of documents)', 'from (documents, key)']]
  for name, dataset, summaries in runs:
    s = summaries.get('guides')
    if s is None:
      continue
    paper = published.WIEGREFFE_PINTER_TABLE3.get(dataset, {}).get('adversary')
    guided = [r for r in s['rows'] if r['guide'].startswith('adversary')]
    sweep = (summaries.get('consistent_adversary') or {}).get('rows', [])
    base = next((r.get('attention_focus') for r in s['rows'] if r['guide'] == 'base'), None)
    for r in sorted(guided, key=lambda r: r.get('adversary_lambda', s['adversary_lambda'])):
      lam = r.get('adversary_lambda', s['adversary_lambda'])
      # Summaries from before the guides recorded their adversary's numbers:
      # the same run's λ sweep has them.
      own = next((a for a in sweep if abs(a['lambda'] - lam) <= 1e-12 * max(1.0, lam)), {})
      of = {k: r.get(f'adversary_{k}', own.get(k)) for k in ('train_mean_jsd', 'mean_jsd', 'mean_tvd')}
      rows.append([dataset, name, f'{lam:g}', _f(of['train_mean_jsd']), _f(of['mean_jsd']),
                   _f(of['mean_tvd']),
                   f'{r["f1_pos"]:.3f} ({_f(paper)})', _f(r.get('accuracy')),
                   'yes' if r['guide'] == 'adversary' else '', *_focus_cells(r.get('attention_focus'), base),
                   source_label(s)])
  return rows


def _focus_cells(focus, base) -> list[str]:
  """Where an adversary's test attention sits (`guides.focus_summary`) beside
  the base model's; '–' for summaries from before it was recorded."""
  if focus is None:
    return ['–'] * 4
  words = ', '.join(f'{w} {share:.0%}' for w, share in focus['argmax_words'][:3])
  base_words = '' if base is None else ' (base: ' + ', '.join(
      f'{w} {share:.0%}' for w, share in base['argmax_words'][:3]) + ')'
  return [f'{focus["mean_max_alpha"]:.2f} ({_f(base and base["mean_max_alpha"], 2)})',
          f'{focus["mean_shared_mass"]:.2f}', f'{focus["same_argmax_share"]:.0%}', words + base_words]


def trained_rows(summary: dict) -> list[dict]:
  """The λ sweep's rows in λ order, without those whose training diverged."""
  return sorted((r for r in summary['rows'] if 'failed' not in r), key=lambda r: r['lambda'])


def sweep_verdict(summary: dict) -> str:
  """Whether the adversaries' test JSD grows with λ, and whether monotonically."""
  rows = trained_rows(summary)
  jsd = [r['mean_jsd'] for r in rows]
  if len(jsd) < 2:
    return 'fewer than two trained λ: no trend'
  span = f'JSD {jsd[0]:.3f} at λ = {rows[0]["lambda"]:g} → {jsd[-1]:.3f} at λ = {rows[-1]["lambda"]:g}'
  # A fall within the table's rounding (JSD saturating near ln 2) is no fall.
  falls = [rows[i + 1]['lambda'] for i in range(len(jsd) - 1) if jsd[i + 1] < jsd[i] - MONOTONE_SLACK]
  if jsd[-1] <= jsd[0]:
    return f'MISSED: JSD does not grow with λ ({span})'
  if not falls:
    return f'as W&P: JSD grows with λ, monotonically ({span})'
  return ('as W&P: JSD grows with λ, not monotonically: it falls at λ = '
          + ', '.join(f'{l:g}' for l in falls) + f' ({span})')


def sweep_rows(runs: list) -> list[list[str]]:
  """The consistent adversary's λ sweep (W&P Fig. 5 / Table 5): test F1, TVD
  (W&P's ½|Δp| and |Δp|) and JSD to the base model; the base model and J&W's
  per-instance adversary as reference rows."""
  # ∣ (U+2223), not |: a | would split the README's markdown cell.
  rows = [['dataset', 'run', 'λ', 'F1', 'TVD ½∣Δp∣', '∣Δp∣', 'JSD', 'selected epoch (1 = first)',
           'epochs trained', 'from (documents, key)']]
  for name, dataset, summaries in runs:
    s = summaries.get('consistent_adversary')
    if s is None:
      continue
    source = source_label(s)
    base = s.get('base')
    if base:
      rows.append([dataset, name, 'base model', _f(base.get('f1_pos')), '0', '0', '0', '', '', source])
    for r in sorted(s['rows'], key=lambda r: r['lambda']):
      if 'failed' in r:
        rows.append([dataset, name, f'{r["lambda"]:g}', 'diverged (non-finite loss)', '–', '–', '–', '', '',
                     source])
        continue
      rows.append([dataset, name, f'{r["lambda"]:g}', _f(r['f1_pos']), _f(r['mean_tvd']),
                   _f(r.get('mean_abs_dp')), _f(r['mean_jsd']), str(r['selected_epoch'] + 1),
                   str(r.get('epochs_trained', '–')), source])
    jw = s.get('jw_adversary')
    if jw:
      rows.append([dataset, name, f'J&W adversary ({jw.get("n", "?")} docs)', '–', _f(jw['mean_tvd']), '–',
                   _f(jw['mean_jsd']), '', '', source])
  return rows


def sweep_notes(runs: list) -> list[str]:
  return [f'{name} ({dataset}): {sweep_verdict(summaries["consistent_adversary"])}'
          for name, dataset, summaries in runs if 'consistent_adversary' in summaries]


def seed_verdict(summary: dict, dataset: str) -> str:
  """Seed JSD near 0 (median <= SEED_NEAR_ZERO) while J&W's adversary sits
  near J&W's published max JSD (≈0.5), as in W&P Fig. 3."""
  median = summary['median_jsd']['median']
  parts = [f'seed JSD {"near 0" if median <= SEED_NEAR_ZERO else "NOT near 0"} '
           f'(median {median:.3f} {"≤" if median <= SEED_NEAR_ZERO else ">"} {SEED_NEAR_ZERO})']
  ok = median <= SEED_NEAR_ZERO
  jw = summary.get('jw_adversary')
  if jw:
    paper = published.JAIN_WALLACE_ADVERSARIAL.get(dataset)
    target = sum(v[0] for v in paper.values()) / len(paper) if paper else JW_ADVERSARY_TYPICAL
    near = abs(jw['mean_max_jsd'] - target) <= ADVERSARY_NEAR
    ok = ok and near
    parts.append(f'J&W adversary {jw["mean_max_jsd"]:.3f} {"≈" if near else "NOT ≈"} {target:.2f}')
  else:
    parts.append('no J&W adversary to compare')
  return ('as W&P: ' if ok else 'MISSED: ') + ', '.join(parts)


def seed_rows(runs: list) -> list[list[str]]:
  """Seed variance (W&P §3.3): per-instance median over seeds of
  JSD(α_base, α_seed) against J&W's adversary's max JSD on the same documents."""
  rows = [['dataset', 'run', 'seeds', 'median seed JSD: median (q10–q90)', 'share < 0.1',
           'mean ∣ŷ_seed − ŷ_base∣', 'seed models F1 (mean ± std)', 'J&W adversary mean max JSD (J&W)',
           'verdict', 'from (documents, key)']]
  for name, dataset, summaries in runs:
    s = summaries.get('seeds')
    if s is None:
      continue
    m = s['median_jsd']
    jw = s.get('jw_adversary')
    paper = published.JAIN_WALLACE_ADVERSARIAL.get(dataset)
    paper_cell = ' / '.join(f'≈{v[0]:.2f}' for v in paper.values()) if paper else '–'
    f1 = s.get('seed_models', {}).get('f1_pos')
    rows.append([dataset, name, str(len(s['seeds'])), f'{m["median"]:.3f} ({m["q10"]:.3f}–{m["q90"]:.3f})',
                 _f(m.get('fraction_below_0.1'), 2), _f(s['y_diff']['mean']),
                 f'{f1["mean"]:.3f} ± {f1["std"]:.3f}' if f1 else '–',
                 (f'{jw["mean_max_jsd"]:.3f} on {jw["n"]} docs' if jw else '–') + f' ({paper_cell})',
                 seed_verdict(s, dataset), source_label(s)])
  return rows


def wall_time_rows(runs: list) -> list[list[str]]:
  """Each experiment's recorded time and its share of the run's W&P suite."""
  rows = [['run', 'experiment', 'minutes', 'of which training', 'share of the suite', 'from (documents, key)']]
  for name, _, summaries in runs:
    total = sum(s.get('seconds', 0.0) for s in summaries.values())
    for experiment, s in summaries.items():
      seconds = s.get('seconds')
      training = s.get('training_seconds')
      rows.append([name, experiment, _f(None if seconds is None else seconds / 60, 1),
                   _f(None if training is None else training / 60, 1),
                   f'{seconds / total:.0%}' if seconds is not None and total > 0 else '–', source_label(s)])
    if len(summaries) > 1:
      rows.append([name, 'all', _f(total / 60, 1), _f(sum(s.get('training_seconds', 0.0)
                                                         for s in summaries.values()) / 60, 1), '100%', ''])
  return rows


# ---------------------------------------------------------------- files

def load(path: str) -> tuple[str, str, dict]:
  """(run name, dataset, summaries) of a run folder or a saved copy."""
  if not os.path.isdir(path):
    raise errors.AttnJaxError(no_results_reason(path))
  summaries = load_experiment_summaries(path)
  if os.path.exists(os.path.join(path, 'eval.json')):
    run = load_run(path)
    return run['name'], run['dataset'], summaries
  config = os.path.join(path, 'config.json')
  dataset = (atomic_io.read_json(config)['data']['dataset'] if os.path.exists(config)
             else next((s['dataset'] for s in summaries.values() if 'dataset' in s), '?'))
  return os.path.basename(os.path.normpath(path)), dataset, summaries


def table3_notes(runs: list) -> list[str]:
  """How each run's adversary guide was chosen."""
  return [f'{name} ({dataset}): ADVERSARY guide λ = {s["adversary_lambda"]:g}: {s.get("adversary_choice", "?")}'
          for name, dataset, summaries in runs if (s := summaries.get('guides')) is not None]


# The tables, in the order they print: adding one is a registration here.
TABLES.register(Table('wp-table2', 'paper', 10, table2_rows, paper='wp', command='wp',
                      title='W&P Table 2: F1 with learned and with uniform attention'))
TABLES.register(Table('wp-table3', 'paper', 20, table3_rows, paper='wp', command='wp',
                      title='W&P Table 3: the diagnostic MLP with each guide\'s attention', notes=table3_notes))
TABLES.register(Table('wp-adversary-guides', 'paper', 30, adversary_guide_rows, paper='wp', command='wp',
                      title='The ADVERSARY guide along λ: guided F1 against the adversary\'s JSD'))
TABLES.register(Table('wp-lambda-sweep', 'paper', 40, sweep_rows, paper='wp', command='wp',
                      title='W&P Figure 5 / Table 5: the model-consistent adversary along λ', notes=sweep_notes))
TABLES.register(Table('wp-seeds', 'paper', 50, seed_rows, paper='wp', command='wp',
                      title='W&P Figure 3: seed variance against J&W\'s adversary'))
TABLES.register(Table('wp-wall-time', 'paper', 60, wall_time_rows, paper='wp', command='wp',
                      title='Wall time of the W&P experiments'))


def tables(runs: list) -> dict:
  """README block -> (rows, notes below the table)."""
  return made_tables('wp', runs)


def write(paths: list[str], save_to=None, readme=None) -> dict:
  """Prints the six tables for the runs at `paths` (from `save_to` after
  copying there, if given) and rewrites their README blocks; returns
  {block: (rows, notes)}."""
  if readme:
    check_markers(readme, blocks('wp'))
  runs = [load(p) for p in paths]
  empty = [p for p, (_, _, summaries) in zip(paths, runs) if not summaries]
  if empty:
    raise errors.NothingToReport(
        f'{empty[0]} holds no W&P experiment results (still training, killed before them, or run without '
        '--config.experiments=' + ','.join(e.name for e in EXPERIMENTS.of_paper('wp'))
        + '): rerun it with them, or give a run that has them')
  if save_to:
    paths = [save_experiment_run(p, name, summaries, save_to) for p, (name, _, summaries) in zip(paths, runs)]
    runs = [load(p) for p in paths]
  return publish(tables(runs), 'wp', paths, ('experiments',), readme)


def _command(parser, args, argv) -> None:
  del parser, argv
  write(args.runs, args.save, args.readme)


COMMANDS.register(Command('wp', 40, 'RUN ... [--save results/wp]', "the W&P experiments' tables beside W&P's",
                          _command, papers=('wp',)))

def _sections(runs) -> list[render.Section]:
  chosen = [(r.name, r.info['dataset'], {e: s for e, s in r.experiments.items() if e in r.of_paper('wp')[1]})
            for r in runs if r.of_paper('wp')[1]]
  return render.paper_sections('Wiegreffe & Pinter', tables(chosen), titles('wp')) if chosen else []


SECTIONS.register(PaperSections(
    'wp', 'wp', 30, _sections,
    missing=lambda runs: None if any(r.of_paper('wp')[1] for r in runs) else (
        'W&P: no run holds their experiments (`--config.experiments='
        + ','.join(e.name for e in EXPERIMENTS.of_paper('wp')) + '`)'),
    ran=lambda r: ', '.join(r.of_paper('wp')[1]) or 'not run'))
