"""J&W's training loss (§A.5)."""

import jax.numpy as jnp
import optax


def weighted_bce_sum(logits: jnp.ndarray, labels: jnp.ndarray, weights: jnp.ndarray) -> jnp.ndarray:
  """Σ_b w_b · BCE(z_b, y_b): summed over the batch, not averaged.

  Args:
    logits: [B]. labels: [B] in {0, 1}. weights: [B], J&W's pos_weight
      (n_neg / n_pos) for positives, 1 for negatives, 0 for filler rows.
  """
  return jnp.sum(weights * optax.sigmoid_binary_cross_entropy(logits, labels))
