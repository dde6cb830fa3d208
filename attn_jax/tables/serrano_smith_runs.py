"""S&S's own models' run folders, read once for every S&S table: which
model a folder holds (HAN/FLAN × rnn/conv/noenc), its test results and its
erasure summary (the stage's, or the copy a `--save` made)."""

import dataclasses
import os
from typing import Optional

from attn_jax import config as config_lib
from attn_jax.core import atomic_io, errors
from attn_jax.tables import common
from attn_jax.stages import stage_store

FAMILIES, ENCODERS = ('HAN', 'FLAN'), ('rnn', 'conv', 'noenc')
MODELS = tuple(f + e for f in FAMILIES for e in ENCODERS)
SHORT = {'bigru': 'rnn', 'cnn': 'conv', 'none': 'noenc'}
RANKINGS = ('attention', 'random', 'gradient', 'gradient_x_attention', 'attention_ascending')
DATASET_LABELS = {'imdb_ratings': 'aclImdb ratings (8 cl.)', '20news_topics': '20 Newsgroups (20 cl.)'}


@dataclasses.dataclass(frozen=True)
class ModelRun:
  path: str
  dataset: str
  model: str  # S&S's name, e.g. HANrnn
  eval: dict
  erasure: Optional[dict]  # the erasure stage's summary, None if it has not run


def load(path: str) -> ModelRun:
  """A run folder of an S&S model: its eval.json, config.json and erasure summary."""
  results, config = common.read_run_files(path)
  m = config['model']
  if config_lib.current_value('model.attention', m.get('attention')) != 'context' or m.get('encoder') not in SHORT:
    raise errors.AttnJaxError(f'{path} is not one of S&S\'s models (HAN/FLAN × rnn/conv/noenc): '
                              f'its encoder is {m.get("encoder")!r}, attention {m.get("attention")!r}; '
                              'train one with configs/imdb_ratings_han.py or _flan.py')
  name = ('HAN' if m.get('hierarchical') else 'FLAN') + SHORT[m['encoder']]
  found = stage_store.most_complete(path, 'erasure')
  summary = found.summary if found is not None and found.intact else _saved_summary(path)
  return ModelRun(path, config['data']['dataset'], name, results, summary)


def _saved_summary(path: str) -> Optional[dict]:
  """The summary a `--save` copied into `<path>/analyses/erasure/`, if any."""
  copy = os.path.join(path, 'analyses', 'erasure', stage_store.SUMMARY)
  try:
    return atomic_io.read_json(copy)
  except (OSError, ValueError):
    return None


def _pct(x, digits=1) -> str:
  return '–' if x is None else f'{x:.{digits}f}'


def _by(runs, dataset, model) -> Optional[ModelRun]:
  return next((r for r in runs if r.dataset == dataset and r.model == model), None)


def datasets(runs) -> list[str]:
  return [d for d in DATASET_LABELS if any(r.dataset == d for r in runs)]


def single_cells(summary: Optional[dict], top: Optional[str] = None) -> tuple:
  """(both flip, i* only, r only, neither) % of a single-weight test: i* the
  top-attended item, or with `top` the top item of that ranking (Figs. 12–13)."""
  s = (summary or {}).get('single_weight', {}) if top is None else (
      ((summary or {}).get('single_weight_other_tops') or {}).get(top) or {})
  return tuple(s.get(k) for k in ('percent_both_flip', 'percent_top_only', 'percent_other_only',
                                  'percent_neither'))


def comparison(summary: Optional[dict], name: str = 'gradient_vs_attention') -> Optional[dict]:
  return (summary or {}).get('comparisons', {}).get(name)


def ratio(c: Optional[dict]) -> Optional[float]:
  """B fewer ÷ A fewer of a ranking comparison (S&S's claim (b))."""
  return None if not c or not c['a_fewer'] else c['b_fewer'] / c['a_fewer']


def share(c: Optional[dict]) -> Optional[float]:
  """The share of instances where B needs fewer items (S&S's claim (c))."""
  return None if not c or not c['n'] else c['b_fewer'] / c['n']


def median_removed(summary: Optional[dict], ranking: str = 'attention') -> Optional[float]:
  return ((summary or {}).get('removal', {}).get(ranking) or {}).get('median_fraction_removed')
