"""What the trainer optimises: a plug-in of the one training loop.

An `Objective` bundles a loss, the logits a model predicts with (for model
selection and evaluation), the per-batch inputs both read beyond the batch
itself (a base model's predictions and attention, imposed guide attention),
and per-model values stacked on the model axis (W&P's λ, a guide index).
J&W's classifier (`JW`) is the default; W&P's model-consistent adversary
(`attn_jax.training.consistency_loss`) and guided diagnostic models
(`attn_jax.training.guided`) are others. Every Objective trains M models as
one program: `members[k]` has one value per model, and `loss`/`logits` see
one model's values (`member[k]` a scalar) as the program is vmapped.
"""

import dataclasses
from typing import Callable

import numpy as np

from attn_jax.training.loss import jw_classification


def no_inputs(split: str, index: np.ndarray, width: int) -> dict:
  del split, index, width
  return {}


def batch_rows(array: np.ndarray, index: np.ndarray, width: int) -> np.ndarray:
  """Rows of per-document `array` ([N] or [N, L]) for a batch's documents:
  array[index], positions cut or zero-padded to the batch width W, zero for
  filler rows (index −1); float32 [B] or [B, W]. What batch inputs carry."""
  rows = array[np.maximum(index, 0)]
  if rows.ndim > 1:
    rows = rows[:, :width]
    rows = np.pad(rows, [(0, 0), (0, width - rows.shape[1])])
  rows = np.where((index >= 0).reshape((-1,) + (1,) * (rows.ndim - 1)), rows, 0)
  return rows.astype(np.float32)


def own_logits(model, params, tokens, lengths, member, inputs):
  """The model's own forward pass: its own attention."""
  del member, inputs
  return model.forward(params, tokens, lengths).logits


def jw_loss(model, params, batch, dropout_rng, member, inputs):
  del inputs
  return jw_classification(model, params, batch, dropout_rng, member)


@dataclasses.dataclass(frozen=True)
class Objective:
  """loss: (model, params, batch, dropout_rng, member, inputs) -> scalar.
  logits: (model, params, tokens [B, W], lengths [B], member, inputs) -> [B].
  batch_inputs: (split name, document index [B] (-1: filler row), width W)
    -> {name: array [..., B, ...]}, shared by the M models of a step.
  members: {name: [M] values}, one per model of the program ({} for none).
  """
  loss: Callable = jw_loss
  logits: Callable = own_logits
  batch_inputs: Callable = no_inputs
  members: dict = dataclasses.field(default_factory=dict)
  mean_loss: bool = False  # `loss` is a batch mean (S&S), not a sum (J&W)

  def values(self, num_models: int) -> dict:
    """`members` as arrays with the model axis first, checked against M."""
    out = {}
    for name, v in self.members.items():
      v = np.asarray(v)
      if v.shape[:1] != (num_models,):
        raise ValueError(f'objective value {name!r} has {v.shape[:1]} entries for {num_models} models')
      out[name] = v
    return out


JW = Objective()
