"""S&S's models under two recipes side by side: the one attn-jax trained
before following S&S's code (results/ss_models_previous) and S&S's code's
own (results/ss_models) — what the recipe changes in each model's accuracy,
attention (Δα), single-weight flips, fraction removed and the (b)/(c) ratios.

Each cell is `previous → now`; '–' where a side lacks the model.
"""

import os
from typing import Optional

from attn_jax.tables import serrano_smith_appendix
from attn_jax.tables.serrano_smith_runs import (DATASET_LABELS, MODELS, ModelRun, _by, _pct, comparison, load,
                                      median_removed, ratio, share, single_cells)

BLOCK = 'ss-recipe'


def load_folder(folder: str) -> list[ModelRun]:
  """Every S&S model saved under `folder` (one sub-folder per arm); [] if none."""
  if not folder or not os.path.isdir(folder):
    return []
  found = []
  for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if os.path.isfile(os.path.join(path, 'eval.json')) and os.path.isfile(os.path.join(path, 'config.json')):
      found.append(load(path))
  return found


def _cells(r: Optional[ModelRun]) -> list[Optional[str]]:
  if r is None:
    return [None] * 6
  s = r.erasure
  peaked = serrano_smith_appendix.share_at_least(s)
  fewer = share(comparison(s))
  return [_pct(100 * r.eval['accuracy']),
          ' / '.join(_pct(x) for x in single_cells(s)) if s else None,
          _pct(None if peaked is None else 100 * peaked, 0) if s else None,
          _pct(median_removed(s), 2) if s else None,
          _pct(ratio(comparison(s)), 2) if s else None,
          _pct(None if fewer is None else 100 * fewer, 1) if s else None]


def rows(previous: list[ModelRun], now: list[ModelRun]) -> list[list[str]]:
  header = ['dataset', 'model', 'accuracy (%)', 'Table 2: i*&r / i* only / r only / neither (%)',
            'Δα ≥ 0.3 (%)', 'median fraction removed (attention)', '(b) gradient ÷ attention',
            '(c) gradient fewer (%)']
  out = [header]
  for d in DATASET_LABELS:
    for model in MODELS:
      before, after = _by(previous, d, model), _by(now, d, model)
      if before is None and after is None:
        continue
      out.append([DATASET_LABELS[d], model] + [f'{a or "–"} → {b or "–"}'
                                               for a, b in zip(_cells(before), _cells(after))])
  return out


def tables(previous: list[ModelRun], now: list[ModelRun], notes=()) -> dict:
  if not previous:
    return {}
  return {BLOCK: (rows(previous, now), list(notes))}
