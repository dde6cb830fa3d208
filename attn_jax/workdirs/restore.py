"""Everything an analysis needs from a trained workdir, without retraining."""

import dataclasses
import os
import warnings
from typing import Any

import ml_collections

from attn_jax.core import leases
from attn_jax.workdirs import workdir as workdir_lib
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.core.errors import CheckpointError
from attn_jax.models import Model, build_model
from attn_jax.training import trainer


@dataclasses.dataclass(frozen=True)
class Restored:
  """A trained model: `model.forward(params, tokens, lengths)` and friends.

  What `restore` returns; `explain` takes it too.

  Attributes:
    model: the `Model` its config describes (`build_model`).
    params: the selected model's params pytree.
    config: the workdir's config (today's defaults overlaid with the saved
      values).
    vocab: its vocabulary.
    data: data.json: dataset, fingerprint, split sizes.
    selection: which epoch was selected, on what.
  """
  model: Model
  params: Any
  config: ml_collections.ConfigDict
  vocab: Vocabulary
  data: dict       # data.json: dataset, fingerprint, split sizes
  selection: dict  # which epoch was selected, on what


def restore(workdir: str) -> Restored:
  """Loads the selected model of `workdir` (written by `run.py`).

  Writes nothing, so a workdir on a read-only mount or of a colleague loads.
  Never waits for a run still training it: that gives the model selected so
  far, with a warning (`UserWarning`) saying so. Where the best checkpoint is
  damaged or missing and the latest, saved at the selected step, stands in,
  a warning says so too.

  Args:
    workdir: the path of a workdir written by `run.py`.

  Returns:
    `Restored`: the model, its params, config, vocabulary, data.json and
    selection.

  Raises:
    CheckpointError: the workdir has no finished model (no config.json, or
      no selected model yet), config.json is not an attn-jax config, one of
      its JSON files (config, vocabulary, data) is missing or damaged, or its
      checkpoint is damaged (one line naming the step folder) or does not fit
      its config.
    IntegrityError: config.json, vocab.json or data.json differs from the
      sha256 checksums.json records for it (damaged or edited).

  Example:
    run = restore('workdirs/sst_bilstm_tanh_softmax')
    fwd = run.model.forward(run.params, tokens, lengths)  # tokens, lengths from pad_texts
    print(run.config.data.dataset, run.selection)
  """
  cfg = workdir_lib.load_config(workdir)
  training = os.path.join(workdir, 'training' + leases.SUFFIX)
  holder = leases.read_holder(training)
  if holder is not None and not leases.is_stale(training, holder):
    # Never waits: a reader gets the best model selected so far, and is told.
    warnings.warn(f'{workdir} is still training ({leases.describe(holder)}): this is the model '
                  'selected so far; restore again when it is done for the final one', stacklevel=2)
  vocab = workdir_lib.load_vocab(workdir)
  model = build_model(cfg.model, len(vocab))
  restored = trainer.restore_best(model, workdir)
  if restored is None:
    raise CheckpointError(f'{workdir} has no selected model yet: finish training with '
                          f'`python run.py --config=... --workdir={workdir}`')
  params, selection = restored
  data = workdir_lib.read_workdir_json(workdir, 'data')
  return Restored(model, params, cfg, vocab, data, selection)
