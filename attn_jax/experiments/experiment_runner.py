"""Running the experiments a config asks for (`run_experiments`), each one
keyed, skipped when done and intact, and resumable (`run_experiment`).

Its models train through the model-axis trainer, which checkpoints and
resumes them; its numbers are recomputed from the trained models when a run
is killed after training, and written atomically, summary last.
"""

import hashlib
import json
import os
import time
from typing import Callable

import ml_collections
import numpy as np
import tqdm

from attn_jax import config as config_lib
from attn_jax.core import atomic_io, digests, leases
from attn_jax.core.registry import EXPERIMENTS
from attn_jax.experiments import experiment_store as store
from attn_jax.experiments.experiment import Experiment, ExperimentContext
from attn_jax.stages import stage_store
from attn_jax.stages.stage import params_digest


def _hash(value) -> str:
  return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _settings(cfg, exp: Experiment) -> dict:
  """The experiment's config section as it keys results (`Section.key_items`:
  less runtime keys, and keys added later at their old value)."""
  section = cfg.experiment.get(exp.name)  # None: an experiment with no settings of its own
  return exp.section.key_items(section.to_dict() if section is not None else {})


def experiment_key(exp: Experiment, cfg, params_hash: str, data_fingerprint: str,
                   input_hashes: dict, input_models: dict) -> dict:
  """What the results depend on: the base model (its params and the config
  that trains its relatives), the data, the section, the inputs' keys.

  `models` hashes what the trained models alone depend on — the same less
  the analysis split and stages, with the inputs' `models` hashes — so
  analysis settings (`analysis.max_docs`, the J&W adversary's) recompute
  the numbers but never retrain a model.
  """
  models = {'experiment': exp.name, 'version': exp.version, 'params': params_hash,
            'data': data_fingerprint, 'training': _hash(config_lib.training_items(cfg)),
            'settings': _settings(cfg, exp), 'inputs': dict(sorted(input_models.items()))}
  key = {**models, 'split': cfg.analysis.split, 'inputs': dict(sorted(input_hashes.items())),
         'models': _hash(models)}
  key['hash'] = _hash(key)
  return key


def _save_npz(path: str, arrays: dict) -> None:
  atomic_io.atomic_write(path, lambda f: np.savez(f, **arrays), mode='wb')


def run_experiment(exp: Experiment, model, params, cfg, dataset, out_dir: str,
                   stages: dict, inputs: dict, log: Callable[[str], None] = print) -> tuple[str, dict]:
  """Runs (or finds intact) `exp` on a base model; returns (folder, summary).

  `stages` maps each stage of `exp.stages` to its result folder; `inputs`
  each experiment of `exp.requires` to its (folder, summary).
  """
  hashes = {f'experiment:{n}': s['key']['hash'] for n, (_, s) in inputs.items()}
  hashes.update({f'stage:{n}': stage_store.read_summary(d)[0]['key']['hash'] for n, d in stages.items()})
  models = {n: s['key']['models'] for n, (_, s) in inputs.items()}
  key = experiment_key(exp, cfg, params_digest(params), dataset.fingerprint, hashes, models)
  directory = store.folder(out_dir, key)
  summary, problem = store.read(directory)
  lock, what = os.path.join(directory, 'experiment' + leases.SUFFIX), f'experiment {exp.name} ({directory})'
  if summary is not None:
    log(f'{exp.name}: results for this model and these settings exist in {directory}; '
        'verified and skipped')
    leases.clear_stale(lock, what, log)  # a holder killed between its summary and its release
    _point(out_dir, exp.name, directory, summary)
    return directory, summary
  with leases.guarded(lock, what, cfg.wait_for_lock, log):
    summary, problem = store.read(directory)
    if summary is not None:  # another process finished it while this one waited
      log(f'{exp.name}: finished by the process this one waited for; reused')
      _point(out_dir, exp.name, directory, summary)
      return directory, summary
    return _compute(exp, model, params, cfg, dataset, out_dir, stages, inputs, log, key,
                    directory, problem)


def _compute(exp, model, params, cfg, dataset, out_dir, stages, inputs, log, key, directory,
             problem) -> tuple[str, dict]:
  """Trains and evaluates the experiment's models and writes its results (under its lease)."""
  if problem:
    log(f'{exp.name}: {problem}; recomputing')
  os.makedirs(directory, exist_ok=True)
  started = time.time()
  ctx = ExperimentContext(model, params, cfg, dataset, directory, store.models_dir(out_dir, key),
                          out_dir, exp.name, log, stages, inputs)
  arrays, summary = exp.run(ctx)
  # The experiment's cost whether its models trained in this process, an
  # earlier (killed) one, or were restored: training as the checkpoints
  # record it, plus this run's evaluation.
  evaluation = time.time() - started - ctx.training_wall
  summary = {'experiment': exp.name, 'dataset': dataset.name, 'split': cfg.analysis.split,
             **summary, 'key': key, 'models_folder': os.path.relpath(ctx.models_dir, out_dir),
             'evaluation_seconds': round(evaluation, 1),
             'seconds': round(summary.get('training_seconds', 0.0) + evaluation, 1)}
  _save_npz(os.path.join(directory, store.RESULTS), arrays)
  figures = exp.figures(arrays, summary, directory)
  summary['figures'] = [os.path.relpath(p, out_dir) for p in figures]
  summary['sha256'] = digests.of_files(
      directory, [store.RESULTS] + [os.path.relpath(p, directory) for p in figures])
  summary = digests.sealed(summary, stage_store.SELF_HASH)
  atomic_io.write_json(os.path.join(directory, store.SUMMARY), summary)
  _point(out_dir, exp.name, directory, summary)
  log(f'{exp.name}: done in {summary["seconds"]:.0f} s -> {directory}')
  return directory, summary


def _point(out_dir: str, name: str, directory: str, summary: dict) -> None:
  """The newest summary, copied to experiments/<name>/summary.json with its folder."""
  copy = {k: v for k, v in summary.items() if k not in ('sha256', stage_store.SELF_HASH)}
  copy['folder'] = os.path.relpath(directory, out_dir)
  atomic_io.write_json(os.path.join(store.root(out_dir, name), store.SUMMARY), copy)


# ---------------------------------------------------------------- the experiments a config asks for

def names(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The experiments `cfg.experiments` asks for, with those they read, in running order."""
  return config_lib.experiments(cfg)


def stage_requirements(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The analysis stages the experiments of `cfg` read from the base model."""
  return tuple(sorted({s for n in names(cfg) for s in EXPERIMENTS[n].stages}))


def run_experiments(model, params, cfg, dataset, out_dir: str, stage_folders: dict,
                    log: Callable[[str], None] = print) -> dict:
  """Runs the experiments `cfg.experiments` names on one trained model;
  returns {name: summary}. `stage_folders` maps analysis stages to the result
  folders this run made or verified."""
  done, summaries = {}, {}
  # Each experiment's training shows its own bar with time left; this one
  # counts the experiments, the one running named in its description.
  bar = tqdm.tqdm(total=len(names(cfg)), unit='experiment', dynamic_ncols=True,
                  disable=not cfg.train.progress)
  with bar:
    for name in names(cfg):
      bar.set_description(f'experiment {name}')
      exp = EXPERIMENTS[name]
      done[name] = run_experiment(exp, model, params, cfg, dataset, out_dir,
                                  {s: stage_folders[s] for s in exp.stages},
                                  {r: done[r] for r in exp.requires}, log)
      summaries[name] = done[name][1]
      bar.update()
  return summaries
