"""Experiments `roar` and `recursive_roar`: remove and retrain (Hooker et al.,
NeurIPS 2019), and its recursive form for text (Madsen et al., Findings of
EMNLP 2022, §3; code AndreasMadsen/nlp-roar-interpretability).

For each importance measure (`measures`: attention α, registered measures of
`attn_jax.core.registry.MEASURES`, and a random ranking) and each fraction k
(`fractions`), the top k % of every document's words by the measure are
replaced with a mask token in the train, dev and test splits, and a model of
the base model's recipe is trained from scratch on them (its seed the base
model's). Its test accuracy against k, beside random's, says how much of
what the model needs the measure found: a faithful measure's curve falls
below random's.

* `roar` ranks every document once, by the base model (k = 0).
* `recursive_roar` ranks at each k by the model retrained at the previous k,
  on the documents as that model read them: the words masked before stay
  masked and the newly top-ranked of the others join them, so the mask
  grows with the retrained model's own view of the remaining words.

Each k is one program of the model-axis trainer whose models are the
measures (`training.masked_training`: one copy of the data, each model its
own masks), so it resumes after a kill and a finished k is restored, not
retrained; the rankings of each k are saved beside its models. The mask
token is one more vocabulary id, its embedding starting at zero as a word
the pretrained vectors lack does.
"""

import dataclasses
import hashlib
import os
from typing import Callable

import jax
import ml_collections
import numpy as np
from ml_collections import config_dict

from attn_jax.analysis import eraser_metrics, measure as measure_lib, needs, roar_masking
from attn_jax.core import atomic_io
from attn_jax.core.errors import TrainingError
from attn_jax.core.registry import EXPERIMENTS, MEASURES, Section
from attn_jax.data import split_batches, vocabulary
from attn_jax.experiments.experiment import Experiment, ExperimentContext, comma_floats
from attn_jax.models import build_model
from attn_jax.plots import roar_figures
from attn_jax.training.loss import LOSSES
from attn_jax.training import masked_training

ALPHA, RANDOM = 'alpha', 'random'  # not registered measures: the model's attention, and the baseline
# Madsen et al.'s four (attention, gradient, input × gradient, integrated gradients), J&W's
# leave-one-out, and the random baseline.
MEASURES_DEFAULT = 'alpha,gradient_norm,gradient_x_input,integrated_gradients,leave_one_out,random'
FRACTIONS_DEFAULT = '0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9'
RANKS_FILE = 'ranks.npz'
MASK_TOKEN = '<MASK>'


def _defaults(dataset, encoder, variant) -> ml_collections.ConfigDict:
  del dataset, encoder
  return ml_collections.ConfigDict({
      'measures': 'alpha,random' if variant == 'smoke' else MEASURES_DEFAULT,
      'fractions': '0.5' if variant == 'smoke' else FRACTIONS_DEFAULT,
      'rounding': 'floor',
      'seed': config_dict.placeholder(int),  # None: the base model's
      'batch_size': 64})  # documents a batch when the measures rank them (runtime)


def measure_names(section) -> list[str]:
  return [m.strip() for m in section.measures.split(',') if m.strip()]


def fractions(section) -> list[float]:
  return comma_floats(section.fractions)


def _check(section, cfg) -> str | None:
  del cfg
  names = measure_names(section)
  unknown = [n for n in names if n not in (ALPHA, RANDOM) and n not in MEASURES]
  if unknown or not names or len(set(names)) != len(names):
    return (f'measures={section.measures!r}: each once, from {ALPHA}, {RANDOM}, '
            f'{", ".join(MEASURES)}' + (f' (unknown: {", ".join(unknown)})' if unknown else ''))
  try:
    values = fractions(section)
  except ValueError:
    return f'fractions={section.fractions!r} is not comma-separated numbers, e.g. 0.1,0.5,0.9'
  if not values or sorted(set(values)) != values or not all(0 < v < 1 for v in values):
    return f'fractions={section.fractions!r} must be increasing numbers in (0, 1), e.g. 0.1,0.5,0.9'
  return None


def _scores_fn(model, name: str) -> Callable:
  """(params, tokens, lengths, keys) -> [B, L] scores of measure `name` on `model`."""
  if name == ALPHA:
    return lambda params, tokens, lengths, keys: model.forward(params, tokens, lengths).alpha
  if name == RANDOM:
    return lambda params, tokens, lengths, keys: eraser_metrics.random_scores(
        keys, lengths, tokens.shape[1])[0]
  record = MEASURES[name]
  return lambda params, tokens, lengths, keys: record.scores(model, params, tokens, lengths)


_JITTED: dict = {}


def _ranks_fn(model, name: str, mask_id: int, rounding: str) -> Callable:
  """Jitted (params, tokens, lengths, keys, previous [B, W] ranks, p, q) -> [B, W]
  ranks by `name` of the documents with the previous mask applied, those
  words first (p = 0: no previous mask)."""
  key = (id(model), name, mask_id, rounding)
  if key not in _JITTED:
    scores_of = _scores_fn(model, name)

    def ranks(params, tokens, lengths, keys, previous, p, q):
      masked = roar_masking.masked_words(previous, lengths, p, q, rounding)
      tokens = roar_masking.mask_tokens(tokens, masked, mask_id)
      return roar_masking.word_ranks(scores_of(params, tokens, lengths, keys), lengths, first=masked)
    _JITTED[key] = (model, jax.jit(ranks))
  return _JITTED[key][1]


def rank_tables(ctx: ExperimentContext, models: list, params: list, names: list, previous: dict,
                fraction: tuple, mask_id: int, step: int) -> dict:
  """{split: RankTable} of R rankings: ranking r by measure names[r] of
  models[r] with params[r], on the documents masked by `previous[split]`'s
  row r at `fraction` (p, q) (p = 0: unmasked)."""
  section, seed = ctx.section, _seed(ctx)
  buckets = ctx.buckets()
  tables = {}
  for s_index, (split_name, split) in enumerate(sorted(ctx.dataset.splits.items())):
    rows = [None] * len(split)
    base = jax.random.fold_in(jax.random.fold_in(jax.random.PRNGKey(seed), step), s_index)
    for batch in split_batches.eval_batches(split, section.batch_size, buckets):
      width = batch.tokens.shape[1]
      keys = jax.vmap(lambda i: jax.random.fold_in(base, i))(np.maximum(batch.index, 0).astype(np.uint32))
      prev = (previous[split_name].batch(batch.index, width) if previous
              else np.full((len(names),) + batch.tokens.shape, roar_masking.NOT_RANKED, np.int32))
      out = np.stack([np.asarray(_ranks_fn(m, n, mask_id, section.rounding)(
          p, batch.tokens, batch.lengths, keys, prev[r], *fraction)) for r, (m, p, n) in
          enumerate(zip(models, params, names))])  # [R, B, W]
      for b in np.flatnonzero(batch.index >= 0):
        rows[batch.index[b]] = out[:, b, :len(split.rows[batch.index[b]])]
    tables[split_name] = masked_training.RankTable.from_rows(rows)
  return tables


def metrics_row(metrics: dict) -> dict:
  """The metrics a ROAR point keeps: accuracy, and F1 and ROC-AUC (binary) or macro F1 (more classes)."""
  return {k: float(metrics[k]) for k in ('accuracy', 'f1_pos', 'roc_auc', 'macro_f1') if k in metrics}


def _seed(ctx) -> int:
  return ctx.section.seed if ctx.section.seed is not None else ctx.cfg.seed


def _saved_tables(path: str):
  if not os.path.exists(path):
    return None
  with np.load(path) as f:
    return {s: masked_training.RankTable(f[f'{s}/flat'], f[f'{s}/offsets'], f[f'{s}/widths'])
            for s in {k.split('/')[0] for k in f.files}}


def _save_tables(path: str, tables: dict) -> None:
  arrays = {f'{s}/{field}': getattr(t, field) for s, t in tables.items() for field in ('flat', 'offsets', 'widths')}
  atomic_io.atomic_write(path, lambda f: np.savez(f, **arrays), mode='wb')


def _usable(ctx, names: list) -> list:
  """The measures the base model can take (`needs.refusal`), logged otherwise."""
  kept = []
  for n in names:
    problem = None if n in (ALPHA, RANDOM) else needs.refusal(ctx.model, n)
    if problem:
      ctx.log(f'{ctx.name}: {n} left out: {problem}')
    else:
      kept.append(n)
  return kept


def _run(ctx: ExperimentContext, recursive: bool):
  section, seed = ctx.section, _seed(ctx)
  names = _usable(ctx, measure_names(section))
  ks = fractions(section)
  vocab = len(ctx.dataset.vocab)
  mask_id = vocab  # one id past the vocabulary
  masked_model = build_model(ctx.cfg.model, vocab + 1)
  masked_ctx = with_mask_token(ctx)
  loss = LOSSES[ctx.cfg.train.loss]
  member = ctx.member_config(seed=seed)
  base_metrics, _ = ctx.evaluate(ctx.model, ctx.params, ctx.split_name)
  accuracy = np.full((len(names), len(ks)), np.nan)
  rows, seconds = [], 0.0
  ranked_by = ([ctx.model] * len(names), [ctx.params] * len(names))
  previous, previous_fraction = None, (0, 1)
  for j, k in enumerate(ks):
    set_name = f'k{round(100 * k):02d}'
    # ROAR ranks once (the base model's ranking serves every k, kept beside
    # the first k's models); recursive ROAR ranks at every k.
    ranked_in = set_name if recursive or j == 0 else f'k{round(100 * ks[0]):02d}'
    path = os.path.join(ctx.group_dir(ranked_in), RANKS_FILE)
    tables = _saved_tables(path) if recursive or j == 0 else tables
    if tables is None:
      ctx.log(f'{ctx.name}: ranking every split by {", ".join(names)} for k = {k:g}')
      tables = rank_tables(ctx, *ranked_by, names, previous, previous_fraction, mask_id,
                           step=j if recursive else 0)
      os.makedirs(ctx.group_dir(ranked_in), exist_ok=True)
      _save_tables(path, tables)
    fraction = eraser_metrics.fraction_ratio(k)  # k as integers, as ERASER's counts read it
    objective = masked_training.masked_objective(loss, tables, range(len(names)), [fraction] * len(names),
                                                 mask_id, section.rounding)
    trained = masked_ctx.train(set_name, {n: member for n in names}, objective,
                               initial=lambda m: masked_training.with_mask_row(_initial(ctx, m), vocab))
    ctx.training_wall, masked_ctx.training_wall = ctx.training_wall + masked_ctx.training_wall, 0.0
    seconds += trained.seconds
    for r, (name, params) in enumerate(zip(names, trained.params)):
      if params is None:
        rows.append({'measure': name, 'k': k, 'failed': 'non-finite loss'})
        continue
      values = {'ranking': np.int32(r), 'numerator': np.int32(fraction[0]),
                'denominator': np.int32(fraction[1])}
      metrics, _ = ctx.evaluate(masked_model, params, ctx.split_name, objective, values)
      accuracy[r, j] = metrics['accuracy']
      rows.append({'measure': name, 'k': k, **metrics_row(metrics)})
    if recursive:  # the next k ranks by these models, on the documents as they read them
      if any(p is None for p in trained.params):
        raise TrainingError(f'{ctx.name}: a model at k = {k:g} diverged; the next k cannot be ranked by it')
      ranked_by = ([masked_model] * len(names), list(trained.params))
      previous, previous_fraction = tables, fraction
  # k = 100 %: every word masked, the same documents whatever the measure (one
  # model): the end of every curve, and the floor Madsen et al.'s RACU divides by.
  everything = (1, 1)
  objective = masked_training.masked_objective(loss, tables, [0], [everything], mask_id, section.rounding)
  trained = masked_ctx.train('k100', {'all_masked': member}, objective,
                             initial=lambda m: masked_training.with_mask_row(_initial(ctx, m), vocab))
  ctx.training_wall, masked_ctx.training_wall = ctx.training_wall + masked_ctx.training_wall, 0.0
  seconds += trained.seconds
  all_masked = None
  if trained.params[0] is not None:
    values = {'ranking': np.int32(0), 'numerator': np.int32(1), 'denominator': np.int32(1)}
    all_masked = metrics_row(ctx.evaluate(masked_model, trained.params[0], ctx.split_name, objective, values)[0])
  summary = {'n': len(ctx.split), 'seed': seed, 'all_masked': all_masked, 'measures': names, 'fractions': ks, 'recursive': recursive,
             'mask_id': mask_id, 'rounding': section.rounding, 'base': metrics_row(base_metrics),
             'rows': rows, 'training_seconds': round(seconds, 1)}
  return {'accuracy': accuracy, 'fractions': np.asarray(ks)}, summary


def with_mask_token(ctx: ExperimentContext) -> ExperimentContext:
  """The context whose dataset's vocabulary has the mask token last (its
  models embed one more id; their workdirs record that vocabulary)."""
  vocab = vocabulary.Vocabulary(ctx.dataset.vocab.tokens + (MASK_TOKEN,))
  fingerprint = hashlib.sha256(f'{ctx.dataset.fingerprint}+{MASK_TOKEN}'.encode()).hexdigest()[:16]
  return dataclasses.replace(ctx, dataset=dataclasses.replace(ctx.dataset, vocab=vocab, fingerprint=fingerprint))


def _initial(ctx, member):
  from attn_jax.workdirs import initial_params  # pylint: disable=g-import-not-at-top  (as ctx.train)
  return initial_params.initial_params(ctx.model, member.cfg, ctx.dataset, ctx.log, member.workdir)


def _section(recursive: bool) -> Section:
  # No `help`: run.py's --help lists every key; docs/faithfulness.md says what each does.
  return Section(_defaults, _check, choices={'rounding': ('floor', 'ceil', 'round')}, runtime=('batch_size',))


ROAR = EXPERIMENTS.register(Experiment(
    name='roar', paper='faithfulness', order=70, section=_section(False), multi_class=True,
    run=lambda ctx: _run(ctx, recursive=False),
    figures=lambda arrays, summary, directory: roar_figures.accuracy_curves(summary, directory)))

RECURSIVE_ROAR = EXPERIMENTS.register(Experiment(
    name='recursive_roar', paper='faithfulness', order=71, section=_section(True), multi_class=True,
    run=lambda ctx: _run(ctx, recursive=True),
    figures=lambda arrays, summary, directory: roar_figures.accuracy_curves(summary, directory)))
