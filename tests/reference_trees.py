"""Hand-made result trees of the J&W grid (attn-jax's seeds) and of J&W's own
code (results/jw_reference), for the reference report's and the studies' tests."""

import json

from attn_jax.tables import studies as report

SPREAD = (-0.01, -0.005, 0.0, 0.005, 0.01)  # ours: five seeds about a mean
THEIRS = (-0.008, 0.0, 0.008)  # J&W's code: three seeds about a mean
STATS = ('accuracy', 'tau_attention_gradient', 'tau_attention_loo', 'tau_gradient_loo')


def ours(root, arm, means):
  """A finished attn-jax arm: eval.json and a kendall summary per seed, as saved in results/."""
  for k, d in enumerate(SPREAD):
    seed = root / arm / f'seed{k}'
    (seed / 'analyses' / 'kendall' / 'test-10docs-0123456789abcdef').mkdir(parents=True)
    (seed / 'eval.json').write_text(json.dumps({'accuracy': means[0] + d}))
    pairs = {p: {'overall': {'nanmean': m + d}} for p, m in zip(report.TAU_PAIRS, means[1:])}
    (seed / 'analyses' / 'kendall' / 'test-10docs-0123456789abcdef' / 'summary.json').write_text(
        json.dumps({'key': {'split': 'test', 'stage': 'kendall'}, 'documents': 10, 'pairs': pairs}))


def theirs(reference, arm, means, spread=THEIRS):
  for k, d in enumerate(spread):
    (reference / arm / f'seed{k}').mkdir(parents=True)
    values = {s: None if m is None else m + d for s, m in zip(STATS, means)}
    (reference / arm / f'seed{k}' / 'summary.json').write_text(
        json.dumps({'arm': arm, 'seed': k, 'roc_auc': 0.9, 'f1_pos': None, **values}))
