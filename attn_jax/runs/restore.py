"""Everything an analysis needs from a trained workdir, without retraining."""

import dataclasses
from typing import Any

import ml_collections

from attn_jax.runs import workdir as workdir_lib
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.core.errors import CheckpointError
from attn_jax.models import Model, build_model
from attn_jax.training import trainer


@dataclasses.dataclass(frozen=True)
class Restored:
  """A trained model: `model.forward(params, tokens, lengths)` and friends."""
  model: Model
  params: Any
  config: ml_collections.ConfigDict
  vocab: Vocabulary
  data: dict       # data.json: dataset, fingerprint, split sizes
  selection: dict  # which epoch was selected, on what


def restore(workdir: str) -> Restored:
  """Loads the selected model of `workdir` (written by `run.py`).

  Writes nothing, so a workdir on a read-only mount or of a colleague loads.

  Raises:
    CheckpointError: the workdir has no finished model, or its checkpoint is
      damaged (one line naming the step folder) or does not fit its config.
  """
  cfg = workdir_lib.load_config(workdir)
  vocab = workdir_lib.load_vocab(workdir)
  model = build_model(cfg.model, len(vocab))
  restored = trainer.restore_best(model, workdir)
  if restored is None:
    raise CheckpointError(f'{workdir} has no selected model yet: finish training with '
                          f'`python run.py --config=... --workdir={workdir}`')
  params, selection = restored
  data = workdir_lib.read_workdir_json(workdir, 'data')
  return Restored(model, params, cfg, vocab, data, selection)
