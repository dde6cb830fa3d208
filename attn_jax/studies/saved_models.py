"""The models of a study arm that are finished in their saved records alone.

An arm can take longer than the machine it runs on lives (five IMDB BiLSTMs
are more than a 3-hour session of a 2-core machine), and `report --save`
keeps what a table needs of each finished model, without its checkpoints or
arrays: eval.json, metrics.jsonl, config.json, data.json, embeddings.json,
each analysis stage's summary.json and a stage's small per-document arrays
where it keeps some (`stage_store.KEPT`: the evidence stage's per-question
AP). A later run of the arm, on a machine
that has only those records, counts a model finished when its folder (or,
with `--reuse`, the folder of the same model in another study) holds them
for this very model and these analyses, and does not train it again:

- config.json has the training config the arm gives the model (every key
  that changes the trained model, `config.training_items`);
- eval.json is of the test split of these data (their fingerprint);
- every stage the arm runs (and those it requires) has a summary whose key
  is what this run would compute: the stage's version, the data, the split
  and its document count, the analysis seed and the stage's settings, one
  model (the same params digest in every key), each stage computed from the
  results of the others (its inputs' hashes).

What cannot be checked without the checkpoint is that the params are the
ones this code would train today: the records say which model they are of
(config and data), as they do for the report, which reads the same files.
An arm with experiments (models trained on top) needs its checkpoints and is
never finished from records.
"""

import os
from typing import Optional

import ml_collections

from attn_jax import config as config_lib, experiments
from attn_jax.core import atomic_io
from attn_jax.core.registry import STAGES
from attn_jax.data.dataset import Dataset
from attn_jax.stages import stage_runner, stage_store as store
from attn_jax.workdirs import workdir as workdir_lib

RECORDS = ('eval.json', 'metrics.jsonl', 'config.json', 'data.json', 'embeddings.json')


def has_records(folder: str) -> bool:
  """Whether `folder` holds a model's evaluation at all (cheap: no data read)."""
  return os.path.isfile(os.path.join(folder, 'eval.json')) and os.path.isfile(
      os.path.join(folder, 'config.json'))


def _expected_key(cfg: ml_collections.ConfigDict, stage, dataset: Dataset) -> dict:
  """The fields of `stage`'s key that do not depend on the params."""
  a = cfg.analysis
  split = stage_runner.limit_split(dataset.splits[a.split], a.max_docs, a.get('sample_docs'),
                                   a.get('sample_seed', 0))
  key = {'stage': stage.name, 'version': stage.version, 'data': dataset.fingerprint, 'split': a.split,
         'docs': len(split), 'seed': a.seed, 'settings': stage.key_settings(a)}
  if a.get('sample_docs') is not None:
    key['sample'] = {'docs': a.sample_docs, 'seed': a.get('sample_seed', 0)}
  return key


def problem(cfg: ml_collections.ConfigDict, folder: str, dataset: Dataset) -> Optional[str]:
  """None when `folder` holds the finished records of the model `cfg` trains
  and of every analysis it runs (see the module's docstring); else what is
  missing or different, in a few words."""
  if experiments.names(cfg):
    return 'its experiments need the checkpoint'
  if not has_records(folder):
    return 'no eval.json and config.json'
  try:
    saved = config_lib.training_items(workdir_lib.load_config(folder, strict=False))
    evaluation = atomic_io.read_json(os.path.join(folder, 'eval.json'))
  except Exception as e:  # pylint: disable=broad-except  # any damage: not finished here
    return f'its records do not read ({type(e).__name__})'
  if saved != config_lib.training_items(cfg):
    return 'config.json is of another model'
  if evaluation.get('data_fingerprint') != dataset.fingerprint or evaluation.get('split') != 'test':
    return 'eval.json is of other data'
  names = stage_runner.with_requirements_of(config_lib.analyses(cfg))
  found, params = {}, set()
  for name in names:
    stage = STAGES[name]
    wanted = _expected_key(cfg, stage, dataset)
    match = None
    for candidate in store.find(folder, name):
      if not candidate.intact:
        continue  # damaged; a saved summary alone (no file hashes) reads as intact
      key = candidate.summary.get('key', {})
      if all(key.get(k) == v for k, v in wanted.items()) and candidate.summary.get('documents') == wanted['docs']:
        inputs = {r: found[r].key_hash for r in stage.requires}
        if key.get('inputs', {}) == inputs:
          match = candidate
          break
    if match is None:
      return f'no finished {name} results of these settings'
    found[name] = match
    params.add(match.summary['key'].get('params'))
  if len(params) > 1:
    return 'its analyses are of different models'
  return None


def copy_records(cfg: ml_collections.ConfigDict, source: str, here: str) -> None:
  """Copies a model's records (RECORDS and the summaries of the stages `cfg`
  runs, as saved: `store.summary_copy`) from `source` to `here`, each file whole."""
  if os.path.abspath(source) == os.path.abspath(here):
    return
  for name in RECORDS:
    if os.path.exists(os.path.join(source, name)):
      os.makedirs(here, exist_ok=True)
      atomic_io.copy_file(os.path.join(source, name), os.path.join(here, name))
  for stage in stage_runner.with_requirements_of(config_lib.analyses(cfg)):
    for found in store.find(source, stage):
      if found.intact:
        relative = os.path.relpath(found.directory, source)
        atomic_io.write_json(os.path.join(here, relative, store.SUMMARY), store.summary_copy(found))
        store.copy_kept(found, os.path.join(here, relative))
