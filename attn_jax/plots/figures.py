"""Saving a matplotlib figure as PNG and SVG, atomically, without a display."""

import os

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top,wrong-import-position

from attn_jax import atomic_io


def save(fig, stem: str) -> list[str]:
  """Writes `<stem>.png` and `<stem>.svg`; returns their paths."""
  written = []
  for ext in ('png', 'svg'):
    path = f'{stem}.{ext}'
    atomic_io.atomic_write(path, lambda f, e=ext: fig.savefig(f, format=e, dpi=150,
                                                              bbox_inches='tight'), mode='wb')
    written.append(path)
  plt.close(fig)
  return written


def new_figure(*args, **kwargs):
  os.environ.setdefault('MPLBACKEND', 'Agg')
  return plt.subplots(*args, **kwargs)
