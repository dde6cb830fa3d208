"""What an experiment is and what it works with: a trained base model, its
data, its config section, and a way to train more models as one program.

An experiment (W&P's uniform twin, seeds, consistent adversary, guides) trains
sets of models on top of a restored base model and compares them with it. Each
set is one program of the model-axis trainer (`attn_jax.training.trainer`), so
it resumes after a kill, and each of its models is an ordinary workdir under
`experiments/<name>/models-<key>/<set>/<model>/` that `attn_jax.restore` reads
as any run. What a model's config cannot say (W&P's λ, its guide) is in its
`objective.json`: restored alone, a guided model predicts with its own
(untrained) attention, not its guide.
"""

import dataclasses
import os
import time
from typing import Any, Callable, Optional

import jax
import ml_collections
import numpy as np

from attn_jax import config as config_lib
from attn_jax.core.registry import Section
from attn_jax.workdirs import initial_params
from attn_jax.workdirs import model_axis, workdir as workdir_lib
from attn_jax.data.batching import eval_batches
from attn_jax.data.dataset import Dataset, EncodedSplit
from attn_jax.models import Model, build_model
from attn_jax.training import trainer
from attn_jax.training.evaluation import evaluate_probs, predict_split
from attn_jax.training.objective import JW, Objective
from attn_jax.training import step as step_lib


@dataclasses.dataclass(frozen=True)
class Experiment:
  """An experiment declared by name in `config.experiments`.

  paper: whose experiment it is (a key of `attn_jax.papers.PAPERS`).
  order: where it runs among the experiments (after those it requires).
  section: its `config.experiment.<name>` section: defaults (dataset,
    encoder, variant) -> ConfigDict, and check (section, run config) -> an
    error message or None, before any work.
  run: (ctx) -> (arrays for results.npz, summary dict).
  figures: (arrays, summary, directory) -> written paths (PNG and SVG).
  requires: experiments whose results it reads (`ctx.inputs[name]`).
  stages: analysis stages of the base model it reads (`ctx.stages[name]`).
  version: bumped when what it computes changes.
  multi_class: it runs on flat models of more than two classes (False: binary only).
  """
  name: str
  paper: str
  order: int
  section: Section
  run: Callable
  figures: Callable
  requires: tuple = ()
  stages: tuple = ()
  version: int = 1
  multi_class: bool = False  # it runs on models of more than two classes too (not on a HAN)


@dataclasses.dataclass
class TrainedSet:
  """Models trained as one program: per model its config, workdir, params and
  selection record (None for a model whose loss became non-finite)."""
  configs: list
  workdirs: list
  params: list
  selections: list
  progress: dict
  model: Model

  @property
  def seconds(self) -> float:
    return float(self.progress.get('seconds', 0.0))


@dataclasses.dataclass
class ExperimentContext:
  """A restored base model and everything an experiment reads."""
  model: Model
  params: Any
  cfg: ml_collections.ConfigDict  # the base model's run config
  dataset: Dataset
  directory: str  # this experiment's keyed results folder
  models_dir: str  # where its models train (keyed by what their training depends on)
  out_dir: str
  name: str
  log: Callable[[str], None]
  stages: dict = dataclasses.field(default_factory=dict)  # stage -> its result folder
  inputs: dict = dataclasses.field(default_factory=dict)  # experiment -> (folder, summary)
  training_wall: float = 0.0  # seconds this process spent in `train` (training or restoring)

  @property
  def section(self) -> ml_collections.ConfigDict:
    """`config.experiment.<name>` (empty for an experiment without settings)."""
    return self.cfg.experiment.get(self.name) or ml_collections.ConfigDict()

  @property
  def split_name(self) -> str:
    return self.cfg.analysis.split

  @property
  def split(self) -> EncodedSplit:
    return self.dataset.splits[self.split_name]

  def member_config(self, **overrides) -> ml_collections.ConfigDict:
    """The base config with dotted-key `overrides`, training one model alone:
    no sweep, no analyses or experiments of its own."""
    member = model_axis.model_config(self.cfg, overrides)  # the base's batch order, shared
    member.analyses, member.experiments = '', ''
    config_lib.validate(member)
    return member

  def train(self, set_name: str, configs: dict[str, ml_collections.ConfigDict],
            objective: Optional[Objective] = None,
            initial: Optional[Callable] = None) -> TrainedSet:
    """Trains (or resumes, or restores) `configs` ({model name: config}) as
    one program with `objective` (default: their `train.loss`); they must
    share their architecture. `initial` (member -> params) replaces fresh
    initialisation (e.g. the base model's params)."""
    group = self.group_dir(set_name)
    names, cfgs = list(configs), list(configs.values())
    members = [trainer.Member(c, os.path.join(group, n)) for n, c in zip(names, cfgs)]
    for member in members:
      workdir_lib.check_config(member.cfg, member.workdir, self.log)
      workdir_lib.write_description(member.cfg, self.dataset, member.workdir)
    os.makedirs(group, exist_ok=True)
    model = build_model(cfgs[0].model, len(self.dataset.vocab))
    self.log(f'{self.name}: training {len(members)} model{"s" if len(members) > 1 else ""} '
             f'({", ".join(names)}) as one program in {group}')
    started = time.time()
    progress = trainer.train(
        model, self.dataset, members, group,
        initial or (lambda m: initial_params.initial_params(model, m.cfg, self.dataset, self.log, m.workdir)),
        self.log, objective)
    params, selections = [], []
    for member, record in zip(members, progress['models']):
      restored = trainer.restore_best(model, member.workdir, self.log) if record['failed'] is None else None
      params.append(restored[0] if restored else None)
      selections.append(restored[1] if restored else None)
    self.training_wall += time.time() - started
    return TrainedSet(cfgs, [m.workdir for m in members], params, selections, progress, model)

  def group_dir(self, set_name: str) -> str:
    """The folder of a set of models; model `m` of it is `<group>/<m>`."""
    return os.path.join(self.models_dir, set_name)

  def buckets(self):
    return trainer.dataset_buckets(self.dataset, self.cfg.data.bucket_growth)

  def outputs(self, model: Model, params, split: str) -> tuple[np.ndarray, np.ndarray]:
    """(P(y = 1) [N], α [N, L_max]) of a model's own forward pass over `split`."""
    return split_outputs(model, params, self.dataset.splits[split], self.cfg.train.eval_batch_size,
                         self.buckets())

  def evaluate(self, model: Model, params, split: str, objective: Objective = JW,
               member: Optional[dict] = None) -> tuple[dict, np.ndarray]:
    """(metrics, probs [N]) of a model on `split`, predicting as `objective` does."""
    predict = _jitted_predict(model, objective.logits)
    data = self.dataset.splits[split]
    probs = predict_split(predict, params, data, self.cfg.train.eval_batch_size, self.buckets(),
                          member or {}, lambda index, width: objective.batch_inputs(split, index, width),
                          model.num_classes)
    return evaluate_probs(data.labels, probs), probs


# Compiled once per (model, what) for the sets of an experiment; keyed by
# identity, as flax modules need not hash, and holding the model keeps ids unique.
_JITTED: dict = {}


def _cached(what: str, model: Model, extra, make: Callable):
  key = (what, id(model), id(extra))
  if key not in _JITTED:
    if len(_JITTED) > 32:
      _JITTED.clear()
    _JITTED[key] = (model, extra, make())
  return _JITTED[key][2]


def _jitted_predict(model: Model, logits: Callable):
  return _cached('predict', model, logits, lambda: jax.jit(step_lib.make_predict(model, logits)))


def _jitted_outputs(model: Model):
  def outputs(params, tokens, lengths):
    fwd = model.forward(params, tokens, lengths)
    return fwd.probs, fwd.alpha
  return _cached('outputs', model, None, lambda: jax.jit(outputs))


def split_outputs(model: Model, params, split: EncodedSplit, batch_size: int,
                  buckets) -> tuple[np.ndarray, np.ndarray]:
  """(P(y = 1) [N], α [N, L_max]) in split order, α zero past each document."""
  fn = _jitted_outputs(model)
  width = int(split.lengths.max())
  probs = np.zeros(len(split), np.float32)
  alpha = np.zeros((len(split), width), np.float32)
  for batch in eval_batches(split.sequences, split.labels, batch_size, buckets):
    p, a = fn(params, batch.tokens, batch.lengths)
    real = batch.index >= 0
    a = np.asarray(a)[real][:, :width]
    probs[batch.index[real]] = np.asarray(p)[real]
    alpha[batch.index[real], :a.shape[1]] = a
  return probs, alpha


# Experiment models train with the base config's optimiser settings.
DIVERGED = ('{what} diverged (non-finite loss). Its models train with the base model\'s '
            '--config.train.learning_rate; a lower one retrains the base model too, so use a new '
            '--workdir')


def comma_floats(text: str) -> list[float]:
  """'1e-3, 0.1,' -> [0.001, 0.1]: a section's comma-separated numbers (λ grids)."""
  return [float(x) for x in text.split(',') if x.strip()]


def lambda_problem(section, example: str, valid: Callable[[list], bool], rule: str) -> Optional[str]:
  """What is wrong with `section.lambdas` (not numbers, or not `valid`,
  which `rule` words), or None."""
  try:
    values = comma_floats(section.lambdas)
  except ValueError:
    return f'lambdas={section.lambdas!r} is not comma-separated numbers, e.g. {example}'
  return None if valid(values) else f'lambdas={section.lambdas!r} must name {rule}'


def metrics_row(metrics: dict) -> dict:
  return {k: float(metrics[k]) for k in ('accuracy', 'f1_pos', 'roc_auc')}
