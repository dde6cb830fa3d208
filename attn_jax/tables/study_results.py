"""Per-seed numbers of a study's arms, and their intervals over seeds.

An arm's folder holds one folder per model (`seed0`, `seed1`, ...), each an
ordinary run (eval.json, metrics.jsonl, analyses/<stage>/<key>/summary.json). This
reads the statistic of each model and gives the Student-t interval over the
models (attn_jax.analysis.statistics); a model whose analysis has not run yet is
simply not counted for that statistic (`n` says how many were). A study's
root also holds `study.json`, the wall time of each arm's invocations
(`read_record`; written by `attn_jax.studies.study_runner`).
"""

import json
import os
from typing import Callable, Optional

from attn_jax.core import atomic_io, errors
from attn_jax.analysis import statistics
from attn_jax.stages import feature_importance, stage_store as store


def record_path(root: str) -> str:
  """A study root's record of its arms' invocations."""
  return os.path.join(root, 'study.json')


def read_record(root: str) -> dict:
  try:
    return atomic_io.read_json(record_path(root))
  except (OSError, ValueError):
    return {'arms': {}}


def copy_records(root: str, target: str, arms) -> None:
  """Copies into `target`'s record the wall-time records of `arms` (folder
  names) from `root`'s, keeping `target`'s others: only arms whose results are
  saved there, so an arm still training leaves no record behind."""
  if os.path.abspath(root) == os.path.abspath(target):
    return
  record, merged = read_record(root), read_record(target)
  merged['arms'].update({arm: runs for arm, runs in record['arms'].items() if arm in set(arms)})
  atomic_io.write_json(record_path(target), merged)


def _read(path: str):
  """A member's JSON file; None when it is not there (not run yet), one line
  when it is damaged (a seed silently left out would change the table)."""
  try:
    return atomic_io.read_json(path)
  except FileNotFoundError:
    return None
  except (OSError, ValueError) as e:
    raise errors.IntegrityError(f'{path} is damaged ({type(e).__name__}); rerun the study\'s `python -m '
                                'attn_jax.studies run` command on this root to rewrite it, then report again') from e


def _get(tree, *keys):
  for k in keys:
    if not isinstance(tree, dict) or k not in tree:
      return None
    tree = tree[k]
  return tree


def _plus_one(value):
  return None if value is None else value + 1


def _summary(member: str, stage: str):
  """The model's most complete intact results of `stage` (attn_jax.stages.stage_store)."""
  found = store.most_complete(member, stage)
  return found.summary if found is not None and found.intact else None


def _dev_at_selection(member: str, metric: str) -> Optional[float]:
  ev = _read(os.path.join(member, 'eval.json')) or {}
  try:
    with open(os.path.join(member, 'metrics.jsonl')) as f:
      history = [json.loads(line) for line in f]
  except (OSError, ValueError):
    return None
  return next((r.get(f'dev_{metric}') for r in history if r['epoch'] == ev.get('selected_epoch')), None)


def _tau(pair: str) -> Callable[[str], Optional[float]]:
  # nan-robust: a document whose importance is constant has no τ (J&W's csv
  # shows NaN for the whole mean then).
  return lambda m: _get(_summary(m, 'kendall'), 'pairs', pair, 'overall', 'nanmean')


# name -> (label, reader of one model's folder)
STATISTICS: dict[str, tuple[str, Callable[[str], Optional[float]]]] = {
    'accuracy': ('accuracy', lambda m: _get(_read(os.path.join(m, 'eval.json')), 'accuracy')),
    'f1_pos': ('F1 (pos)', lambda m: _get(_read(os.path.join(m, 'eval.json')), 'f1_pos')),
    'roc_auc': ('ROC-AUC', lambda m: _get(_read(os.path.join(m, 'eval.json')), 'roc_auc')),
    'dev_roc_auc': ('dev ROC-AUC', lambda m: _dev_at_selection(m, 'roc_auc')),
    'dev_accuracy': ('dev accuracy', lambda m: _dev_at_selection(m, 'accuracy')),
    # Stored 0-based (as in metrics.jsonl); shown 1-based like the progress bar.
    'selected_epoch': ('selected epoch (1 = first)',
                       lambda m: _plus_one(_get(_read(os.path.join(m, 'eval.json')), 'selected_epoch'))),
    'coverage': ('vector coverage', lambda m: _get(_read(os.path.join(m, 'embeddings.json')), 'coverage')),
    'max_attention_median': ('median max α', lambda m: _get(_summary(m, 'attention'), 'max_attention', 'median')),
    'max_attention_ge_075': ('max α ≥ 0.75', lambda m: _get(_summary(m, 'attention'), 'max_attention',
                                                              'fraction_at_least_0.75')),
    'entropy': ('H̃(α)', lambda m: _get(_summary(m, 'attention'), 'normalised_entropy', 'mean')),
    # J&W's three τ (the kendall stage's pairs), labelled from the measures' records.
    **{f'tau_{pair}': (feature_importance.tau_label(pair), _tau(pair)) for pair in feature_importance.PAIRS},
    'adversarial_neg': ('adv. max JSD neg', lambda m: _get(_summary(m, 'adversarial'), 'neg', 'mean_max_jsd')),
    'adversarial_pos': ('adv. max JSD pos', lambda m: _get(_summary(m, 'adversarial'), 'pos', 'mean_max_jsd')),
    # Models of more classes (QA, NLI): over all documents, J&W's QA numbers (TVD).
    'adversarial_overall': ('adv. mean max JSD', lambda m: _get(_summary(m, 'adversarial'), 'overall', 'mean_max_jsd')),
    'permutation_overall': ('perm. median TVD', lambda m: _get(_summary(m, 'permutation'), 'overall', 'median')),
    'permutation_neg': ('perm. median neg', lambda m: _get(_summary(m, 'permutation'), 'by_class', 'neg', 'median')),
    'permutation_pos': ('perm. median pos', lambda m: _get(_summary(m, 'permutation'), 'by_class', 'pos', 'median')),
    # The documents behind the τ columns: a report says what its numbers cover.
    'analysed_docs': ('documents analysed', lambda m: _get(_summary(m, 'kendall'), 'documents')),
}


def cell(ci: dict, digits: int = 3, paper=None) -> str:
  """An interval over seeds as a table shows it: '0.812 ± 0.012' (one seed:
  its value; none: '–'); with a published value: '… [0.808 ✓]' where ✓ means
  the published value is inside the interval, ✗ outside."""
  if ci['n'] == 0:
    return '–' if paper is None else f'– [{paper:.{digits}f}]'
  text = f'{ci["mean"]:.{digits}f}' + (f' ± {ci["half_width"]:.{digits}f}' if ci['n'] > 1 else '')
  if paper is not None:
    inside = statistics.contains(ci, paper)
    text += f' [{paper:.{digits}f}{"" if inside is None else " ✓" if inside else " ✗"}]'
  return text


def models(arm_dir: str) -> list[str]:
  """The finished models of an arm (folders with an eval.json), in name order;
  an arm of one model trained alone (no seed axis) is its own folder."""
  if not os.path.isdir(arm_dir):
    return []
  if os.path.exists(os.path.join(arm_dir, 'eval.json')):
    return [arm_dir]
  names = sorted(n for n in os.listdir(arm_dir) if os.path.exists(os.path.join(arm_dir, n, 'eval.json')))
  return [os.path.join(arm_dir, n) for n in names]


def collect_arm(arm_dir: str) -> dict:
  """{'models': names, 'values': {stat: [per model]}, 'ci': {stat: t_interval}}."""
  members = models(arm_dir)
  values = {name: [read(m) for m in members] for name, (_, read) in STATISTICS.items()}
  return {'models': [os.path.relpath(m, arm_dir) for m in members], 'values': values,
          'ci': {name: statistics.t_interval(v) for name, v in values.items()}}


def varies(members: list[str]) -> Optional[str]:
  """What differs among an arm's models, i.e. what its interval over them
  covers: the model seeds, and whether the batch order (`train.batch_seed`,
  else the model seed) and the pretrained vectors (`vectors.seed` of
  `in_domain` vectors) are one for all or each model's own, e.g. 'model
  seeds 0–4; one batch order; one set of vectors'. None without configs."""
  configs = [c for c in (_read(os.path.join(m, 'config.json')) for m in members) if isinstance(c, dict)]
  if not configs:
    return None
  seeds = sorted({c.get('seed') for c in configs})
  order = lambda c: _get(c, 'train', 'batch_seed')  # None: the model seed draws the order
  orders = {c.get('seed') if order(c) is None else order(c) for c in configs}
  files = {_get(c, 'model', 'embeddings_file') for c in configs}
  vectors = {_get(c, 'vectors', 'seed') for c in configs}
  one = lambda values, what: f'one {what}' if len(values) == 1 else f'{len(values)} {what}s'
  seed_text = (f'model seed {seeds[0]}' if len(seeds) == 1 else
               f'model seeds {seeds[0]}–{seeds[-1]}' if seeds == list(range(seeds[0], seeds[-1] + 1))
               else 'model seeds ' + ', '.join(map(str, seeds)))
  if files == {None}:
    vector_text = 'no pretrained vectors'
  elif files == {'in_domain'}:
    vector_text = one(vectors, 'set') + ' of vectors'
  else:
    vector_text = one(files, 'vectors file')
  return f'{seed_text}; {one(orders, "batch order")}; {vector_text}'


def unfinished(study, n: int) -> bool:
  """A row with some seeds but fewer than the study's (an arm trained one
  model at a time, `--one-at-a-time`, across machines): shown, and left out
  of the counts under a table, which are over rows with their seeds."""
  return 0 < n < study.seeds
