"""A report as a list of sections of blocks, written as one self-contained
HTML file and as Markdown with its figures as files.

The HTML is meant to be mailed, archived or opened offline years later: its
style is inline, its figures are base64 data URIs and its heatmaps inline
HTML (`attn_jax.plots.heatmaps.html`); it loads nothing (no scripts, fonts
or style sheets from elsewhere). The Markdown is for reading in a repository:
figures and heatmaps (`heatmaps.png`) go to `figures/` beside it.
"""

import base64
import dataclasses
import html
import json
import os
import re
from typing import Union

import numpy as np

from attn_jax.core import atomic_io
from attn_jax.plots import heatmaps
from attn_jax.tables.common import markdown

FIGURES = 'figures'  # the Markdown's figures, beside REPORT.md
SAVED_FORMATS = ('png', 'svg')  # the files `heatmaps.png` writes per stem (plots.figures.save)
VERDICT = 'verdict'  # the column whose cells are coloured by how they read
# How a verdict cell reads (the row functions' wording): a miss anywhere in the
# cell wins over the agreeing phrases its start may have.
MISSED_WORDS = ('MISSED', 'NOT ', 'FALLS')
AGREED_STARTS = ('within', 'as W&P', 'as published', 'overlaps', 'negative, as published')


@dataclasses.dataclass(frozen=True)
class Text:
  """A paragraph; `code` in backticks is shown as code."""
  text: str


@dataclasses.dataclass(frozen=True)
class Table:
  rows: list           # a header row, then rows of cells (strings)
  notes: tuple = ()    # lines below the table


@dataclasses.dataclass(frozen=True)
class Code:
  text: str


@dataclasses.dataclass(frozen=True)
class Details:
  """Long text folded away (a config), shown on demand."""
  summary: str
  text: str


@dataclasses.dataclass(frozen=True)
class Figure:
  path: str     # a PNG file
  caption: str
  name: str     # a file name unique in the report (the Markdown's copy)


@dataclasses.dataclass(frozen=True)
class Heatmap:
  words: list
  scores: dict  # measure -> [n] scores, one per word
  title: str
  name: str     # a file stem unique in the report (the Markdown's PNG)


Block = Union[Text, Table, Code, Details, Figure, Heatmap]


@dataclasses.dataclass(frozen=True)
class Section:
  title: str
  blocks: list
  level: int = 2


def verdict_class(cell: str) -> str:
  """'miss', 'ok' or '' (no published number to agree with)."""
  if any(w in cell for w in MISSED_WORDS):
    return 'miss'
  return 'ok' if cell.startswith(AGREED_STARTS) else ''


def verdict_counts(rows: list) -> tuple[int, int]:
  """(agreeing, missed) verdict cells of a table."""
  if VERDICT not in rows[0]:
    return 0, 0
  column = rows[0].index(VERDICT)
  classes = [verdict_class(row[column]) for row in rows[1:]]
  return classes.count('ok'), classes.count('miss')


# ------------------------------------------------------------------ Markdown

def _cell(text: str) -> str:
  return text.replace('|', '\\|').replace('\n', ' ')


def _alt(text: str) -> str:
  return text.replace('[', '\\[').replace(']', '\\]')


def _markdown_block(block: Block, out: str) -> str:
  if isinstance(block, Text):
    return block.text
  if isinstance(block, Table):
    table = markdown([[_cell(c) for c in row] for row in block.rows])
    return table + ''.join(f'\n- {n}' if i else f'\n\n- {n}' for i, n in enumerate(block.notes))
  if isinstance(block, Code):
    return f'```bash\n{block.text}\n```'
  if isinstance(block, Details):
    return f'<details><summary>{html.escape(block.summary)}</summary>\n\n```\n{block.text}\n```\n\n</details>'
  os.makedirs(os.path.join(out, FIGURES), exist_ok=True)
  if isinstance(block, Figure):
    target = os.path.join(out, FIGURES, block.name)
    atomic_io.copy_file(block.path, target)
    return f'![{_alt(block.caption)}]({FIGURES}/{block.name})\n\n*{block.caption}*'
  heatmaps.png(block.words, block.scores, os.path.join(out, FIGURES, block.name), block.title)
  return f'![{_alt(block.title)}]({FIGURES}/{block.name}.png)'


def write_markdown(title: str, sections: list[Section], out: str, name: str = 'REPORT.md') -> str:
  """Writes `<out>/<name>` and its figures under `<out>/figures/`; returns its path."""
  parts = [f'# {title}']
  for section in sections:
    parts.append('#' * section.level + ' ' + section.title)
    parts += [_markdown_block(b, out) for b in section.blocks]
  path = os.path.join(out, name)
  atomic_io.atomic_write(path, lambda f: f.write('\n\n'.join(parts) + '\n'))
  return path


def figure_files(sections: list[Section]) -> list[str]:
  """The files `write_markdown` writes under `<out>/figures/`, relative to `<out>`
  (what a report folder's manifest lists: `attn_jax.core.owned_folders`)."""
  files = []
  for block in (b for s in sections for b in s.blocks):
    if isinstance(block, Figure):
      files.append(os.path.join(FIGURES, block.name))
    elif isinstance(block, Heatmap):
      files += [os.path.join(FIGURES, f'{block.name}.{ext}') for ext in SAVED_FORMATS]
  return files


# ---------------------------------------------------------------------- HTML

STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:2em auto;
  max-width:1200px;padding:0 1em;color:#1f2328;line-height:1.45}
h1{border-bottom:2px solid #d0d7de;padding-bottom:.3em}
h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:2em}
.table{overflow-x:auto;margin:.6em 0}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
tr:nth-child(even) td{background:#fbfcfd}
td.ok{background:#dafbe1 !important}
td.miss{background:#ffebe9 !important}
pre{background:#f6f8fa;padding:.7em;overflow-x:auto;font-size:12px;white-space:pre-wrap;word-break:break-all}
code{background:#f6f8fa;padding:0 3px;border-radius:3px;font-size:90%}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:1em;align-items:start}
figure{margin:0}
figure img{width:100%;border:1px solid #d0d7de}
figcaption{font-size:13px;color:#57606a}
ul.notes{font-size:13px;color:#424a53}
nav ul{columns:2;font-size:14px}
details{margin:.5em 0}
.heatmap{border:1px solid #d0d7de;border-radius:6px;padding:0 .8em;margin:.8em 0;overflow-x:auto}
"""


def _inline(text: str) -> str:
  """Escaped text with `code` spans."""
  return re.sub(r'`([^`]+)`', r'<code>\1</code>', html.escape(text))


def _html_table(block: Table) -> str:
  header = block.rows[0]
  verdict = header.index(VERDICT) if VERDICT in header else None
  lines = ['<div class="table"><table><thead><tr>'
           + ''.join(f'<th>{html.escape(c)}</th>' for c in header) + '</tr></thead><tbody>']
  for row in block.rows[1:]:
    cells = []
    for i, c in enumerate(row):
      kind = verdict_class(c) if i == verdict else ''
      cells.append(f'<td class="{kind}">{html.escape(c)}</td>' if kind else f'<td>{html.escape(c)}</td>')
    lines.append('<tr>' + ''.join(cells) + '</tr>')
  lines.append('</tbody></table></div>')
  if block.notes:
    lines.append('<ul class="notes">' + ''.join(f'<li>{_inline(n)}</li>' for n in block.notes) + '</ul>')
  return '\n'.join(lines)


def _data_uri(path: str) -> str:
  with open(path, 'rb') as f:
    return 'data:image/png;base64,' + base64.b64encode(f.read()).decode('ascii')


def _html_block(block: Block) -> str:
  if isinstance(block, Text):
    return f'<p>{_inline(block.text)}</p>'
  if isinstance(block, Table):
    return _html_table(block)
  if isinstance(block, Code):
    return f'<pre><code>{html.escape(block.text)}</code></pre>'
  if isinstance(block, Details):
    return (f'<details><summary>{html.escape(block.summary)}</summary>'
            f'<pre>{html.escape(block.text)}</pre></details>')
  if isinstance(block, Figure):
    return (f'<figure><img src="{_data_uri(block.path)}" alt="{html.escape(block.caption)}">'
            f'<figcaption>{html.escape(block.caption)}</figcaption></figure>')
  return f'<div class="heatmap">{heatmaps.html(block.words, block.scores, block.title)}</div>'


def _html_blocks(blocks: list) -> list[str]:
  """Each block's HTML, neighbouring figures side by side in one grid."""
  out, grid = [], []
  for block in blocks + [None]:
    if isinstance(block, Figure):
      grid.append(_html_block(block))
      continue
    if grid:
      out.append('<div class="figures">' + ''.join(grid) + '</div>')
      grid = []
    if block is not None:
      out.append(_html_block(block))
  return out


def _anchor(index: int, title: str) -> str:
  return f's{index}-' + re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')


def write_html(title: str, sections: list[Section], out: str, name: str = 'index.html') -> str:
  """Writes the self-contained `<out>/<name>`; returns its path."""
  anchors = [_anchor(i, s.title) for i, s in enumerate(sections)]
  toc = ''.join(f'<li><a href="#{a}">{html.escape(s.title)}</a></li>'
                for a, s in zip(anchors, sections) if s.level == 2)
  parts = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f'<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>',
           f'<h1>{html.escape(title)}</h1>', f'<nav><ul>{toc}</ul></nav>']
  for anchor, section in zip(anchors, sections):
    level = min(section.level, 6)
    parts.append(f'<h{level} id="{anchor}">{html.escape(section.title)}</h{level}>')
    parts += _html_blocks(section.blocks)
  parts.append('</body></html>')
  path = os.path.join(out, name)
  atomic_io.atomic_write(path, lambda f: f.write('\n'.join(parts) + '\n'))
  return path


def config_text(config: dict) -> str:
  """A config as the JSON run.py wrote (sorted keys, indented)."""
  return json.dumps(config, indent=2, sort_keys=True, default=lambda v: np.asarray(v).tolist())


def table_section(title: str, rows: list, notes=(), level: int = 3) -> Section:
  return Section(title, [Table(rows, tuple(notes))], level)


def paper_sections(title: str, made: dict, titles: dict) -> list[Section]:
  """A paper's heading and its tables that have rows ({block: (rows, notes)})."""
  blocks = [table_section(titles.get(block, block), rows, notes)
            for block, (rows, notes) in made.items() if len(rows) > 1]
  return [Section(title, [])] + blocks if blocks else []
