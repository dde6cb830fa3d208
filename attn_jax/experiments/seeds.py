"""Experiment `seeds`: W&P's random-seed variance (§3.3).

The base model's recipe under more seeds (W&P's list by default), trained as
one program. Models of one program share the batch order (the base model's),
so here a seed changes the initial parameters only; in W&P's runs it also
reshuffled the batches, so their spread can be wider than this one.

Per test instance: the median over seeds of JSD(α_base, α_seed) (J&W's JSD,
natural log, over the words) and the mean over seeds of |ŷ_seed − ŷ_base|;
`seed_graphs.py` bins instances by the base model's max attention and splits
them by its predicted class (W&P Figure 3), with the per-instance max JSD of
J&W's adversary (the `adversarial` stage on the base model) beside them.
"""

import os

import ml_collections
import numpy as np

from attn_jax.analysis.divergences import jw_jsd
from attn_jax.core.errors import ConfigError, TrainingError
from attn_jax.core.registry import EXPERIMENTS, Section
from attn_jax.experiments.experiment import DIVERGED, Experiment
from attn_jax.plots import wiegreffe_pinter_figures
from attn_jax.stages import stage_store
from attn_jax.training.evaluation import evaluate_probs

WP_SEEDS = '50,257,500231,100078,12504,90754789,8988812,2'  # seeds.txt, less the base's 10
BIN_EDGES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _defaults(dataset, encoder, variant) -> ml_collections.ConfigDict:
  del dataset, encoder
  return ml_collections.ConfigDict({'seeds': '1,2' if variant == 'smoke' else WP_SEEDS})


def seed_list(section) -> list[int]:
  try:
    seeds = [int(s) for s in section.seeds.split(',') if s.strip()]
  except ValueError as e:
    raise ConfigError(f'experiment.seeds.seeds={section.seeds!r} is not comma-separated '
                      'integers, e.g. 50,257,2') from e
  return seeds


def _check(section, cfg):
  try:
    seeds = seed_list(section)
  except ConfigError as e:
    return str(e)
  if not seeds or len(set(seeds)) != len(seeds):
    return f'seeds={section.seeds!r} must name at least one seed, none twice'
  if cfg.seed in seeds:
    return f'seeds={section.seeds!r} includes the base model\'s own seed {cfg.seed}'
  return None


def _jsd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
  return np.asarray(jw_jsd(p, q), np.float64)


def max_attention_bin(max_attention: np.ndarray) -> np.ndarray:
  """[N] -> bin index 0..3 of [0, .25), [.25, .5), [.5, .75), [.75, 1]."""
  return np.clip(np.digitize(max_attention, BIN_EDGES[1:-1]), 0, len(BIN_EDGES) - 2)


def adversary_max_jsd(folder: str, num_docs: int) -> np.ndarray:
  """[N] the J&W adversary's max JSD per document (NaN where not analysed)."""
  summary, problem = stage_store.read_summary(folder)
  if summary is None:
    raise TrainingError(f'{problem}; delete {folder} and rerun the same run.py command: '
                        'the adversarial stage is recomputed first')
  values = stage_store.load_arrays(folder, summary)['max_jsd']
  out = np.full(num_docs, np.nan)
  out[:min(len(values), num_docs)] = values[:num_docs]
  return out


def _cell_median(values, rows):
  values = values[rows]
  values = values[~np.isnan(values)]
  return float(np.median(values)) if len(values) else None


def _run(ctx):
  seeds = seed_list(ctx.section)
  configs = {f'seed{s}': ctx.member_config(seed=s) for s in seeds}
  trained = ctx.train('seeds', configs)
  if any(p is None for p in trained.params):
    bad = [os.path.basename(w) for w, p in zip(trained.workdirs, trained.params) if p is None]
    raise TrainingError(DIVERGED.format(what=f'seed models {", ".join(bad)}'))
  base_probs, base_alpha = ctx.outputs(ctx.model, ctx.params, ctx.split_name)
  jsd, diffs, f1, accuracy = [], [], [], []
  for params in trained.params:
    probs, alpha = ctx.outputs(trained.model, params, ctx.split_name)
    jsd.append(_jsd(base_alpha, alpha))
    diffs.append(np.abs(probs - base_probs))
    metrics = evaluate_probs(ctx.split.labels, probs)
    f1.append(metrics['f1_pos'])
    accuracy.append(metrics['accuracy'])
  jsd, diffs = np.stack(jsd, axis=1), np.stack(diffs, axis=1)  # [N, S]
  median_jsd, y_diff = np.median(jsd, axis=1), diffs.mean(axis=1)
  max_attention = base_alpha.max(axis=1)
  predicted = (base_probs > 0.5).astype(np.int32)
  adversary = adversary_max_jsd(ctx.stages['adversarial'], len(ctx.split))
  bins = max_attention_bin(max_attention)
  cells = []
  for b in range(len(BIN_EDGES) - 1):
    for c in (0, 1):
      rows = (bins == b) & (predicted == c)
      cells.append({'bin': f'[{BIN_EDGES[b]:.2f}, {BIN_EDGES[b + 1]:.2f}' + (']' if b == 3 else ')'),
                    'predicted': c, 'n': int(rows.sum()),
                    'median_seed_jsd': _cell_median(median_jsd, rows),
                    'median_adversary_jsd': _cell_median(adversary, rows)})
  analysed = adversary[~np.isnan(adversary)]
  summary = {
      'n': len(ctx.split), 'base_seed': ctx.cfg.seed, 'seeds': seeds,
      'median_jsd': {'median': float(np.median(median_jsd)), 'mean': float(np.mean(median_jsd)),
                     'q10': float(np.quantile(median_jsd, 0.1)),
                     'q90': float(np.quantile(median_jsd, 0.9)),
                     'fraction_below_0.1': float(np.mean(median_jsd < 0.1))},
      'y_diff': {'mean': float(np.mean(y_diff)), 'median': float(np.median(y_diff))},
      'jw_adversary': ({'n': len(analysed), 'mean_max_jsd': float(np.mean(analysed)),
                        'median_max_jsd': float(np.median(analysed))} if len(analysed) else None),
      'cells': cells,
      'seed_models': {name: {'mean': float(np.mean(v)), 'std': float(np.std(v)), 'values': list(map(float, v))}
                      for name, v in (('f1_pos', f1), ('accuracy', accuracy))},
      'training_seconds': round(trained.seconds, 1)}
  arrays = {'median_jsd': median_jsd, 'y_diff': y_diff, 'max_attention': max_attention,
            'predicted': predicted, 'jsd': jsd, 'adversary_max_jsd': adversary,
            'seeds': np.array(seeds)}
  return arrays, summary


SEEDS = EXPERIMENTS.register(Experiment(
    name='seeds', paper='wp', order=20, section=Section(_defaults, _check), run=_run, stages=('adversarial',),
    figures=lambda arrays, summary, directory: wiegreffe_pinter_figures.seed_violins(arrays, directory)))
