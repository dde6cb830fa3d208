"""Saving a matplotlib figure as PNG and SVG, atomically.

Figures are `matplotlib.figure.Figure` objects, not pyplot's: they need no
display and leave the user's backend (e.g. a notebook's inline one) alone.
"""

from typing import TYPE_CHECKING

from attn_jax.core import atomic_io

if TYPE_CHECKING:
  from matplotlib.figure import Figure

# matplotlib is imported where a figure is made (half a second to import):
# a run that draws nothing, or a command line that stops at bad input, skips it.


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs):
  """(figure, axes) like `plt.subplots`, without pyplot."""
  from matplotlib.figure import Figure  # pylint: disable=g-import-not-at-top
  fig = Figure(figsize=kwargs.pop('figsize', None))
  return fig, fig.subplots(nrows, ncols, **kwargs)


# No date and a fixed id salt: the same figure gives the same bytes, so a
# rerun that changes nothing rewrites nothing (read-only workdirs work).
_METADATA = {'png': {'Software': None}, 'svg': {'Date': None}}


def save(fig: 'Figure', stem: str) -> list[str]:
  """Writes `<stem>.png` and `<stem>.svg`; returns their paths."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  written = []
  for ext in ('png', 'svg'):
    path = f'{stem}.{ext}'
    with matplotlib.rc_context({'svg.hashsalt': 'attn-jax'}):
      atomic_io.atomic_write(path, lambda f, e=ext: fig.savefig(
          f, format=e, dpi=150, bbox_inches='tight', metadata=_METADATA[e]), mode='wb')
    written.append(path)
  return written
