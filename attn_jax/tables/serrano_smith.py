"""Serrano & Smith's erasure tests, as the reports show them (S&S §§4–5).

The `erasure` stage's summary gives the rows of the analyses table (`python
-m attn_jax.report analyses`) and S&S's section of the reproduction report:
the single-weight test's decision flips (Table 2's cells), the fraction of
items removed until the first flip under each ranking (Figures 5, 6) and the
per-instance comparisons of rankings. S&S published no numbers for binary
tasks, so these rows have no reference beside them.
"""

from attn_jax.tables import render, serrano_smith_models_report as serrano_smith_models
from attn_jax.tables.common import RunFolder
from attn_jax.tables.jain_wallace import HEADER, alternatives, analysis_rows
from attn_jax.tables.report_registry import SECTIONS, TABLES, PaperSections, Table, titles


def _f(x, digits=3) -> str:
  return '–' if x is None else f'{x:.{digits}f}'


def erasure_rows(name: str, dataset: str, erasure: dict, model: str = '') -> list[list[str]]:
  del dataset, model  # S&S's numbers are for their own multi-class datasets only
  s = erasure['single_weight']
  rows = [[name, 'S&S single weight: flips i*&r / i* only / r only / neither (%)',
           ' / '.join(_f(s[k], 1) for k in ('percent_both_flip', 'percent_top_only',
                                              'percent_other_only', 'percent_neither')), '– (no binary-task numbers)', '']]
  for ranking, r in erasure['removal'].items():
    rows.append([name, f'S&S fraction removed to first flip: {ranking}',
                 f'median {_f(r.get("median_fraction_removed"))}, flipped {r["n_flipped"]}, never {r["n_never_flipped"]}',
                 '–', ''])
  for comparison, c in erasure['comparisons'].items():
    rows.append([name, f'S&S {comparison.replace("_vs_", " vs ")}: fewer items / reverse / ties',
                 f'{c["b_fewer"]} / {c["a_fewer"]} / {c["ties"]} of {c["n"]}', '–', ''])
  return rows


TABLES.register(Table('erasure', 'stage', 40, erasure_rows, paper='ss'))


def _is_ss_model(r: RunFolder) -> bool:
  return r.info['model'].split(' + ')[1].startswith('han')


def _sections(runs: list[RunFolder]) -> list[render.Section]:
  analysed = [r for r in runs if r.of_paper('ss')[0]]
  if not analysed:
    return []
  own = [serrano_smith_models.load(r.path) for r in analysed if _is_ss_model(r)]
  sections = render.paper_sections("S&S's own models", serrano_smith_models.tables(own),
                                     titles('ss')) if own else []
  analysed = [r for r in analysed if not _is_ss_model(r)]
  if not analysed:
    return sections
  rows, notes = [HEADER], []
  for r in analysed:
    rows += analysis_rows(r.name, r.info['dataset'], {s: f.summary for s, f in r.stages.items()}, ('ss',),
                          model=r.info['model'])
    notes += alternatives(r.path, {s: f for s, f in r.stages.items() if s == 'erasure'})
  return sections + [render.Section('Serrano & Smith: erasure', [
      render.Text('S&S published no numbers for binary tasks: their rows have no reference.'),
      render.Table(rows, tuple(notes))])]


SECTIONS.register(PaperSections(
    'ss', 'ss', 20, _sections,
    missing=lambda runs: None if any(r.of_paper('ss')[0] for r in runs) else (
        'S&S\'s erasure: no run holds it (run.py runs it by default; `--config.analyses=erasure`)'),
    ran=lambda r: 'ran' if r.of_paper('ss')[0] else 'not run'))
