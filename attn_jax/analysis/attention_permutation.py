"""Permuting attention among the words (J&W's `Model.permute_attn`).

The encoder runs once; α is then shuffled among each document's words
(SOS, EOS and padding keep their zero weight), the *same* hidden states are
decoded, and the statistic is the median over permutations of |ŷ_perm − ŷ|;
with more classes (J&W's QA and NLI models) of the total variation distance
½ Σ_c |p_perm,c − p_c| (of which |ŷ_perm − ŷ| is the two-class case). All
permutations of all documents are one vmapped decoder call.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from attn_jax.analysis.position_noise import position_bits, position_uniform
from attn_jax.analysis import contract, needs
from attn_jax.models.interface import AttentionModel


class Permutation(NamedTuple):
  """J&W's permutation experiment (`permute_attn`) on a batch of documents.

  Attributes:
    differences: [B, P] |ŷ_perm − ŷ| of each of the P permutations (C > 2
      classes: the TVD, ½ Σ_c |p_perm,c − p_c|).
    median: [B] median over the P permutations.
    probs: [B] ŷ with the model's own attention ([B, C]).
    max_attention: [B] max_t α_t, J&W's binning variable.
  """
  differences: jnp.ndarray  # [B, P] |ŷ_perm − ŷ| (C > 2 classes: the TVD)
  median: jnp.ndarray       # [B] median over the P permutations
  probs: jnp.ndarray        # [B] ŷ ([B, C])
  max_attention: jnp.ndarray  # [B] max_t α_t, J&W's binning variable


# Sorting one packed uint32 per position — random high bits, the position in
# the low POSITION_BITS — is ~6x faster on XLA:CPU than argsort (a float or
# two-operand sort). The number of position bits is fixed, not taken from the
# padded width, so a document's permutations do not depend on its padding
# (widths over 2^POSITION_BITS take the argsort path).
# Two words whose RANDOM_BITS tie keep their order: for n words that happens
# with probability ≈ n²/2^23 per permutation (1.9 % of IMDB's 400-word
# permutations, one pair each), a negligible departure from uniform.
POSITION_BITS = 10
RANDOM_BITS = 32 - POSITION_BITS


def word_permutations(keys: jax.Array, lengths: jnp.ndarray, width: int,
                      num_permutations: int) -> jnp.ndarray:
  """Gather indices that shuffle each document's words.

  Args:
    keys: [B] PRNG keys, one per document (a document's permutations do not
      depend on its batch or padding).
    lengths: [B] int, document lengths with SOS and EOS.
    width: the padded length L.
    num_permutations: P, the permutations per document.

  Returns:
    [B, P, L] int32 `g` with α_perm[t] = α[g[t]]: a random permutation of
    positions 1 .. length − 2 (uniform up to the ties above), identity elsewhere.
  """
  positions = jnp.arange(width)
  packed = width <= 2**POSITION_BITS

  def one(key, length):
    words = (positions >= 1) & (positions < length - 1)
    if packed:  # words first, shuffled; the rest (largest random part) after
      random = jnp.minimum(position_bits(key, (num_permutations,), width) >> POSITION_BITS,
                           2**RANDOM_BITS - 2)
      high = jnp.where(words[None], random, 2**RANDOM_BITS - 1).astype(jnp.uint32)
      order = jnp.sort((high << POSITION_BITS) | positions[None].astype(jnp.uint32), axis=-1)
      order = (order & (2**POSITION_BITS - 1)).astype(jnp.int32)
    else:
      noise = position_uniform(key, (num_permutations,), width)
      order = jnp.argsort(jnp.where(words, noise, jnp.inf), axis=-1)
    shifted = jnp.concatenate([positions[None, :1].repeat(num_permutations, 0), order[:, :-1]], 1)
    return jnp.where(words, shifted, positions).astype(jnp.int32)

  return jax.vmap(one)(keys, lengths)


def permute_attention(model: AttentionModel, params, hidden: jnp.ndarray, alpha: jnp.ndarray,
                      permutations: jnp.ndarray) -> Permutation:
  """Decodes `hidden` with every permutation of `alpha`.

  The same hidden states are decoded with α shuffled among the words; all
  permutations of all documents are one vmapped decoder call (J&W's `permute_attn`).

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    hidden: the states (`model.encode`: [B, L, H] or any pytree).
    alpha: [B, L] the model's attention.
    permutations: [B, P, L] int32 gather indices from `word_permutations`.

  Returns:
    `Permutation`: differences [B, P], median [B], probs [B] ([B, C]) and
    max_attention [B].

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['permutation_test']`: 'imposes_attention');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  needs.check(model, 'permutation_test')
  contract.check_states(model, params, hidden, alpha=alpha)
  probs = model.probabilities(model.decode(params, hidden, alpha))
  permuted = jnp.take_along_axis(alpha[:, None, :], permutations, axis=-1)  # [B, P, L]
  logits = jax.vmap(lambda a: model.decode(params, hidden, a), in_axes=1, out_axes=1)(permuted)
  differences = jnp.abs(model.probabilities(logits) - probs[:, None])
  if differences.ndim == 3:  # [B, P, C]
    differences = 0.5 * differences.sum(axis=-1)
  return Permutation(differences, jnp.median(differences, axis=-1), probs, jnp.max(alpha, axis=-1))


def permutation_test(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray,
                     keys: jax.Array, num_permutations: int = 100) -> Permutation:
  """J&W's permutation experiment on a batch: encode once, decode P shuffles.

  J&W's `plot_permutations`: the statistic is the median over permutations of |ŷ_perm − ŷ|
  (the TVD with more classes). Jittable with `model` and `num_permutations` static.

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    keys: [B] PRNG keys, one per document (`word_permutations`).
    num_permutations: P (J&W: 100).

  Returns:
    `Permutation`: differences [B, P], median [B], probs [B] ([B, C]) and
    max_attention [B].

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['permutation_test']`: 'imposes_attention');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  needs.check(model, 'permutation_test')
  contract.check(model, params, tokens, lengths)
  fwd = model.forward(params, tokens, lengths)
  perms = word_permutations(keys, lengths, tokens.shape[1], num_permutations)
  return permute_attention(model, params, fwd.hidden, fwd.alpha, perms)
