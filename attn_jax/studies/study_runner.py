"""Running (or resuming) the arms of a study, each its seeds as one program.

Each arm is an ordinary `run.py` run of its config with `sweep='seed=0..S-1'`
in `<root>/<arm>` (`<root>/<arm>-<S>seeds` with another number of seeds than
the study's, so neither replaces the other): a rerun skips what is finished, resumes what was killed
(training from its latest checkpoint, a stage from its partial results), and
does only what is missing. `<root>/study.json` records the wall time of each
invocation per arm, so the report can say how long the study took.

An arm whose models another study already trains (the same training keys and
seeds: the fidelity study's IMDB skip-gram arm is the J&W grid's IMDB BiLSTM +
tanh row) need not train them twice: with `reuse=[<other root>]` its models
are restored from there (or trained there, once) and only its evaluations
and analyses are written under `<root>/<arm>`; finished analyses of those
models with the same key (same model, data and settings) are copied, not
computed again.
"""

import fnmatch
import os
import shutil
import time
from typing import Callable, Optional, Sequence

import ml_collections
import tqdm

from attn_jax import config as config_lib, pipeline
from attn_jax.core import atomic_io
from attn_jax.core.errors import AttnJaxError, ConfigError
from attn_jax.data.dataset import load_dataset
from attn_jax.tables import study_results
from attn_jax.training import trainer
from attn_jax.workdirs import model_axis, workdir as workdir_lib
from attn_jax.stages import stage_store as store
from attn_jax.studies import saved_models
from attn_jax.studies.arms import Arm, Study


def select(study: Study, only: Optional[str]) -> list[Arm]:
  """The arms whose names match any of the comma-separated glob patterns."""
  if not only:
    return list(study.arms)
  patterns = [p.strip() for p in only.split(',') if p.strip()]
  arms = [a for a in study.arms if any(fnmatch.fnmatch(a.name, p) for p in patterns)]
  if not arms:
    raise ConfigError(f'--only={only!r} matches no arm of {study.name}; its arms: '
                      + ', '.join(a.name for a in study.arms))
  return arms


# The record's reading belongs to the reports, which read it too.
record_path, read_record = study_results.record_path, study_results.read_record


def _note(root: str, arm: str, entry: dict) -> None:
  record = read_record(root)
  runs = record['arms'].setdefault(arm, [])
  if runs and runs[-1].get('started') == entry['started']:
    runs[-1] = entry
  else:
    runs.append(entry)
  atomic_io.write_json(record_path(root), record)


def _same_models(cfg, path: str) -> bool:
  """Whether the arm folder `path` holds the models `cfg` trains: its config
  (a workdir), or, in a folder of saved records, each model's."""
  wanted = config_lib.training_items(cfg)
  try:
    if os.path.exists(workdir_lib.paths(path)['config']):
      return config_lib.training_items(workdir_lib.load_config(path)) == wanted
    members = model_axis.members(cfg, path)
    return all(os.path.exists(workdir_lib.paths(m.workdir)['config']) and config_lib.training_items(
        workdir_lib.load_config(m.workdir)) == config_lib.training_items(m.cfg) for m in members)
  except AttnJaxError:  # a damaged folder is not a source; its own study reports it
    return False


def trained_in(cfg, roots: Sequence[str], exclude: str = '') -> Optional[str]:
  """The first arm folder under `roots` (other studies' roots, their
  workdirs or their saved records) whose models are the ones `cfg` trains:
  the same training keys (`config.training_items`), seeds included), whatever
  its analyses. None if there is none."""
  for root in roots:
    if not os.path.isdir(root):
      raise ConfigError(f'--reuse={root}: no such folder; give the root of a study run before '
                        '(e.g. workdirs/jw_grid)')
    for name in sorted(os.listdir(root)):
      path = os.path.join(root, name)
      if (os.path.abspath(path) == os.path.abspath(exclude) or not os.path.isdir(path)):
        continue
      if _same_models(cfg, path):
        return path
  return None


TRAINING_RECORDS = ('metrics.jsonl', 'embeddings.json')


def lend_analyses(cfg, source: str, here: str, log: Callable[[str], None]) -> int:
  """Copies into `here` each model's training records (per-epoch metrics,
  the vectors' coverage) and the finished, intact results of `cfg.analyses`
  that the models in `source` already have (each model's folder at the same
  place under both); a stage then finds its keyed folder and skips. Returns
  how many result folders were copied."""
  stages = [s.strip() for s in cfg.analyses.split(',') if s.strip()]
  copied = 0
  for folder, _, files in os.walk(source):
    model = os.path.relpath(folder, source)
    for name in TRAINING_RECORDS:  # what the report reads of each model's training
      dst = os.path.join(here, model, name)
      if name in files and not os.path.exists(dst):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        atomic_io.copy_file(os.path.join(folder, name), dst)
    for stage in stages:
      stage_dir = store.stage_root(folder, stage)
      for name in sorted(os.listdir(stage_dir)) if os.path.isdir(stage_dir) else []:
        src = os.path.join(stage_dir, name)
        dst = os.path.normpath(os.path.join(store.stage_root(os.path.join(here, model), stage), name))
        # Only finished, intact results; the rest is computed here.
        if os.path.exists(dst) or store.read_summary(src)[0] is None:
          continue
        partial = dst + '.lending'
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(src, partial)
        os.replace(partial, dst)  # whole or not at all
        copied += 1
  if copied:
    log(f'{copied} finished analysis result(s) of the same models copied from {source}')
  return copied


def _has_program(folder: str) -> bool:
  """Whether a program of several models trained (or began to) in `folder`."""
  return trainer.is_finished(folder) or os.path.isdir(os.path.join(folder, 'checkpoints', 'latest'))


def _alone_or_together(members, where: str, one_at_a_time: bool):
  """(members that train alone, members trained as one program). Alone: a
  run of the member's own config in its folder, the same model as in the
  program (`attn_jax.workdirs.model_axis`); a member that began alone goes
  on alone. A program begun in `where` goes on (or is restored) whole."""
  if _has_program(where):
    return [], members
  alone = [m for m in members if one_at_a_time or _has_program(m.workdir)]
  return alone, [m for m in members if m not in alone]


def _restricted(cfg, values: list[dict]):
  """`cfg` with its sweep cut to the models of `values` (one key's values),
  or None where the sweep has several keys (those models train alone)."""
  keys = {k for v in values for k in v}
  if len(keys) != 1:
    return None
  key, = keys
  restricted = ml_collections.ConfigDict(cfg.to_dict())
  restricted.sweep = f'{key}=' + ','.join(str(v[key]) for v in values)
  return restricted


def run_arm(cfg, here: str, source: Optional[str], log: Callable[[str], None] = print,
            one_at_a_time: bool = False, finished_one: Callable[[], None] = lambda: None) -> None:
  """Trains (or resumes, restores) the models of one arm, evaluates and
  analyses them in `here`: as one program, or (`one_at_a_time`) each alone,
  so each model's results are finished before the next starts. A model
  that has no checkpoint here but is finished in its saved records
  (`attn_jax.studies.saved_models`), here or in `source`'s folder of it, is
  not trained again (one with a checkpoint is restored, its results
  verified). `source`: the folder of another study's arm with the same
  models (trained there, analysed here)."""
  members = model_axis.members(cfg, here)
  if source and not os.path.exists(workdir_lib.paths(source)['config']):
    source_members = model_axis.members(cfg, source)
  else:
    source_members = None
  placed = model_axis.members(cfg, source if source and source_members is None else here)
  done = set()
  if any(saved_models.has_records(m.workdir) for m in members) or (
      source_members and any(saved_models.has_records(m.workdir) for m in source_members)):
    dataset = load_dataset(cfg.data)
    for i, m in enumerate(members):
      if os.path.isdir(os.path.join(placed[i].workdir, 'checkpoints')):
        continue  # restorable here: the pipeline restores it, verifies its results, redoes the damaged
      places = [m.workdir] + ([source_members[i].workdir] if source_members else [])
      for place in places:
        if saved_models.problem(m.cfg, place, dataset) is None:
          saved_models.copy_records(m.cfg, place, m.workdir)
          done.add(i)
          break
    if done:
      log(f'{here}: {len(done)} of {len(members)} model(s) finished in their saved records '
          f'({", ".join(os.path.basename(members[i].workdir) for i in sorted(done))}): not trained again')
  if source_members is not None:
    source = None  # saved records, not a workdir: what is left trains here
  where = source or here
  left = [(m, p) for i, (m, p) in enumerate(zip(members, placed)) if i not in done]
  if not left:
    return
  alone, together = _alone_or_together([p for _, p in left], where, one_at_a_time)
  group = None
  if together:
    group = cfg if len(together) == len(members) else _restricted(
        cfg, [model_axis.sweep_values(cfg)[placed.index(p)] for p in together])
    if group is None:  # a sweep of several keys cannot be cut: its models left train alone
      alone, together = alone + together, []
  out = {p.workdir: m.workdir for m, p in left}
  for p in alone:
    pipeline.run(p.cfg, p.workdir, log, output_dir=out[p.workdir] if source else None)
    finished_one()
  if group is not None:
    pipeline.run(group, where, log, output_dir=here if source else None)


def run(study: Study, root: str, only: Optional[str] = None, seeds: Optional[int] = None,
        overrides: Optional[dict] = None, log: Callable[[str], None] = print,
        reuse: Sequence[str] = (), one_at_a_time: bool = False) -> None:
  """Runs the selected arms one after another (each resumable). `reuse`: the
  roots of other studies whose trained models an arm may share (see above);
  `one_at_a_time`: each arm's models trained alone, one after another
  (`run_arm`), for machines whose sessions end before an arm does."""
  study = study.with_seeds(seeds)
  arms = select(study, only)
  configs = []
  for arm in arms:
    cfg = arm.config(study.seeds_of(arm), study.analyses)
    for key, value in (overrides or {}).items():
      config_lib.set_key(cfg, key, value)
    configs.append(cfg)
  # The arms' own bars (training, each stage) show their time left; this one
  # the study's, from the arms finished so far.
  bar = tqdm.tqdm(total=len(arms), desc=study.name, unit='arm', dynamic_ncols=True,
                  disable=not configs[0].train.progress)
  with bar:
    for i, (arm, cfg) in enumerate(zip(arms, configs), 1):
      folder = study.folder_name(arm)
      here = os.path.join(root, folder)
      source = trained_in(cfg, reuse, exclude=here) if reuse else None
      log(f'[{study.name} {i}/{len(arms)}] {arm.name}: {study.seeds_of(arm)} seed(s) -> {here}'
          + (f' (the same models as {source}: trained there, analysed here)' if source else ''))
      started = time.time()
      entry = {'started': round(started, 1), 'seconds': None, 'completed': False,
               'seeds': study.seeds_of(arm), **({'trained_in': source} if source else {})}
      _note(root, folder, entry)
      finished = []

      def finished_one(entry=entry, folder=folder, started=started, finished=finished):
        # A model trained alone is finished: its time counts even if the
        # session ends before the arm does (the report reads `seconds`).
        finished.append(1)
        _note(root, folder, {**entry, 'seconds': round(time.time() - started, 1),
                             'models_finished': len(finished)})

      if source:
        lend_analyses(cfg, source, here, log)
      run_arm(cfg, here, source, log, one_at_a_time, finished_one)
      _note(root, folder, {**entry, 'seconds': round(time.time() - started, 1), 'completed': True,
                           **({'models_finished': len(finished)} if finished else {})})
      bar.update()
