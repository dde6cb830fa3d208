"""Train-or-restore, then evaluate: what `python run.py` does.

Checks come first (config, workdir, data files), so bad input fails before
any expensive work. A workdir whose training finished is restored, not
retrained; one with an unfinished run resumes it.
"""

import os
import time
from typing import Callable

import jax
import ml_collections
import numpy as np

from attn_jax import atomic_io, config as config_lib, workdir as workdir_lib
from attn_jax.data.dataset import Dataset, load_dataset
from attn_jax.data.word_vectors import load_word_vectors
from attn_jax.errors import CheckpointError
from attn_jax.models import Model, build_model
from attn_jax.plots.training_curves import plot_training_curves
from attn_jax.stages import run_analyses
from attn_jax.training import step as train_step_lib, trainer
from attn_jax.training.evaluation import evaluate_split


def default_workdir(cfg: ml_collections.ConfigDict) -> str:
  m = cfg.model
  projection = m.projection + (f'{m.sparsegen_lambda:g}' if m.projection == 'sparsegen' else '')
  return os.path.join('workdirs', f'{cfg.name}_{m.attention}_{projection}')


def initial_params(model: Model, cfg: ml_collections.ConfigDict, dataset: Dataset, log):
  """Fresh params, with pretrained word vectors when the config names a file."""
  params = model.init(trainer.init_key(cfg.seed))
  if cfg.model.embeddings_file:
    matrix, found = load_word_vectors(cfg.model.embeddings_file, dataset.vocab, cfg.model.embed_dim)
    log(f'pretrained vectors: {found} of {len(dataset.vocab)} vocabulary words found')
    params = {**params, 'embedding': {'table': jax.numpy.asarray(matrix)}}
  return params


def run(cfg: ml_collections.ConfigDict, workdir: str, log: Callable[[str], None] = print) -> dict:
  """Trains (or resumes, or restores), evaluates on the test split, then runs
  the analysis stages `cfg.analyses` names.

  Writes under `workdir`: config.json, vocab.json, data.json, checkpoints/,
  metrics.jsonl, eval.json, predictions_test.npz, training_curves.{png,svg}
  and analyses/<stage>/ (see attn_jax.stages).

  Returns:
    the contents of eval.json.
  """
  config_lib.validate(cfg)
  workdir_lib.check_config(cfg, workdir)
  started = time.time()
  dataset = load_dataset(cfg.data)
  workdir_lib.check_data(dataset, workdir)
  sizes = ', '.join(f'{s} {len(v)}' for s, v in dataset.splits.items())
  log(f'{dataset.name}: {sizes}; vocabulary {len(dataset.vocab)}; fingerprint {dataset.fingerprint}')
  workdir_lib.write_description(cfg, dataset, workdir)

  model = build_model(cfg.model, len(dataset.vocab))
  progress = trainer.train(model, dataset, cfg, workdir,
                           lambda: initial_params(model, cfg, dataset, log), log)
  restored = trainer.restore_best(model, workdir)
  if restored is None:
    raise CheckpointError(f'{workdir} has no selected model; delete it and train again')
  params, selection = restored

  predict = jax.jit(train_step_lib.make_predict(model))
  buckets = trainer.dataset_buckets(dataset, cfg.data.bucket_growth)
  test = dataset.splits['test']
  metrics, probs = evaluate_split(predict, params, test, cfg.train.eval_batch_size, buckets)
  results = {**metrics, 'dataset': dataset.name, 'split': 'test', 'selected_epoch': selection['epoch'],
             'selected_step': selection['step'],
             f'selection_{selection["split"]}_{selection["metric"]}': selection['score'],
             'data_fingerprint': dataset.fingerprint, 'params': trainer.count_params(params),
             'training_seconds': round(progress['seconds'], 1),
             'seconds_this_run': round(time.time() - started, 1)}
  atomic_io.write_json(workdir_lib.paths(workdir)['eval'], results)
  atomic_io.atomic_write(os.path.join(workdir, 'predictions_test.npz'), lambda f: np.savez(
      f, probs=probs, labels=test.labels, ids=np.array(test.ids)), mode='wb')
  plot_training_curves(progress['history'], cfg.train.select_on, selection['epoch'],
                       os.path.join(workdir, 'training_curves'))
  log(f'test ({len(test)}): accuracy {metrics["accuracy"]:.4f}  f1(pos) {metrics["f1_pos"]:.4f}  '
      f'roc-auc {metrics["roc_auc"]:.4f}  (selected epoch {selection["epoch"]}) -> '
      f'{workdir_lib.paths(workdir)["eval"]}')
  run_analyses(model, params, dataset.splits, cfg, workdir, dataset.fingerprint, log)
  return results
