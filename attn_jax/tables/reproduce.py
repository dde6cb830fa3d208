"""One report of everything the given runs reproduce, for people to read.

    python -m attn_jax.report reproduce RUN ... [--out report/] [--text "..."]

Writes `<out>/index.html` (self-contained) and `<out>/REPORT.md` (figures in
`<out>/figures/`). Each paper whose analyses or experiments the runs hold gets
its sections, in the paper order of `attn_jax.papers`, as its report module
registers them (`registry.SECTIONS`: J&W's test metrics with a bootstrap
interval over the run's test predictions and the analyses; S&S's erasure;
W&P's and Meister's tables), measured beside published with a verdict per
row, made by the same row functions as the generated tables in README and
docs/; then the 95 % intervals the summaries record; then, per run, how to
reproduce it (`run_command`), its data fingerprints and config, the figures
its stages and experiments drew, and heatmaps of chosen test documents
(`chosen_documents`); then the texts given with `--text`, explained by each
run (`attn_jax.explain`). What was not run is said, not left out silently.
"""

import os
import shlex
import sys
import warnings
from typing import Sequence

from attn_jax import papers
from attn_jax.analysis import statistics
from attn_jax.core import atomic_io, errors, owned_folders
from attn_jax.explain import TextWarning, explain
from attn_jax.tables import chosen_documents, render, run_command
from attn_jax.tables.common import RunFolder, data_source_cell
from attn_jax.tables.jain_wallace import TAU_PAIRS
from attn_jax.tables.meister import NAMES as MEISTER_NAMES
from attn_jax.tables.report_registry import COMMANDS, SECTIONS, Command
from attn_jax.workdirs.restore import restore

TITLE = 'attn-jax reproduction report'
CI_VALUE_KEYS = ('nanmean', 'mean', 'mean_max_jsd', 'estimate')  # which number an interval is of


def _intervals(summary, path=()):
  """(statistic path, value, [low, high], n) of every entry with a bootstrap interval."""
  if isinstance(summary, dict):
    if isinstance(summary.get('bootstrap_ci95'), list):
      value = next((summary[k] for k in CI_VALUE_KEYS if isinstance(summary.get(k), (int, float))), None)
      yield path, value, summary['bootstrap_ci95'], summary.get('n')
    for key, value in summary.items():
      yield from _intervals(value, path + (str(key),))


def _statistic(stage: str, path: tuple) -> str:
  """A summary path in the tables' words: ('pairs', 'attention_loo', 'neg') -> 'τ(α, LOO) neg'."""
  parts = [p for p in path if p != 'pairs']
  if parts and parts[0] in TAU_PAIRS:
    return ' '.join([TAU_PAIRS[parts[0]], *parts[1:]])
  if len(parts) == 2 and parts[0] == 'tau':
    measure = parts[1]
    base = measure.removesuffix('_detached')
    name = MEISTER_NAMES.get(base, base) + (' detached' if base != measure else '')
    return f'τ(α, {name})'
  if stage == 'adversarial':
    return ' '.join(['max JSD', *parts])
  return ' '.join(parts)


def _interval_rows(runs: list[RunFolder]) -> list[list[str]]:
  rows = [['run', 'from', 'statistic', 'measured', '95% interval', 'over']]
  for r in runs:
    for stage, found in r.stages.items():
      seen = set()
      for path, value, (low, high), n in _intervals(found.summary):
        if (value, low, high, n) in seen:  # the same entry filed twice (importance: tau_detached)
          continue
        seen.add((value, low, high, n))
        rows.append([r.name, stage, _statistic(stage, path), '–' if value is None else f'{value:.3f}',
                     f'{low:.3f}–{high:.3f}', f'{n if n is not None else "?"} documents (bootstrap)'])
    seeds = r.experiments.get('seeds', {}).get('seed_models', {})
    for metric, entry in seeds.items():
      ci = statistics.t_interval(entry.get('values', []))
      if ci['n'] > 1:
        rows.append([r.name, 'seeds', f'seed models {metric}', f'{ci["mean"]:.3f}',
                     f'{ci["low"]:.3f}–{ci["high"]:.3f}', f'{ci["n"]} seeds (Student t)'])
  return rows


# ------------------------------------------------------------------ each run

def _provenance(r: RunFolder) -> list[render.Block]:
  command = run_command.reproduce(r.path)
  data = {}
  if os.path.isfile(os.path.join(r.path, 'data.json')):
    data = atomic_io.read_json(os.path.join(r.path, 'data.json'))
  results = r.info['results']
  keyed = sorted({f.summary.get('key', {}).get('data') for f in r.stages.values()} - {None})
  splits = ', '.join(f'{s} {v.get("size")} ({v.get("positive")} positive)'
                     for s, v in data.get('splits', {}).items()) or '–'
  rows = [['record', 'value'],
          ['eval.json data_fingerprint', str(results.get('data_fingerprint', 'not recorded'))],
          ['data.json fingerprint', str(data.get('fingerprint', 'no data.json'))],
          ['analysis results keyed by', ', '.join(keyed) or '–'],
          ['splits', splits], ['vocabulary', str(data.get('vocab_size', '–'))],
          ['data source', data_source_cell(results.get('data_source') or data.get('source'))]]
  return [render.Text('Reproduce it with (from the repository root):'), render.Code(command.command),
          render.Table([['about the command'], *[[n] for n in command.notes]]),
          render.Table(rows), render.Details('config.json', render.config_text(command.config))]


def _figures(r: RunFolder) -> list[render.Block]:
  listed = [('training', 'training_curves.png')]
  listed += [(stage, f) for stage, found in r.stages.items() for f in found.summary.get('figures', [])]
  listed += [(name, f) for name, s in r.experiments.items() for f in s.get('figures', [])]
  blocks = []
  for origin, figure in listed:
    path = os.path.join(r.path, figure)
    if figure.endswith('.png') and os.path.isfile(path):
      blocks.append(render.Figure(path, f'{r.name} · {origin} · {os.path.basename(figure)}',
                                  f'{r.slug}-{origin}-{os.path.basename(figure)}'))
  return blocks or [render.Text('No figures in this run folder.')]


def _heatmaps(r: RunFolder) -> list[render.Block]:
  documents, notes = chosen_documents.choose(r.path)
  blocks = [render.Text('Words coloured by each measure, each row scaled to its own largest value (the exact value '
                        'is in each word\'s tooltip).')] if documents else []
  blocks += [render.Heatmap(d.words, d.scores, d.title, f'{r.slug}-doc{d.row}') for d in documents]
  return blocks + [render.Text(n) for n in notes]


def _run_sections(r: RunFolder) -> list[render.Section]:
  return [render.Section(f'Run {r.name}', [render.Text(f'`{r.path}`: {r.info["dataset"]}, {r.info["model"]}, '
                                                       f'{r.info["embed_init"]}, seed {r.info["seed"]}.')]),
          render.Section('How to reproduce it', _provenance(r), 3),
          render.Section('Figures', _figures(r), 3),
          render.Section('Chosen test documents', _heatmaps(r), 3)]


def _text_sections(runs: list[RunFolder], texts: Sequence[str]) -> list[render.Section]:
  if not texts:
    return []
  blocks = []
  for r in runs:
    try:
      with warnings.catch_warnings():  # a skipped text, or one of unknown words, is said in the report
        warnings.simplefilter('ignore', TextWarning)
        explanations = explain(restore(r.path), list(texts))
    except ValueError as e:  # the text itself (too many words, too long for memory): no run could explain it
      raise errors.AttnJaxError(f'--text: {e}') from e
    except (errors.AttnJaxError, OSError) as e:  # this run cannot (another kind of model): said in the report
      blocks.append(render.Text(f'{r.name}: the texts could not be explained ({e})'))
      continue
    for i, e in enumerate(explanations):
      if e.skipped:
        blocks.append(render.Text(f'{r.name}: "{e.text}" was not explained ({e.skipped}).'))
        continue
      unknown = int((~e.known).sum())
      title = (f'{r.name}: "{e.text}" (ŷ = {e.prob:.3f}'
               + ('; every word read as <UNK>)' if e.only_unknown else
                  f'; {unknown} word(s) read as <UNK>)' if unknown else ')'))
      blocks.append(render.Heatmap(e.words, {chosen_documents.ALPHA: e.alpha, chosen_documents.GRADIENT: e.gradient,
                                             chosen_documents.LOO: e.loo}, title, f'{r.slug}-text{i}'))
  return [render.Section('Your texts', [render.Text(
      'Each text tokenized as the run\'s dataset and read with its vocabulary (`attn_jax.explain`).')] + blocks)]


# ------------------------------------------------------------------- overview

def _overview(runs: list[RunFolder], sections: list[render.Section], command: str) -> list[render.Section]:
  by_paper = SECTIONS.values()
  ran = [['run', 'dataset', 'model'] + [papers.PAPERS[p.paper].label for p in by_paper]]
  for r in runs:
    ran.append([r.name, r.info['dataset'], r.info['model']] + [p.ran(r) for p in by_paper])
  counts = [['tables', 'rows agreeing with the paper', 'rows missing it']]
  for section in sections:
    for block in section.blocks:
      if isinstance(block, render.Table):
        ok, missed = render.verdict_counts(block.rows)
        if ok or missed:
          counts.append([section.title, str(ok), str(missed)])
  missing = [line for p in by_paper if (line := p.missing(runs))]
  blocks = [render.Text(f'Made by `{command}` with {run_command.version()}. The runs do not record the '
                        'attn-jax version that trained them; each result\'s key (in the tables) names the '
                        'checkpoint, data and settings it was computed from.'),
            render.Table(ran)]
  if len(counts) > 1:
    blocks.append(render.Table(counts))
  if missing:
    blocks.append(render.Table([['not in these runs'], *[[m] for m in missing]]))
  return [render.Section('What these runs reproduce', blocks)]


def gather(paths: Sequence[str], texts: Sequence[str] = (), command: str = '') -> list[render.Section]:
  """The report's sections for the run folders `paths`.

  Raises:
    AttnJaxError: a path is not a run folder.
  """
  if not paths:
    raise errors.AttnJaxError('name at least one run folder (a workdir or --output_dir written by run.py)')
  runs = [RunFolder(p, i) for i, p in enumerate(paths)]
  found = [section for p in SECTIONS.values() for section in p.sections(runs)]
  intervals = _interval_rows(runs)
  if len(intervals) > 1:
    found.append(render.Section('95 % intervals the results record', [
        render.Text('Percentile bootstrap intervals over test documents, as the stages record them, and '
                    'Student-t intervals over the seed models of W&P\'s seeds experiment (`attn_jax.analysis.statistics`).'),
        render.Table(intervals)]))
  sections = _overview(runs, found, command) + found
  for r in runs:
    sections += _run_sections(r)
  return sections + _text_sections(runs, texts)


def write(paths: Sequence[str], out: str, texts: Sequence[str] = (), command: str = '', force: bool = False) -> dict:
  """Writes `<out>/index.html` and `<out>/REPORT.md` (figures in `<out>/figures/`);
  returns {'html': path, 'markdown': path}. Only files attn-jax wrote in `out`
  are overwritten or removed (`attn_jax.core.owned_folders`): a folder with
  other files is refused unless `force`, and even then none of them is touched."""
  sections = gather(paths, texts, command)
  planned = ['index.html', 'REPORT.md', *render.figure_files(sections)]
  owned_folders.claim(out, planned, '--out', force)
  written = {'html': render.write_html(TITLE, sections, out), 'markdown': render.write_markdown(TITLE, sections, out)}
  owned_folders.record(out, planned, command)
  owned_folders.remove_stale(out, planned)  # an earlier report's figures this one does not show
  return written


def _command(parser, args, argv) -> None:
  """Writes the reproduction report; a run folder it cannot read ends in one line (exit 1)."""
  del parser
  command = 'python -m attn_jax.report ' + ' '.join(shlex.quote(a) for a in (argv or sys.argv[1:]))
  written = write(args.runs, args.out, args.text, command, force=args.force)
  print(f'report: {written["html"]} (self-contained) and {written["markdown"]}')


COMMANDS.register(Command('reproduce', 100, 'RUN ... [--out report] [--text "..."]',
                          'one report of everything the runs reproduce (HTML and Markdown)', _command))
