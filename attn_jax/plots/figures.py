"""Saving a matplotlib figure as PNG and SVG, atomically.

Figures are `matplotlib.figure.Figure` objects, not pyplot's: they need no
display and leave the user's backend (e.g. a notebook's inline one) alone.
"""

from matplotlib.figure import Figure

from attn_jax import atomic_io


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs):
  """(figure, axes) like `plt.subplots`, without pyplot."""
  fig = Figure(figsize=kwargs.pop('figsize', None))
  return fig, fig.subplots(nrows, ncols, **kwargs)


def save(fig: Figure, stem: str) -> list[str]:
  """Writes `<stem>.png` and `<stem>.svg`; returns their paths."""
  written = []
  for ext in ('png', 'svg'):
    path = f'{stem}.{ext}'
    atomic_io.atomic_write(path, lambda f, e=ext: fig.savefig(f, format=e, dpi=150,
                                                              bbox_inches='tight'), mode='wb')
    written.append(path)
  return written
