"""Train-or-restore, then evaluate, analyse and run the experiments that train
more models on top (`config.experiments`): what `python run.py` does.

Checks come first (config, workdirs, data files), so bad input fails before
any expensive work. A workdir whose training finished is restored, not
retrained; one with an unfinished run resumes it. With `config.sweep` the
models of the sweep train as one program (`attn_jax.workdirs.model_axis`), then each
is evaluated and analysed in its own workdir.
"""

import json
import os
import time
from typing import Callable

import jax
import ml_collections
import numpy as np

from attn_jax import config as config_lib, experiments
from attn_jax.core import atomic_io, compilation, hosts, leases, sharding
from attn_jax.core.errors import CheckpointError, ConfigError, TrainingError
from attn_jax.data.dataset import load_dataset, sample_size_with_two_classes
from attn_jax.models import build_model
from attn_jax.plots.training_curves import plot_training_curves
from attn_jax.workdirs import initial_params as initial_params_lib, model_axis, workdir as workdir_lib
from attn_jax.stages import stage_store
from attn_jax.stages.stage_runner import run_analyses
from attn_jax.training import step as train_step_lib, trainer
from attn_jax.training.evaluation import evaluate_split


def default_workdir(cfg: ml_collections.ConfigDict) -> str:
  m = cfg.model
  projection = m.projection + (f'{m.sparsegen_lambda:g}' if m.projection == 'sparsegen' else '')
  sweep = ('_' + cfg.sweep.partition('=')[0].rpartition('.')[2] + 's') if cfg.sweep.strip() else ''
  return os.path.join('workdirs', f'{cfg.name}_{m.attention}_{projection}{sweep}')


def check(cfg: ml_collections.ConfigDict, workdir: str | None = None) -> None:
  """Raises ConfigError for what `cfg` cannot run here, before any work: an
  invalid config, more devices than there are, batches that do not split over
  them, training asked of several hosts, a lease setting that would evict
  live holders."""
  config_lib.validate(cfg)
  leases.stale_after_seconds()
  sharding.check(cfg.analysis.batch_size, cfg.devices)
  if workdir is not None:
    hosts.check_runnable(cfg.experiments, trainer.is_finished(workdir))


def check_selection_split(cfg: ml_collections.ConfigDict, dataset) -> None:
  """Refuses, before training, a selection split of one class: its ROC-AUC
  (`train.select_by`) is undefined, so no epoch would ever be selected and
  no model evaluated, in this workdir or a new one. With
  `data.max_docs_per_split` the message gives the smallest value that works."""
  t = cfg.train
  labels = dataset.splits[t.select_on].labels
  if t.select_by != 'roc_auc' or len(np.unique(labels)) > 1:
    return
  what = (f'the {t.select_on} split (train.select_on) holds {len(labels)} document(s), all of class '
          f'{int(labels[0]) if len(labels) else "none"}, so its ROC-AUC, the model selection\'s score '
          '(train.select_by), is undefined and no epoch would be selected')
  limit = cfg.data.max_docs_per_split
  works = None if limit is None else sample_size_with_two_classes(cfg.data, t.select_on)
  if works is not None:
    raise ConfigError(f'--config.data.max_docs_per_split={limit} is too small: {what}; give '
                      f'--config.data.max_docs_per_split={works} or more (the smallest whose sample of '
                      f'{t.select_on} holds both classes), or leave it out')
  raise ConfigError(f'{what}: select by --config.train.select_by=accuracy, or give data with both classes')


def _check_workdirs(cfg, members, workdir, log) -> None:
  workdir_lib.check_config(cfg, workdir, log)
  for m in members:
    if m.workdir != workdir:
      workdir_lib.check_config(m.cfg, m.workdir, log)


def output_dirs(members, workdir: str, output_dir: str | None) -> list[str]:
  """Where each model's evaluation and analyses go: its workdir, or under
  `output_dir` (one folder per model of a program, as in the workdir)."""
  if not output_dir:
    return [m.workdir for m in members]
  return [os.path.join(output_dir, os.path.relpath(m.workdir, workdir)) if m.workdir != workdir
          else output_dir for m in members]


def run(cfg: ml_collections.ConfigDict, workdir: str, log: Callable[[str], None] = print,
        output_dir: str | None = None) -> list[dict]:
  """Trains (or resumes, or restores) the model(s) of `cfg`, evaluates each on
  the test split, then runs the analysis stages `cfg.analyses` names on each.

  Writes under each model's workdir: config.json, vocab.json, data.json,
  checksums.json, checkpoints/, metrics.jsonl; and under its output folder
  (the workdir unless `output_dir` is given, e.g. for a read-only workdir):
  eval.json, predictions_test.npz, training_curves.{png,svg},
  analyses/<stage>/<key>/ (see attn_jax.stages) and
  experiments/<name>/<key>/ (see attn_jax.experiments). Files whose bytes would not
  change are not rewritten.

  Returns:
    the contents of each model's eval.json, in sweep order.

  Raises:
    TrainingError: some model's loss became NaN (the others are finished and
      analysed first).
  """
  check(cfg, workdir)
  atomic_io.require_folder(workdir, 'the workdir', 'give a folder (new, or one a run wrote) with --workdir')
  if output_dir:
    atomic_io.require_folder(output_dir, '--output_dir', 'give a folder (new, or one this run wrote)')
  compilation.enable_cache(cfg.compilation_cache)
  members = model_axis.members(cfg, workdir)
  model_axis.check_shared(members)
  _check_workdirs(cfg, members, workdir, log)
  outs = output_dirs(members, workdir, output_dir)
  for member, out in zip(members, outs):
    if out != member.workdir:
      workdir_lib.check_config(member.cfg, out, log)
  started = time.time()
  dataset = load_dataset(cfg.data)
  check_selection_split(cfg, dataset)
  for path in {workdir, *(m.workdir for m in members), *outs}:
    workdir_lib.check_data(dataset, path, log)
  sizes = ', '.join(f'{s} {len(v)}' for s, v in dataset.splits.items())
  log(f'{dataset.name}: {sizes}; vocabulary {len(dataset.vocab)}; fingerprint {dataset.fingerprint}')
  # Each folder once, with its own config (the group's is the sweep's); an
  # --output_dir gets the record too: the reports read it beside eval.json.
  described = {workdir: cfg}
  for m, out in zip(members, outs):
    described.setdefault(m.workdir, m.cfg)
    described.setdefault(out, m.cfg)
  if hosts.primary():  # what every host would write alike: one writes it
    for path, folder_cfg in described.items():
      workdir_lib.write_description(folder_cfg, dataset, path)
      workdir_lib.rebuild_checksums(folder_cfg, dataset, path, log)
  hosts.barrier('attn_jax-described')
  if len(members) > 1:
    log(f'{len(members)} models as one program: ' + ', '.join(os.path.basename(m.workdir) for m in members))

  model = build_model(cfg.model, len(dataset.vocab))
  # One process trains a workdir; another that asks for it waits, then finds
  # it finished and restores it (or refuses, with wait_for_lock=False).
  with leases.guarded(os.path.join(workdir, 'training' + leases.SUFFIX), f'training in {workdir}',
                      cfg.wait_for_lock, log):
    progress = trainer.train(
        model, dataset, members, workdir,
        lambda m: initial_params_lib.initial_params(model, m.cfg, dataset, log, m.workdir), log)
  # Each model is evaluated and analysed as the model it trained as: a sweep
  # member's config may differ from the base's in what is not a shape (its
  # sparsegen λ), so it gets its own model and predict (one per distinct config).
  own_models = {}
  results, failed = [], []
  for member, out, record in zip(members, outs, progress['models']):
    own_key = json.dumps(member.cfg.model.to_dict(), sort_keys=True, default=str)
    if own_key not in own_models:
      own = build_model(member.cfg.model, len(dataset.vocab))
      own_models[own_key] = (own, jax.jit(train_step_lib.make_predict(own)))
    model, predict = own_models[own_key]
    if record['failed'] is not None:
      where = record['failed']
      failed.append(f'{member.workdir} (epoch {where["epoch"] + 1} of {cfg.train.epochs}, batch '
                    f'{where["batch"] + 1}: loss {where["loss"]})')
      continue
    results.append(_finish(model, predict, member, out, record, dataset, progress, len(members),
                           started, log))
  if failed:
    raise TrainingError(
        f'the loss of {len(failed)} of {len(members)} models became non-finite and they were '
        'not evaluated: ' + '; '.join(failed) + '. The others are finished. Check the data and '
        'pretrained vectors, or lower --config.train.learning_rate, in a new --workdir.')
  return results


def _finish(model, predict, member, out, record, dataset, progress, num_models, started, log) -> dict:
  """Evaluates one trained model on the test split and runs its analyses,
  writing to `out`; `record` is its entry in the training progress."""
  cfg, workdir = member.cfg, member.workdir
  restored = trainer.restore_best(model, workdir, log, repair=hosts.primary())
  if restored is None:
    raise CheckpointError(f'{workdir} has no selected model; delete it and train again')
  params, selection = restored
  buckets = trainer.dataset_buckets(dataset, cfg.data.bucket_growth, model,
                                    cfg.data.get('max_batch_tokens'))
  test = dataset.splits['test']
  metrics, probs = evaluate_split(predict, params, test, cfg.train.eval_batch_size, buckets,
                                  classes=model.num_classes)
  results = {**metrics, 'dataset': dataset.name, 'split': 'test', 'selected_epoch': selection['epoch'],
             'selected_step': selection['step'],
             f'selection_{selection["split"]}_{selection["metric"]}': selection['score'],
             'data_fingerprint': dataset.fingerprint, 'params': trainer.count_params(params),
             'training_seconds': round(progress['seconds'], 1), 'models_in_program': num_models}
  if progress.get('environments'):  # the installs and machines it trained in (core/environment.py)
    results['trained_in'] = progress['environments']
  if dataset.source:  # what is unusual about the files the data came from (report: "data source")
    results['data_source'] = dataset.source
  # Nothing that changes from run to run (this run's wall time, the folder's
  # path) goes in: a rerun that changes nothing rewrites nothing.
  if hosts.primary():
    atomic_io.write_json(workdir_lib.paths(out)['eval'], results)
    atomic_io.atomic_write(os.path.join(out, 'predictions_test.npz'), lambda f: np.savez(
        f, probs=probs, labels=test.labels, ids=np.array(test.ids)), mode='wb')
    plot_training_curves(record['history'], cfg.train.select_on, selection['epoch'],
                         os.path.join(out, 'training_curves'))
  scores = (f'f1(pos) {metrics["f1_pos"]:.4f}  roc-auc {metrics["roc_auc"]:.4f}'
            if 'roc_auc' in metrics else f'macro-f1 {metrics["macro_f1"]:.4f}')
  log(f'{workdir}: test ({len(test)}): accuracy {metrics["accuracy"]:.4f}  {scores}  (selected epoch '
      f'{selection["epoch"] + 1} of {cfg.train.epochs}; {time.time() - started:.0f} s this run) '
      f'-> {workdir_lib.paths(out)["eval"]}')
  summaries = run_analyses(model, params, dataset.splits, cfg, out, dataset.fingerprint, log,
                           also=experiments.stage_requirements(cfg))
  if experiments.names(cfg):
    folders = {name: stage_store.result_dir(out, s['key']) for name, s in summaries.items()}
    experiments.run_experiments(model, params, cfg, dataset, out, folders, log)
  return results
