"""The analyses' measured numbers beside the published ones (J&W §B.6).

Reads each stage's most complete results under `<run>/analyses/<stage>/`
(`attn_jax.stages.store`); `python -m attn_jax.report analyses RUN ...`
prints the table, with the document count and key each number comes from.
"""

from attn_jax import config as config_lib, published
from attn_jax.stages import store

TAU_PAIRS = {'attention_gradient': 'τ(α, gradient)', 'attention_loo': 'τ(α, LOO)',
             'gradient_loo': 'τ(gradient, LOO)'}


def load_summaries(run: str) -> dict:
  """stage -> the summary of its most complete results (most documents)."""
  return {stage: found.summary for stage, found in load_found(run).items()}


def load_found(run: str) -> dict[str, store.Found]:
  """stage -> its most complete results in `run` (see `store.find`)."""
  out = {}
  for stage in config_lib.ANALYSES:
    found = store.most_complete(run, stage)
    if found is not None:
      out[stage] = found
  return out


def source_label(summary: dict) -> str:
  """Which results a number comes from: document count, split and key."""
  key = summary.get('key', {})
  return f'{summary.get("documents", "?")} {key.get("split", "?")} docs, key {key.get("hash", "?")[:8]}'


def alternatives(run: str, found: dict[str, store.Found]) -> list[str]:
  """Lines naming the other results a run holds beside those shown."""
  lines = []
  for stage, shown in found.items():
    for other in store.find(run, stage):
      if other.directory != shown.directory:
        lines.append(f'{run}: {stage} also has {source_label(other.summary)} in {other.directory}'
                     + ('' if other.intact else f' (damaged: {other.problem})'))
  return lines


def verdict(entry: dict, measured: float, paper: float, tolerance: float) -> str:
  """'within' when the published value lies in the 95 % bootstrap interval over
  test documents (attn_jax.statistics) recorded in the summary; summaries of
  attn-jax <= 0.1 have none, and fall back to a fixed tolerance."""
  ci = entry.get('bootstrap_ci95')
  if ci is not None:
    inside = ci[0] <= paper <= ci[1]
    return ('within' if inside else 'MISSED') + f' (95% CI {ci[0]:.3f}–{ci[1]:.3f})'
  return ('within' if abs(measured - paper) <= tolerance else 'MISSED') + f' (±{tolerance}, no CI recorded)'


def _f(x, digits=3) -> str:
  return '–' if x is None else f'{x:.{digits}f}'


def tau_rows(name: str, dataset: str, kendall: dict) -> list[list[str]]:
  paper = published.JAIN_WALLACE_TAU.get(dataset, {})
  spread = published.JAIN_WALLACE_TAU_SPREAD
  rows = []
  for group in ('overall', 'neg', 'pos'):
    for pair, label in TAU_PAIRS.items():
      m = kendall['pairs'][pair][group]
      p = paper.get(group, {}).get(pair)
      rows.append([name, f'{label} {group}', f'{_f(m["mean"])} ± {_f(m["std"])} (sig {_f(m["pval_sig"], 2)})',
                   f'{p[0]:.3f} ± {p[1]:.3f} (sig {p[2]:.2f})' if p else '–',
                   verdict(m, m.get('nanmean', m['mean']), p[0], spread) if p else ''])
  return rows


def adversarial_rows(name: str, dataset: str, adversarial: dict) -> list[list[str]]:
  paper = published.JAIN_WALLACE_ADVERSARIAL.get(dataset, {})
  rows = []
  for group in ('neg', 'pos'):
    m, p = adversarial[group], paper.get(group)
    rows.append([name, f'adversarial max JSD {group}',
                 f'{_f(m["mean_max_jsd"])} (>0.5: {_f(m["fraction_above_0.5"], 2)})',
                 f'≈{p[0]:.2f} (>0.5: {p[1]:.2f})' if p else '–',
                 verdict(m, m['mean_max_jsd'], p[0], 0.05) if p else ''])
  return rows


def permutation_rows(name: str, dataset: str, permutation: dict) -> list[list[str]]:
  bins = {b: d for b, d in permutation['by_bin'].items() if d.get('n', 0) >= 10}
  medians = [d['median'] for d in bins.values()]
  paper = published.JAIN_WALLACE_PERMUTATION_RANGE.get(dataset)
  measured = f'{min(medians):.3f}–{max(medians):.3f}' if medians else '–'
  detail = ', '.join(f'{b}: {d["median"]:.3f} (n={d["n"]})' for b, d in bins.items())
  verdict = ''
  if paper and medians:
    verdict = 'overlaps' if min(medians) <= paper[1] and max(medians) >= paper[0] else 'MISSED'
  return [[name, 'permutation median |Δŷ| by max-α bin (n≥10)', f'{measured} [{detail}]',
           f'≈{paper[0]:.2f}–{paper[1]:.2f}' if paper else '–', verdict]]


def erasure_rows(name: str, erasure: dict) -> list[list[str]]:
  s = erasure['single_weight']
  rows = [[name, 'S&S single weight: flips i*&r / i* only / r only / neither (%)',
           ' / '.join(_f(s[k], 1) for k in ('percent_both_flip', 'percent_top_only',
                                              'percent_other_only', 'percent_neither')), '– (no binary-task numbers)', '']]
  for ranking, r in erasure['removal'].items():
    rows.append([name, f'S&S fraction removed to first flip: {ranking}',
                 f'median {_f(r.get("median_fraction_removed"))}, flipped {r["n_flipped"]}, never {r["n_never_flipped"]}',
                 '–', ''])
  for comparison, c in erasure['comparisons'].items():
    rows.append([name, f'S&S {comparison.replace("_vs_", " vs ")}: fewer items / reverse / ties',
                 f'{c["b_fewer"]} / {c["a_fewer"]} / {c["ties"]} of {c["n"]}', '–', ''])
  return rows


def analysis_rows(name: str, dataset: str, summaries: dict) -> list[list[str]]:
  """The table's rows; the last cell says which results each comes from."""
  rows = []
  makers = {'kendall': lambda s: tau_rows(name, dataset, s),
            'adversarial': lambda s: adversarial_rows(name, dataset, s),
            'permutation': lambda s: permutation_rows(name, dataset, s),
            'erasure': lambda s: erasure_rows(name, s)}
  for stage, make in makers.items():
    if stage in summaries:
      rows += [row + [source_label(summaries[stage])] for row in make(summaries[stage])]
  return rows


HEADER = ['run', 'statistic', 'measured', 'J&W published', 'verdict', 'from (documents, key)']
