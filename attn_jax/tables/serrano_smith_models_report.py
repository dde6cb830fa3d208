"""S&S's own models on multi-class data: their Tables 2–3 beside S&S's, the
fractions removed (Figures 5–6), the ranking comparisons, and a verdict per
claim of the paper.

    python -m attn_jax.report ss RUN ... [--save results/ss_models]
        [--readme docs/serrano_smith.md --readme README.md]

RUN folders are runs of S&S's configs (`configs/imdb_ratings_{han,flan}.py`,
`configs/20news_topics_{han,flan}.py`) with the `erasure` stage, e.g. the
arms of the `ss_models` study. The published columns are S&S's closest
datasets (`published.SERRANO_SMITH_CLOSEST`): aclImdb's 8 ratings sit beside
S&S's 10-class IMDB, 20 Newsgroups' topics beside Yahoo Answers' topics.
"""

import os
from typing import Optional

from attn_jax.analysis import statistics, verdicts as verdict_tests
from attn_jax.papers import published
from attn_jax.tables import serrano_smith_appendix, serrano_smith_recipe
from attn_jax.tables.common import (check_markers, publish, save_run_files, save_summary,
                                     saved_runs)
from attn_jax.tables.report_registry import COMMANDS, TABLES, Command, Table, blocks, made_tables
from attn_jax.tables.serrano_smith_runs import (DATASET_LABELS, ENCODERS, FAMILIES, MODELS, RANKINGS, ModelRun,  # noqa: F401
                                      _by, _pct, comparison, datasets, load, median_removed, ratio, share,
                                      single_cells)
from attn_jax.stages import stage_store



# ---------------------------------------------------------------- tables

def table3_rows(runs) -> list[list[str]]:
  """Test accuracy (%) of each model, beside S&S's on their closest datasets,
  and the wall time on this machine: training (all epochs run) + erasure tests."""
  found = datasets(runs) or list(DATASET_LABELS)
  header = ['model']
  for d in found:
    header += [f'{DATASET_LABELS[d]} (measured)',
               f'S&S {published.SERRANO_SMITH_CLOSEST[d]} (published)', 'minutes: train + erasure']
  rows = [header]
  for model in MODELS:
    row = [model]
    for d in found:
      r = _by(runs, d, model)
      row += [_pct(100 * r.eval['accuracy']) if r else '– (not run)',
              _pct(published.SERRANO_SMITH_TABLE3[published.SERRANO_SMITH_CLOSEST[d]][model]),
              _minutes(r)]
    rows.append(row)
  return rows


def _minutes(r: Optional[ModelRun]) -> str:
  if r is None:
    return '–'
  train = r.eval.get('training_seconds')
  erasure = (r.erasure or {}).get('seconds')
  return (f'{_pct(None if train is None else train / 60, 0)} + '
          f'{_pct(None if erasure is None else erasure / 60, 0)}')


def table2_rows(runs) -> list[list[str]]:
  """S&S Table 2 for every model (S&S published it for HANrnn)."""
  rows = [['dataset', 'model', 'instances (n > 1)', 'i* & r flip (%)', 'i* only', 'r only', 'neither',
           'ΔJS < 0 (%, Fig. 4)', 'S&S HANrnn, closest dataset (published)']]
  for d in datasets(runs):
    paper = published.SERRANO_SMITH_TABLE2[published.SERRANO_SMITH_CLOSEST[d]]
    for model in MODELS:
      r = _by(runs, d, model)
      if r is None or r.erasure is None:
        continue
      cells = single_cells(r.erasure)
      reference = (f'{published.SERRANO_SMITH_CLOSEST[d]}: ' + ' / '.join(_pct(x) for x in paper)
                   if model == 'HANrnn' else '')
      negative = r.erasure['single_weight'].get('fraction_delta_js_negative')
      rows.append([DATASET_LABELS[d], model, str(r.erasure['single_weight']['n']),
                   *[_pct(c) for c in cells], _pct(None if negative is None else 100 * negative), reference])
  return rows


def _removal_cell(removal: Optional[dict]) -> str:
  if not removal:
    return '–'
  total = removal['n_flipped'] + removal['n_never_flipped']
  never = 100 * removal['n_never_flipped'] / max(total, 1)
  if not removal['n_flipped']:
    return f'never flips ({never:.0f} %)'
  q = removal.get('fraction_removed_percentiles', {})
  spread = f' [{q["25"]:.2f}–{q["75"]:.2f}]' if q else ''
  return (f'{removal["median_fraction_removed"]:.2f}{spread}; '
          f'>0.5: {100 * removal["fraction_removed_above_0.5"]:.0f} %; never: {never:.0f} %')


def removal_rows(runs) -> list[list[str]]:
  """Figures 5–6 as numbers: median [quartiles] fraction of items removed
  before the first decision flip, per ranking, the share above one half, and
  the share of instances that never flip (excluded, as S&S do)."""
  rows = [['dataset', 'model'] + [k.replace('_', ' ') for k in RANKINGS]]
  for d in datasets(runs):
    for model in MODELS:
      r = _by(runs, d, model)
      if r is None or r.erasure is None:
        continue
      rows.append([DATASET_LABELS[d], model] + [_removal_cell(r.erasure['removal'].get(k)) for k in RANKINGS])
  return rows


def comparison_rows(runs) -> list[list[str]]:
  """S&S's per-instance comparison: among instances where either ranking
  flips the decision, on how many B needs fewer items than attention, the
  reverse, and ties."""
  rows = [['dataset', 'model', 'gradient fewer / attention fewer / ties (n)', 'ratio',
           'gradient fewer (%)', 'grad×α fewer / attention fewer / ties (n)', 'ratio']]
  for d in datasets(runs):
    for model in MODELS:
      r = _by(runs, d, model)
      if r is None or r.erasure is None:
        continue
      cells = []
      for name in ('gradient_vs_attention', 'gradient_x_attention_vs_attention'):
        c = comparison(r.erasure, name)
        k = ratio(c)
        cells += [f'{c["b_fewer"]} / {c["a_fewer"]} / {c["ties"]} ({c["n"]})' if c else '–',
                  '–' if k is None else f'{k:.2f}']
        if name == 'gradient_vs_attention':
          cells.append(_pct(100 * c['b_fewer'] / c['n']) if c and c['n'] else '–')
      rows.append([DATASET_LABELS[d], model] + cells)
  return rows


# ---------------------------------------------------------------- verdicts

def _median(r: ModelRun, ranking='attention') -> Optional[float]:
  return median_removed(r.erasure, ranking)


def verdicts(runs) -> list[tuple[str, str, str, str]]:
  """(dataset, claim, HOLDS / FAILS / partly, the numbers) per claim (a)–(d) of S&S and dataset."""
  lines = []
  for d in datasets(runs):
    done = [r for r in runs if r.dataset == d and r.erasure is not None]
    if not done:
      continue
    label = DATASET_LABELS[d]
    # (a) §4: erasing i* flips the decision more often than erasing a random r.
    a = [(r.model, s[0] + s[1], s[0] + s[2]) for r in done
         for s in [single_cells(r.erasure)] if None not in s]
    ok = [m for m, top, other in a if top > other]
    lines.append((label, '(a) erasing i* flips the decision more often than erasing a random r',
                  _word(len(ok), len(a)), f'{len(ok)} of {len(a)} models: '
                  + ', '.join(f'{m} {top:.1f} % vs {other:.1f} %' for m, top, other in a)))
    # (b) §5: for every model with an encoder, gradient beats attention ≥ 1.6× as often as the reverse;
    # (c) for most encoder models, gradient needs fewer items on more than half the instances.
    # A model's seeds give an interval; its part of the claim is decided only where the interval
    # lies on one side of the threshold.
    enc = [r for r in done if not r.model.endswith('noenc')]
    thr = published.SERRANO_SMITH_GRADIENT_RATIO
    b = threshold_decisions(enc, lambda r: ratio(comparison(r.erasure, 'gradient_vs_attention')), thr)
    lines.append((label, f'(b) for every model with an encoder, gradient beats attention on ≥ '
                  f'{thr}× as many instances as the reverse', claim_word(b, every=True),
                  describe_decisions(b, thr, '×')))
    c = threshold_decisions(enc, lambda r: share(comparison(r.erasure, 'gradient_vs_attention')), 0.5)
    lines.append((label, '(c) for most encoder models, gradient needs fewer items than attention on '
                  '> 50 % of the instances', claim_word(c, every=False),
                  describe_decisions(c, 0.5, '', percent=True)))
    lines += late_flip_verdicts(done, d, label)
  return lines


def threshold_decisions(runs, statistic, threshold: float) -> list[dict]:
  """Per model (its seeds pooled), the statistic's interval over seeds and
  whether it lies above `threshold` ('holds'), below it ('fails'), or across
  it ('undecided'); one seed is compared as a point ('holds' / 'fails', with
  `seeds` = 1 flagging that no spread is known).

  Returns:
    [{'model', 'values', 'interval' (statistics.t_interval), 'decision',
      'seeds_to_decide' (undecided only: seeds for the one-sample test against
      the threshold at 80 % power if the mean and sd were as observed)}].
  """
  out = []
  for model in MODELS:
    values = [statistic(r) for r in runs if r.model == model]
    values = [v for v in values if v is not None]
    if not values:
      continue
    t = statistics.t_interval(values)
    if t['n'] == 1:
      decision = 'holds' if t['mean'] >= threshold else 'fails'
    elif t['low'] >= threshold:
      decision = 'holds'
    elif t['high'] < threshold:
      decision = 'fails'
    else:
      decision = 'undecided'
    needed = None
    if decision == 'undecided' and t['std'] > 0 and t['mean'] != threshold:
      needed = verdict_tests.seeds_for_difference(t['std'] ** 2, t['mean'] - threshold, sides=1)
    out.append({'model': model, 'values': values, 'interval': t, 'decision': decision,
                'seeds_to_decide': needed})
  return out


def claim_word(decisions: list[dict], every: bool) -> str:
  """HOLDS / FAILS / UNDECIDED for a claim over models: 'every' model, or 'most'."""
  if not decisions:
    return 'not run'
  held = sum(d['decision'] == 'holds' for d in decisions)
  failed = sum(d['decision'] == 'fails' for d in decisions)
  if every:
    return 'FAILS' if failed else 'HOLDS' if held == len(decisions) else 'UNDECIDED'
  if 2 * held > len(decisions):
    return 'HOLDS'
  return 'FAILS' if 2 * failed >= len(decisions) else 'UNDECIDED'


def describe_decisions(decisions: list[dict], threshold: float, unit: str, percent: bool = False) -> str:
  """'FLANconv 1.37× [0.60, 2.13] (3 seeds): undecided (≈9 seeds would decide); ...'"""
  scale = 100 if percent else 1
  unit = ' %' if percent else unit
  parts = []
  for d in decisions:
    t = d['interval']
    if t['n'] == 1:
      parts.append(f'{d["model"]} {scale * t["mean"]:.2f}{unit} (1 seed: no interval): {d["decision"]}')
      continue
    text = (f'{d["model"]} {scale * t["mean"]:.2f}{unit} [{scale * t["low"]:.2f}, {scale * t["high"]:.2f}] '
            f'({t["n"]} seeds): {d["decision"]}')
    if d['seeds_to_decide'] is not None:
      text += f' (≈{d["seeds_to_decide"]} seeds would decide, if mean and sd held)'
    parts.append(text)
  held = sum(d['decision'] == 'holds' for d in decisions)
  return f'{held} of {len(decisions)} models hold (threshold {scale * threshold:g}{unit}): ' + '; '.join(parts)


# §5.5 gives no number for "remarkably high" fractions removed: a median
# above one half is this project's reading of it.
LATE = 0.5


def late_flip_verdicts(done, d: str, label: str) -> list[tuple[str, str, str, str]]:
  """S&S §§5.5–5.6 on when decisions flip (median fraction removed,
  attention ranking): (d) within each family the rnn model flips latest;
  (e) across families each FLAN flips at least as late as the HAN with its
  encoder; (f) §5.5's absolute statement, that FLANrnn's flips come late."""
  lines = []
  parts, holds = [], []
  for family in FAMILIES:
    rnn, others = _by(done, d, family + 'rnn'), [_by(done, d, family + e) for e in ('conv', 'noenc')]
    others = [o for o in others if o is not None and _median(o) is not None]
    if rnn is None or _median(rnn) is None or not others:
      continue
    later = all(_median(rnn) > _median(o) for o in others)
    holds.append(later)
    parts.append(f'{family}: rnn {_median(rnn):.2f} vs ' + ', '.join(
        f'{o.model[len(family):]} {_median(o):.2f}' for o in others) + (' ✓' if later else ' ✗'))
  if parts:
    lines.append((label, '(d) within each family, decision flips come latest for the rnn model '
                  '(§5.6: larger median fraction removed, attention ranking, than conv and noenc)',
                  _word(sum(holds), len(holds)), '; '.join(parts)))
  pairs = [(e, _by(done, d, 'HAN' + e), _by(done, d, 'FLAN' + e)) for e in ENCODERS]
  pairs = [(e, h, f) for e, h, f in pairs if h and f and _median(h) is not None and _median(f) is not None]
  if pairs:
    later = [e for e, h, f in pairs if _median(f) >= _median(h)]
    lines.append((label, '(e) across families, FLAN flips come at least as late as the HAN with '
                  'the same encoder (§5.5: "highly unexpected" for FLANs over hundreds of words)',
                  _word(len(later), len(pairs)), ', '.join(
                      f'{e}: FLAN {_median(f):.2f} vs HAN {_median(h):.2f}' for e, h, f in pairs)))
  flan = _by(done, d, 'FLANrnn')
  if flan is not None and _median(flan) is not None:
    lines.append((label, f'(f) FLANrnn\'s decision flips come late (§5.5: "remarkably high" fractions; '
                  f'here: median fraction removed, attention ranking, > {LATE})',
                  'HOLDS' if _median(flan) > LATE else 'FAILS', f'FLANrnn {_median(flan):.2f}'))
  return lines


def _word(good: int, total: int, every: bool = False) -> str:
  if total == 0:
    return 'not run'
  if good == total:
    return 'HOLDS'
  return 'FAILS' if every or good == 0 else 'partly'


def _f2(x) -> str:
  return '–' if x is None else f'{x:.2f}'




# ---------------------------------------------------------------- figure

def figure(runs, stem: str) -> list[str]:
  """S&S Figures 5–6 from the summaries: per model, a box per ranking of the
  fraction removed before the first flip (5th–95th percentile whiskers)."""
  return serrano_smith_appendix.ranking_boxes(runs, stem, 'fraction_removed_percentiles',
                                   'fraction removed\nbefore first flip')


# ---------------------------------------------------------------- command

def verdict_rows(runs) -> list[list[str]]:
  return [['dataset', 'claim (S&S)', 'verdict', 'measured']] + [list(v) for v in verdicts(runs)]


# The tables after serrano_smith_appendix's, in the order they print (after
# the recipe's before → after): adding one is a registration here.
TABLES.register(Table('ss-table3', 'paper', 40, table3_rows, paper='ss', command='ss',
                      title='S&S Table 3: accuracy of their six models (and wall time)'))
TABLES.register(Table('ss-table2', 'paper', 50, table2_rows, paper='ss', command='ss',
                      title='S&S Table 2: single-weight erasure'))
TABLES.register(Table('ss-removal', 'paper', 60, removal_rows, paper='ss', command='ss',
                      title='S&S Figures 5-6: fraction of items removed before the first flip'))
TABLES.register(Table('ss-comparisons', 'paper', 70, comparison_rows, paper='ss', command='ss',
                      title='S&S §5.2: gradient vs attention, instance by instance'))
TABLES.register(Table('ss-verdicts', 'paper', 80, verdict_rows, paper='ss', command='ss',
                      title="S&S's claims (a)-(d)"))


def tables(runs, pending=(), previous=()) -> dict:
  """README block -> (rows, notes); `pending` names models not finished yet;
  `previous` the runs of the recipe before S&S's code was followed (their
  before → after block when given)."""
  notes = ([f'Not finished yet (the study resumes where it stopped): {", ".join(pending)}.']
           if pending else [])
  return {**serrano_smith_recipe.tables(list(previous), runs, notes), **made_tables('ss', runs, notes)}


def save(run: ModelRun, directory: str) -> str:
  """Copies a run's small files and its erasure summary (with figures) to
  `<directory>/<model>_<dataset>/`; returns that folder."""
  target = save_run_files({'name': f'{run.dataset}_{run.model}', 'path': run.path}, directory)
  if run.erasure is not None:
    save_summary(run.path, target, os.path.join('analyses', 'erasure'), run.erasure, stage_store.SUMMARY)
  return target


def write(paths: list[str], save_to=None, readme=None, pending=(), command=None, files=None,
          previous=()) -> dict:
  """Prints the tables for the runs at `paths` (from `save_to` after copying
  there, if given), draws the figures beside them and rewrites the README
  blocks; returns {block: (rows, notes)}. `previous`: runs of the earlier
  recipe, shown before → after (`serrano_smith_recipe`)."""
  if readme:
    check_markers(readme, blocks('ss') + ((serrano_smith_recipe.BLOCK,) if previous else ()))
  paths, runs = saved_runs(paths, save_to, load, save)
  if save_to:
    written = (figure(runs, os.path.join(save_to, 'ss_fraction_removed'))
               + serrano_smith_appendix.figures_for(runs, save_to))
    if written:
      print('figures: ' + ', '.join(written))
  return publish(tables(runs, pending, previous), 'ss', paths, ('analyses',), readme, command, files)


def _command(parser, args, argv) -> None:
  del argv
  if not args.runs:
    parser.error('ss needs the run folders of S&S models (e.g. workdirs/ss_models/*)')
  write(args.runs, args.save, args.readme)


COMMANDS.register(Command('ss', 45, 'RUN ... [--save results/ss_models]',
                          "S&S's Tables 2-3 beside theirs, fractions removed, verdicts on (a)-(d)",
                          _command, papers=('ss',),
                          applies=lambda cfg: cfg.model.get('attention') == 'context'))
