"""Token heatmaps: the words of one document coloured by each importance
measure, one row per measure, so that which words the attention picks can be
read against which words gradient importance and leave-one-out pick.

    rows = {'α': alpha, 'gradient': grad, 'leave-one-out': loo}   # each [n], one per word
    fragment = heatmaps.html(words, rows, title='doc 17')         # HTML, inline styles only
    heatmaps.png(words, rows, 'figures/doc17', title='doc 17')    # doc17.png and doc17.svg

Each row is scaled by its own largest magnitude: the measures live on
different scales (α sums to 1, |Δŷ| is a probability change), and what the
comparison asks is which words each measure ranks high, not how large its
numbers are. A row with negative values is drawn on a diverging scale (blue
below zero, red above); otherwise white to the row's colour. The exact value
of every cell is in its tooltip (HTML) and in the row's label (its maximum).
"""

import html as html_lib
from typing import Mapping, Sequence

import numpy as np

from attn_jax.plots import figures

# One hue per measure, in the order rows are usually given (α, gradient, LOO, others).
_HUES = ((214, 39, 40), (255, 127, 14), (44, 160, 44), (148, 103, 189), (140, 86, 75),
         (227, 119, 194))
_NEGATIVE = (31, 119, 180)


def _checked(words: Sequence[str], rows: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
  out = {}
  for name, values in rows.items():
    values = np.asarray(values, np.float64).reshape(-1)
    if values.shape[0] != len(words):
      raise ValueError(f'heatmap row {name!r} has {values.shape[0]} values for {len(words)} '
                       'words; give one value per word (SOS/EOS and padding cut off)')
    out[name] = np.nan_to_num(values)
  if not out:
    raise ValueError('a heatmap needs at least one row of scores')
  return out


def _label(name: str, values: np.ndarray) -> str:
  top = float(np.max(np.abs(values)))
  return f'{name} (max {top:.3g})' if np.all(values >= 0) else f'{name} (max |·| {top:.3g})'


def _shades(values: np.ndarray, hue: tuple) -> list[tuple[tuple[int, int, int], float]]:
  """(rgb, strength in [0, 1]) per value, the value scaled by the row's largest |value|."""
  top = float(np.max(np.abs(values))) or 1.0
  colours = []
  for v in values / top:
    base = _NEGATIVE if v < 0 else hue
    s = min(abs(float(v)), 1.0)
    colours.append((tuple(round(255 - s * (255 - c)) for c in base), s))
  return colours


def html(words: Sequence[str], rows: Mapping[str, np.ndarray], title: str = '') -> str:
  """An HTML fragment (inline styles, no scripts, no external resources).

  Args:
    words: the n words of the document.
    rows: measure name -> [n] scores, one per word.
    title: a line above the rows (escaped).
  """
  checked = _checked(words, rows)
  parts = ['<div style="font-family:sans-serif;font-size:14px;line-height:2.0;margin:0.5em 0">']
  if title:
    parts.append(f'<div style="font-weight:bold">{html_lib.escape(title)}</div>')
  for i, (name, values) in enumerate(checked.items()):
    # A fixed label column: the rows hold the same words in the same boxes,
    # so they wrap alike and a word sits at the same place in every row.
    parts.append('<div style="display:flex;margin:0.2em 0"><div style="flex:0 0 13em;color:#444">'
                 f'{html_lib.escape(_label(name, values))}</div><div style="flex:1">')
    for word, value, (rgb, s) in zip(words, values, _shades(values, _HUES[i % len(_HUES)])):
      ink = '#fff' if s > 0.65 else '#000'
      parts.append(f'<span title="{html_lib.escape(name)} = {value:.4g}" style="background:'
                   f'rgb{rgb};color:{ink};padding:1px 3px;border-radius:3px">'
                   f'{html_lib.escape(word)}</span> ')  # the space: where a long line may wrap
    parts.append('</div></div>')
  parts.append('</div>')
  return ''.join(parts)


def _lines(words: Sequence[str], width: int) -> list[list[int]]:
  """Word indices broken into lines of at most `width` characters."""
  lines, line, used = [], [], 0
  for i, word in enumerate(words):
    if line and used + len(word) + 1 > width:
      lines.append(line)
      line, used = [], 0
    line.append(i)
    used += len(word) + 1
  return lines + [line] if line else lines


def png(words: Sequence[str], rows: Mapping[str, np.ndarray], stem: str, title: str = '',
        width: int = 100) -> list[str]:
  """Writes `<stem>.png` and `<stem>.svg` (the same picture as `html`);
  returns their paths. Lines wrap at `width` characters."""
  checked = _checked(words, rows)
  lines = _lines(words, width)
  # Inches per character of 9 pt monospace, the gap a box's padding needs, per line.
  char_w, gap, line_h = 0.075, 0.07, 0.3
  label_w = 0.15  # each measure's label has a line of its own; its words are indented
  block_lines = len(lines) + 1  # the measure's label line
  height = 0.5 * bool(title) + len(checked) * block_lines * line_h + 0.2
  fig, ax = figures.new_figure(figsize=(label_w + width * char_w, height))
  ax.set_position([0, 0, 1, 1])  # data units are inches: the word boxes are laid out in them
  ax.set_axis_off()
  ax.set_xlim(0, label_w + width * char_w)
  ax.set_ylim(height, 0)
  y = 0.35 if title else 0.1
  if title:
    ax.text(0, 0.15, title, fontsize=10, fontweight='bold', va='center')
  for i, (name, values) in enumerate(checked.items()):
    shades = _shades(values, _HUES[i % len(_HUES)])
    ax.text(0, y + line_h / 2, _label(name, values), fontsize=9, va='center', color='#444')
    y += line_h
    for line in lines:
      x = label_w
      for j in line:
        rgb, s = shades[j]
        ax.text(x, y + line_h / 2, words[j], family='monospace', fontsize=9, va='center',
                color='white' if s > 0.65 else 'black',
                bbox={'boxstyle': 'round,pad=0.15', 'facecolor': tuple(c / 255 for c in rgb),
                      'edgecolor': 'none'})
        x += len(words[j]) * char_w + gap
      y += line_h
  return figures.save(fig, stem)
