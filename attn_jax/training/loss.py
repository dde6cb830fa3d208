"""Training losses: plug-ins of the one trainer (`step.make_train_step`).

A loss is `(model, params, batch, dropout_rng, member) -> scalar`, where
`member` holds the model's own sweep values (arrays on the model axis; empty
for J&W's loss). `config.train.loss` names one of `LOSSES`.
"""

from typing import Callable

import jax.numpy as jnp
import optax


def weighted_bce_sum(logits: jnp.ndarray, labels: jnp.ndarray, weights: jnp.ndarray) -> jnp.ndarray:
  """Σ_b w_b · BCE(z_b, y_b): summed over the batch, not averaged.

  Args:
    logits: [B]. labels: [B] in {0, 1}. weights: [B], J&W's pos_weight
      (n_neg / n_pos) for positives, 1 for negatives, 0 for filler rows.
  """
  return jnp.sum(weights * optax.sigmoid_binary_cross_entropy(logits, labels))


def jw_classification(model, params, batch, dropout_rng, member) -> jnp.ndarray:
  """J&W's `model/Binary_Classification.py`: class-weighted BCE of the model's own prediction, summed."""
  del member
  logits = model.forward(params, batch.tokens, batch.lengths, dropout_rng).logits
  return weighted_bce_sum(logits, batch.labels, batch.weights)


def mean_cross_entropy(logits: jnp.ndarray, labels: jnp.ndarray, weights: jnp.ndarray) -> jnp.ndarray:
  """Mean softmax cross-entropy over the batch's real rows (AllenNLP's, S&S §3).

  Args:
    logits: [B, C]. labels: [B] class indices (float or int). weights: [B],
      1 for documents, 0 for filler rows.
  """
  losses = optax.softmax_cross_entropy_with_integer_labels(logits, labels.astype(jnp.int32))
  return jnp.sum(weights * losses) / jnp.maximum(jnp.sum(weights), 1.0)


def ss_classification(model, params, batch, dropout_rng, member) -> jnp.ndarray:
  """S&S §3: mean cross-entropy of the softmax over the classes."""
  del member
  logits = model.forward(params, batch.tokens, batch.lengths, dropout_rng).logits
  return mean_cross_entropy(logits, batch.labels, batch.weights)


ss_classification.is_mean = True  # a batch's mean, not its sum: the trainer's record counts rows

LOSSES: dict[str, Callable] = {'weighted_bce': jw_classification, 'cross_entropy': ss_classification}
