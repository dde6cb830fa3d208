"""Where one attention sits on each document, against another: how peaked it
is, how much mass the two share, and whether their most-attended word agrees.

W&P's ADVERSARY guide (§3.4, Table 3) feeds a
model-consistent adversary's attention to a non-contextual MLP. JSD alone says
the adversary's attention is far from the base model's, not what the MLP is
left with: this says whether the adversary piles its mass on one word, which
word (the caller counts the words at `argmax`), and at which position.
"""

from typing import NamedTuple

import jax.numpy as jnp


class Focus(NamedTuple):
  """Where attention α sits on each document, against attention β.

  Per document ([N] each); α and β are [N, L], zero outside each document's words.

  Attributes:
    max_alpha: [N] max_t α_t: 1 = all mass on one word.
    shared_mass: [N] Σ_t min(α_t, β_t) = 1 − ½Σ_t|α_t − β_t|: 0 = disjoint supports.
    argmax: [N] int32: the position α attends most (first on ties).
    same_argmax: [N] bool: α's and β's most-attended positions agree.
    argmax_is_last_word: [N] bool: α's most-attended position is the document's last word.
  """
  max_alpha: jnp.ndarray        # max_t α_t: 1 = all mass on one word
  shared_mass: jnp.ndarray      # Σ_t min(α_t, β_t) = 1 − ½Σ_t|α_t − β_t|: 0 = disjoint supports
  argmax: jnp.ndarray           # int32: the position α attends most (first on ties)
  same_argmax: jnp.ndarray      # bool: α's and β's most-attended positions agree
  argmax_is_last_word: jnp.ndarray  # bool: α's most-attended position is the document's last word


def attention_focus(alpha: jnp.ndarray, beta: jnp.ndarray, lengths: jnp.ndarray) -> Focus:
  """`Focus` of attention `alpha` [N, L] against `beta` [N, L].

  For W&P's ADVERSARY guide (§3.4, Table 3): how peaked one attention is,
  how much mass it shares with another, and whether their most-attended
  words agree. Jittable; float32 in, float32 out.

  Args:
    alpha: [N, L] float32 attention, zero outside each document's words.
    beta: [N, L] float32 attention to compare it with, zero outside the words.
    lengths: [N] int, counting SOS and EOS as the sequences do
      (`EncodedSplit.lengths`): the words are positions 1 … lengths − 2, so
      the last word is lengths − 2.

  Returns:
    `Focus`, each field [N]: max_alpha, shared_mass, argmax (int32),
    same_argmax (bool), argmax_is_last_word (bool).
  """
  argmax = jnp.argmax(alpha, axis=1).astype(jnp.int32)
  return Focus(max_alpha=jnp.max(alpha, axis=1),
               shared_mass=jnp.sum(jnp.minimum(alpha, beta), axis=1),
               argmax=argmax,
               same_argmax=argmax == jnp.argmax(beta, axis=1),
               argmax_is_last_word=argmax == lengths - 2)
