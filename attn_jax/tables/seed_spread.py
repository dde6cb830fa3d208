"""One run beside the spread of its configuration's seeds.

A single trained model is one draw from a spread that is wide for τ: seed 0
of SST BiLSTM + tanh gives τ(α, gradient) 0.246 where its grid row's five
seeds average 0.347 and J&W publish 0.351. The analyses table's verdict is a
bootstrap interval over the run's test documents, which says nothing about
that spread, so `report analyses` adds, for a run whose dataset, encoder and
attention are a row of a committed J&W grid (the first of `GRIDS` under
results/ that holds the row), the run's τ beside the row's seeds — their
range and Student-t 95 % interval — and J&W's published value, and says
whether the run's recipe is the row's.
"""

import os
from typing import Optional

import ml_collections

from attn_jax import config as config_lib
from attn_jax.analysis import statistics
from attn_jax.core import atomic_io
from attn_jax.stages import feature_importance
from attn_jax.tables import study_results

# The grids a run may be set beside, under results/ of the checkout, newest
# first: the first that holds the run's row with two seeds or more. jw_grid is
# today's recipe with each seed's own batch order, saved row by row as it is
# trained; jw_grid_lstm2 has every fix of the recipe but one batch order a row.
GRIDS = ('jw_grid', 'jw_grid_lstm2')
PAIRS = tuple(f'tau_{p}' for p in feature_importance.PAIRS)  # J&W's three τ (the kendall stage's)
# What differs between a grid row's seeds by design, and so not between recipes.
SEED_KEYS = frozenset({'seed', 'train.batch_seed', 'vectors.seed'})


def grid_roots() -> list[str]:
  """results/<grid> of the checkout this package is in, for each of `GRIDS`
  that exists there (none in an installed package, which ships no results)."""
  package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  roots = [os.path.join(os.path.dirname(package), 'results', name) for name in GRIDS]
  return [root for root in roots if os.path.isdir(root)]


def row_root(name: str, roots: list[str]) -> Optional[str]:
  """The first of `roots` whose row `name` has two seeds or more (an interval)."""
  return next((r for r in roots if len(study_results.models(os.path.join(r, name))) >= 2), None)


def row_name(config: dict) -> Optional[str]:
  """The grid row of a run's saved config: '<dataset>_<encoder>_<attention>'
  (+ '_scratch' without pretrained vectors); None for a model no row has
  (another projection, a QA model, S&S's models)."""
  model = config.get('model', {})
  if model.get('projection') != 'softmax' or model.get('query') or model.get('hierarchical'):
    return None
  name = f"{config['data']['dataset']}_{model['encoder']}_{model['attention']}"
  return name + ('_scratch' if not model.get('embeddings_file') else '')


def _flat(config: dict) -> dict:
  return dict(config_lib.flat_items(ml_collections.ConfigDict(config)))


def recipe_differences(run: dict, seed: dict) -> list[str]:
  """'key (run value vs seed value)' for each key that trains another model:
  the data, model, vectors and training groups, less runtime keys and seeds;
  a key one config lacks counts at its old value (`config.ADDED_KEYS`).

  Args:
    run: the run's saved config.json.
    seed: one grid seed's saved config.json.

  Returns:
    The differing keys, sorted; [] when the run was trained as the row's seeds were.
  """
  a, b = _flat(run), _flat(seed)
  added, runtime, missing = config_lib.ADDED_KEYS, config_lib.RUNTIME_KEYS, object()
  out = []
  for key in sorted(set(a) | set(b)):
    if key.split('.')[0] not in ('data', 'model', 'vectors', 'train') or key in runtime or key in SEED_KEYS:
      continue
    x, y = a.get(key, added.get(key, missing)), b.get(key, added.get(key, missing))
    if x != y:
      show = lambda v: 'unset' if v is missing else repr(v)
      out.append(f'{key} ({show(x)} vs {show(y)})')
  return out


def lines(run: str, published: dict, root: Optional[str] = None) -> list[str]:
  """What `report analyses` prints under its table for one run.

  Args:
    run: a run folder (config.json, analyses/kendall/...).
    published: {pair: J&W's value} for the run's configuration (may be empty).
    root: the grid's folder (default: the first of `grid_roots()` holding the row).

  Returns:
    Lines: the row and its seeds, then per τ this run's value, the seeds'
    range and interval and the published value; [] when the run has no
    kendall results or its configuration is no row of the grid.
  """
  config = atomic_io.read_json(os.path.join(run, 'config.json'))
  name = row_name(config)
  root = None if name is None else row_root(name, [root] if root else grid_roots())
  if root is None:
    return []
  mine = {p: study_results.STATISTICS[p][1](run) for p in PAIRS}
  if all(v is None for v in mine.values()):
    return []
  members = study_results.models(os.path.join(root, name))
  if os.path.abspath(run) in {os.path.abspath(m) for m in members}:
    return []  # a seed of the grid itself
  seeds = [atomic_io.read_json(os.path.join(m, 'config.json')) for m in members]
  differences = recipe_differences(config, seeds[0]) if seeds else []
  recipe = ('the same recipe' if not differences else
            'another recipe: ' + ', '.join(differences[:4]) + (' …' if len(differences) > 4 else ''))
  row = os.path.join(root, name)
  shown = os.path.relpath(row) if os.path.abspath(row).startswith(os.getcwd() + os.sep) else row
  out = [f'{run}: beside {shown} ({len(members)} seeds, '
         f'{study_results.varies(members) or "?"}; {recipe})']
  for pair in PAIRS:
    values = [v for v in (study_results.STATISTICS[pair][1](m) for m in members) if v is not None]
    if mine[pair] is None or not values:
      continue
    ci = statistics.t_interval(values)
    interval = (f'mean {ci["mean"]:.3f}, 95 % t {ci["low"]:.3f}–{ci["high"]:.3f}' if ci['n'] > 1
                else f'{ci["mean"]:.3f}')
    paper = published.get(pair)
    out.append(f'  {study_results.STATISTICS[pair][0]}: this run {mine[pair]:.3f}; the seeds '
               f'{min(values):.3f}–{max(values):.3f} ({interval})'
               + (f'; J&W published {paper:.3f}' if paper is not None else ''))
  out.append('  one seed is one draw from the seeds\' spread: read a gap to the published value against it')
  return out
