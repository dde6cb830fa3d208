"""W&P's model-consistent adversary loss (§4; W&P's code,
`sarahwie/attention`: `model/Binary_Classification.py`), a plug-in `Objective` of
the model-axis trainer.

An adversary model learns to keep a fixed base model's predictions on the
training set while moving its attention away from the base model's:

    loss = (TVD − λ · KL) · Σ_b w_b,
    TVD = Σ_b ½ |σ(z_adv,b) − ŷ_base,b|,
    KL  = Σ_b Σ_t α_adv,b,t (log α_adv,b,t − log α_base,b,t),

sums over the real documents of the batch. The ½ is W&P's: their "TVD" of a
single sigmoid output is half the two-class total variation. The factor
Σ_b w_b (J&W's class weight of each document: `pos_weight` for positives, 1
for negatives) is how W&P's code weights the batch's scalar loss: it
multiplies it by every example's weight and sums. λ is a per-model value on
the model axis, so a λ sweep is one program.
"""

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.analysis.divergences import attention_kl, wp_tvd
from attn_jax.training.objective import Objective, batch_rows, own_logits


def consistency_loss(model, params, batch, dropout_rng, member, inputs) -> jnp.ndarray:
  """(TVD − λ·KL(α_adv ‖ α_base)) · Σ_b w_b for one model; `member['lambda']`,
  `inputs['target_probs']` [B] and `inputs['target_alpha']` [B, W] (the base
  model's, fixed). Filler rows (weight 0) count in neither sum."""
  fwd = model.forward(params, batch.tokens, batch.lengths, dropout_rng)
  real = (batch.index >= 0).astype(fwd.logits.dtype)
  targets = jax.lax.stop_gradient(inputs['target_probs'])
  base_alpha = jax.lax.stop_gradient(inputs['target_alpha'])
  tvd = jnp.sum(real * wp_tvd(jax.nn.sigmoid(fwd.logits), targets))
  kl = jnp.sum(real * attention_kl(fwd.alpha, base_alpha, fwd.mask))
  return (tvd - member['lambda'] * kl) * jnp.sum(batch.weights)


def consistency_inputs(targets: dict):
  """`targets[split] = (probs [N], alpha [N, L])` of the base model -> the
  trainer's `batch_inputs` (split, index [B], width) -> target rows."""
  def batch_inputs(split: str, index: np.ndarray, width: int) -> dict:
    probs, alpha = targets[split]
    return {'target_probs': batch_rows(probs, index, width),
            'target_alpha': batch_rows(alpha, index, width)}
  return batch_inputs


def consistency_objective(lambdas: Sequence[float], targets: dict) -> Objective:
  """One adversary per λ, against the base model's `targets` (per split)."""
  return Objective(loss=consistency_loss, logits=own_logits, batch_inputs=consistency_inputs(targets),
                   members={'lambda': np.asarray(lambdas, np.float32)})
