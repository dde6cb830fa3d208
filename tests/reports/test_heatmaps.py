"""Token heatmaps (attn_jax.plots.heatmaps): one coloured box per word and
measure, scaled per measure, escaped, and the same picture as PNG and SVG."""

import re

import numpy as np
import pytest

from attn_jax.plots import heatmaps

WORDS = ['a', '<b>gripping</b>', ',', 'funny', 'film']


def _spans(fragment: str) -> list[tuple[str, float, str]]:
  """(measure, value, background) of every word box, in order."""
  return [(m, float(v), bg) for m, v, bg in re.findall(
      r'<span title="([^"]*) = ([-0-9.e+]+)" style="background:(rgb\([^)]*\))', fragment)]


def test_each_word_gets_one_box_per_measure_in_order():
  rows = {'α': np.array([0.1, 0.5, 0.05, 0.3, 0.05]), 'loo': np.array([0.0, 0.2, 0.0, 0.4, 0.1])}
  spans = _spans(heatmaps.html(WORDS, rows, title='doc 3'))
  assert [m for m, _, _ in spans] == ['α'] * 5 + ['loo'] * 5
  np.testing.assert_allclose([v for _, v, _ in spans], np.concatenate(list(rows.values())),
                             rtol=1e-3)


def test_the_largest_value_of_each_row_gets_the_full_colour_and_zero_none():
  rows = {'α': np.array([0.1, 0.5, 0.0, 0.3, 0.1]), 'gradient': np.array([4.0, 1.0, 0.0, 8.0, 2.0])}
  spans = _spans(heatmaps.html(WORDS, rows))
  alpha, grad = spans[:5], spans[5:]
  assert alpha[2][2] == grad[2][2] == 'rgb(255, 255, 255)'
  # Scaled per row: the maxima (0.5 and 8.0) are equally strong, in each row's own hue.
  assert alpha[1][2] == f'rgb{heatmaps._HUES[0]}' and grad[3][2] == f'rgb{heatmaps._HUES[1]}'

  def whiteness(bg):
    return sum(int(c) for c in re.findall(r'\d+', bg))
  order = np.argsort([whiteness(bg) for _, _, bg in grad])
  assert list(order) == list(np.argsort(-rows['gradient'], kind='stable'))


def test_negative_values_take_the_diverging_colour():
  spans = _spans(heatmaps.html(['x', 'y'], {'signed': np.array([-2.0, 1.0])}))
  assert spans[0][2] == f'rgb{heatmaps._NEGATIVE}' and spans[1][2] != spans[0][2]
  assert 'max |·| 2' in heatmaps.html(['x', 'y'], {'signed': np.array([-2.0, 1.0])})


def test_words_and_titles_are_escaped_and_nothing_external_is_referenced():
  fragment = heatmaps.html(WORDS, {'α': np.ones(5) / 5}, title='<script>x</script>')
  assert '<b>' not in fragment and '&lt;b&gt;gripping&lt;/b&gt;' in fragment
  assert '<script>' not in fragment
  assert not re.search(r'(src|href)=', fragment)


def test_a_row_of_the_wrong_length_is_refused_naming_it():
  with pytest.raises(ValueError, match=r"row 'loo' has 4 values for 5 words"):
    heatmaps.html(WORDS, {'α': np.ones(5), 'loo': np.ones(4)})
  with pytest.raises(ValueError, match='at least one row'):
    heatmaps.html(WORDS, {})


def test_png_and_svg_are_written_and_long_documents_wrap(tmp_path):
  import matplotlib.image
  rows = lambda n: {'α': np.linspace(0, 1, n), 'gradient': np.linspace(1, 0, n)}
  short = heatmaps.png(WORDS, rows(5), str(tmp_path / 'short'))
  words = [f'word{i}' for i in range(200)]
  long = heatmaps.png(words, rows(200), str(tmp_path / 'long'), title='a long one')
  assert [p[-3:] for p in long] == ['png', 'svg']
  lines = heatmaps._lines(words, 100)
  assert [i for line in lines for i in line] == list(range(200))
  used = [sum(len(words[i]) + 1 for i in line) for line in lines]
  assert max(used) <= 100
  # Greedy: no line could have taken the next line's first word.
  assert all(u + len(words[nxt[0]]) + 1 > 100 for u, nxt in zip(used, lines[1:]))
  height = lambda path: matplotlib.image.imread(path).shape[0]
  assert height(long[0]) > 5 * height(short[0])
