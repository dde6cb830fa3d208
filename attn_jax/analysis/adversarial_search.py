"""Adversarial attention (J&W's "adversarial_multi", `model/Binary_Classification.py`).

With the encoder and decoder frozen and the hidden states fixed, K
attention distributions per document are optimised to be far (JSD) from
the model's α and from each other while keeping the output within ε:

  loss = Σ_k [ −JSD(α̃_k, α) + 500·ReLU(|ỹ_k − ŷ| − 0.01) ] − mean_{k,k'} JSD(α̃_k, α̃_k')

over log-weights ℓ (α̃ = softmax of ℓ over the words — or, for a sparse
model, its own projection of ℓ: `projection`), initialised
log(1/L) + 3·N(0, 1), with Adam/amsgrad at lr 0.01 for 500 steps. The
reported statistic is the largest JSD among the adversaries, plus the
original (JSD 0), whose output stays within 0.05 of ŷ. With more classes
(J&W's QA and NLI models) the output change in the loss is the L1 distance
of the two distributions, Σ_c |p̃_c − p_c| (their in-loop tolerance 0.01 is
then a TVD of 0.005), and the reported one the TVD, half of it, held to the
same ε = 0.05. Adam is elementwise,
so optimising the batch sum (J&W) is the same as optimising each document
on its own: the batch is one program.
"""

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from attn_jax.analysis import contract, needs
from attn_jax.analysis.divergences import jw_jsd
from attn_jax.analysis.position_noise import position_normal
from attn_jax.models import projections
from attn_jax.models.interface import AttentionModel


class Adversaries(NamedTuple):
  """J&W's K adversarial attention distributions per document and what they do (`adversarial_multi`).

  Attributes:
    alpha: [B, K, L] the adversarial attention α̃_k.
    probs: [B, K] their outputs ỹ_k ([B, K, C] for C > 2 classes).
    jsd: [B, K] JSD(α̃_k, α) to the model's attention (`jw_jsd`).
    output_change: [B, K] |ỹ_k − ŷ|; with C > 2 classes the TVD, ½ Σ_c |p̃_k,c − p_c|.
  """
  alpha: jnp.ndarray        # [B, K, L] adversarial attention
  probs: jnp.ndarray        # [B, K] their outputs ỹ ([B, K, C] for C > 2 classes)
  jsd: jnp.ndarray          # [B, K] JSD(α̃_k, α)
  output_change: jnp.ndarray  # [B, K] |ỹ_k − ŷ| (C > 2: the TVD, ½ Σ_c |p̃_k,c − p_c|)


def _l1(adv_probs: jnp.ndarray, probs: jnp.ndarray) -> jnp.ndarray:
  """[B, K] |ỹ_k − ŷ| of binary outputs [B, K] and [B]; Σ_c |p̃_k,c − p_c|
  of distributions [B, K, C] and [B, C]."""
  change = jnp.abs(adv_probs - probs[:, None])
  return change.sum(axis=-1) if change.ndim == 3 else change


Projection = Callable[[jnp.ndarray, jnp.ndarray], jnp.ndarray]


def _project(projection: Projection, logits_adv: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """[B, K, L] log-weights -> [B, K, L] attention over the words of [B, L]
  `mask`. Broadcast: the uniform projection ignores the scores, so it returns
  the mask's [B, 1, L]."""
  return jnp.broadcast_to(projection(logits_adv, mask[:, None, :]), logits_adv.shape)


def adversarial_loss(logits_adv: jnp.ndarray, hidden, alpha, mask, probs, decode, *,
                     hinge_epsilon: float, output_weight: float,
                     projection: Projection = projections.softmax,
                     probabilities: Callable = jax.nn.sigmoid) -> jnp.ndarray:
  """J&W's loss for one batch: [B, K, L] log-weights -> scalar (batch sum).
  `probabilities`: logits -> outputs (`model.probabilities`)."""
  adv = _project(projection, logits_adv, mask)
  hinge = jax.nn.relu(_l1(probabilities(decode(hidden, adv)), probs) - hinge_epsilon)
  away = jw_jsd(adv, alpha[:, None, :])
  pairwise = jw_jsd(adv[:, :, None, :], adv[:, None, :, :])  # [B, K, K]
  return jnp.sum(-away + output_weight * hinge) - jnp.sum(jnp.mean(pairwise, axis=(1, 2)))


def adversarial_attention(model: AttentionModel, params, hidden: jnp.ndarray, alpha: jnp.ndarray,
                          mask: jnp.ndarray, lengths: jnp.ndarray, keys: jax.Array, *,
                          num_adversaries: int = 5, steps: int = 500, learning_rate: float = 0.01,
                          hinge_epsilon: float = 0.01, output_weight: float = 500.0,
                          projection: Projection = projections.softmax) -> Adversaries:
  """J&W's K adversarial attention distributions per document.

  With the encoder and decoder frozen and `hidden` fixed, optimises K
  log-weights per document with amsgrad to minimise J&W's loss (J&W's
  "adversarial_multi"; see the module docstring): far (JSD) from α and from
  each other, with the output change held within `hinge_epsilon` by a hinge
  weighted `output_weight`. The log-weights start at −log(length) + 3·N(0, 1),
  the noise drawn per position, and are mapped to attention by `projection`.
  Jittable with `model` and the keyword options static.

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    hidden: [B, L, H] encoder states (`model.encode`).
    alpha: [B, L] the model's attention.
    mask: [B, L] bool, the words.
    lengths: [B] int, document lengths with SOS and EOS.
    keys: [B] PRNG keys, one per document.
    num_adversaries: K, the adversaries per document.
    steps: optimisation steps (J&W: 500).
    learning_rate: amsgrad's learning rate (J&W: 0.01).
    hinge_epsilon: the output change tolerated in the loss (J&W: 0.01; with
      more classes an L1 distance, so a TVD of half of it).
    output_weight: the weight of the output hinge in the loss (J&W: 500).
    projection: (scores, mask) -> α that maps the log-weights to attention:
      J&W's softmax, or the model's own (`model.project`) so a sparsemax or
      sparsegen model's adversaries are attention it could produce (with exact
      zeros). A uniform model's own family is one point: JSD 0.

  Returns:
    `Adversaries`: alpha [B, K, L], probs [B, K] ([B, K, C]), jsd [B, K] and
    output_change [B, K] (the TVD for C > 2 classes).

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['adversarial_attention']`: 'imposes_attention');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  width = alpha.shape[1]

  def decode(h, adv):  # adv [B, K, L] -> logits [B, K]
    return jax.vmap(lambda a: model.decode(params, h, a), in_axes=1, out_axes=1)(adv)

  needs.check(model, 'adversarial_attention')
  contract.check_states(model, params, hidden, mask)
  probs = model.probabilities(model.decode(params, hidden, alpha))
  noise = jax.vmap(lambda k: position_normal(k, (num_adversaries,), width, alpha.dtype))(keys)
  init = -jnp.log(lengths.astype(alpha.dtype))[:, None, None] + 3.0 * noise
  loss = lambda ell: adversarial_loss(ell, hidden, alpha, mask, probs, decode,
                                      hinge_epsilon=hinge_epsilon, output_weight=output_weight,
                                      projection=projection, probabilities=model.probabilities)
  optimizer = optax.amsgrad(learning_rate)

  def step(carry, _):
    ell, state = carry
    updates, state = optimizer.update(jax.grad(loss)(ell), state, ell)
    return (optax.apply_updates(ell, updates), state), None

  (ell, _), _ = jax.lax.scan(step, (init, optimizer.init(init)), None, length=steps)
  adv = _project(projection, ell, mask)
  adv_probs = model.probabilities(decode(hidden, adv))
  change = _l1(adv_probs, probs)
  return Adversaries(adv, adv_probs, jw_jsd(adv, alpha[:, None, :]),
                     0.5 * change if adv_probs.ndim == 3 else change)


def max_jsd_within(adversaries: Adversaries, epsilon: float = 0.05) -> jnp.ndarray:
  """J&W's "max JS divergence within ε" (`plot_multi_adversarial`) of each document.

  The largest JSD(α̃, α) among the adversaries with |ỹ − ŷ| ≤ ε (with more
  classes, a TVD ≤ ε) and the original α itself (JSD 0).

  Args:
    adversaries: `Adversaries` from `adversarial_attention` (jsd and
      output_change [B, K]).
    epsilon: ε, the largest output change allowed (J&W: 0.05).

  Returns:
    [B] the largest allowed JSD, ≥ 0.
  """
  allowed = adversaries.output_change <= epsilon
  return jnp.maximum(jnp.max(jnp.where(allowed, adversaries.jsd, 0.0), axis=-1), 0.0)
