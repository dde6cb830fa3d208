"""A model with imposed attention: W&P's diagnostic MLP with guide weights
(§3.4), a plug-in `Objective` of the model-axis trainer.

Each model of the program has a guide index (`member['guide']`): −1 lets the
model use its own attention (score, then project); g ≥ 0 imposes row g of the
batch's guides (`inputs['guides']` [G, B, W]: uniform, a base model's α, an
adversary's α), fixed per document and under `stop_gradient`, so no
gradient ever reaches a guide. Either way α enters the same
`model.decode(params, h, α)` as in any forward pass.
"""

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.models import masks, projections
from attn_jax.training.loss import weighted_bce_sum
from attn_jax.training.objective import Objective, batch_rows


def guided_alpha(model, params, hidden, mask, member, inputs) -> jnp.ndarray:
  """α [B, W] the decoder sees: the model's own for guide −1, else the guide."""
  learned = model.project(model.score(params, hidden), mask)
  guides = inputs.get('guides')
  if guides is None or guides.shape[0] == 0:  # only own-attention models (−1)
    return learned
  guide = jax.lax.stop_gradient(guides[jnp.maximum(member['guide'], 0)])
  return jnp.where(member['guide'] < 0, learned, guide.astype(learned.dtype))


def _hidden(model, params, tokens, lengths, dropout_rng=None):
  return model.encode(params, model.embed(params, tokens), lengths, dropout_rng)


def guided_logits(model, params, tokens, lengths, member, inputs) -> jnp.ndarray:
  """[B] logits: embed → encode → α (own or guide) → decode."""
  hidden = _hidden(model, params, tokens, lengths)
  alpha = guided_alpha(model, params, hidden, masks.attention_mask(tokens, lengths), member, inputs)
  return model.decode(params, hidden, alpha)


def guided_loss(model, params, batch, dropout_rng, member, inputs) -> jnp.ndarray:
  """J&W's class-weighted BCE, summed over the batch, of the guided logits."""
  hidden = _hidden(model, params, batch.tokens, batch.lengths, dropout_rng)
  alpha = guided_alpha(model, params, hidden, masks.attention_mask(batch.tokens, batch.lengths),
                       member, inputs)
  return weighted_bce_sum(model.decode(params, hidden, alpha), batch.labels, batch.weights)


def uniform_alpha(lengths: np.ndarray, width: int) -> np.ndarray:
  """[N] lengths (with SOS and EOS) -> [N, width]: 1/n on the n words
  (positions 1 .. L−2), 0 on SOS, EOS and padding (W&P §3.2)."""
  words = masks.word_mask(jnp.asarray(lengths), width)
  return np.asarray(projections.uniform(jnp.zeros(words.shape, jnp.float32), words))


def guide_inputs(guides: dict):
  """`guides[split]` = G arrays [N, L] -> the trainer's `batch_inputs`:
  {'guides': [G, B, width]}, rows of filler documents zero."""
  def batch_inputs(split: str, index: np.ndarray, width: int) -> dict:
    rows = [batch_rows(g, index, width) for g in guides[split]]
    if not rows:
      return {'guides': np.zeros((0, len(index), width), np.float32)}
    return {'guides': np.stack(rows)}
  return batch_inputs


def guided_objective(guide_indices: Sequence[int], guides: dict) -> Objective:
  """One model per guide index (−1: its own attention) over `guides` per split."""
  return Objective(loss=guided_loss, logits=guided_logits, batch_inputs=guide_inputs(guides),
                   members={'guide': np.asarray(guide_indices, np.int32)})
