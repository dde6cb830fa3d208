"""S&S's hierarchical attention network (HAN; Yang et al. 2016; S&S §3) as an encoder.

The HAN is the same five stages as every model here, with the word level
inside `encode`: each sentence's words are encoded and attended to give a
sentence vector, and the sentence vectors are encoded again. What `score`,
`project` and `decode` see are the sentences — the final attention layer,
the one S&S test — so every analysis of an attention layer runs on it as
on a flat model's words.

Shapes: embedded [B, S, W, D], lengths [B, S] (words per sentence, 0 for
padding sentences, which come last) -> sentence states [B, S, H].
"""

import flax.linen as nn
import jax
import jax.numpy as jnp

from attn_jax.models import masks


def masked_softmax(scores: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """Softmax over the last axis within `mask`; all-masked rows give zeros."""
  shifted = jnp.where(mask, scores, -jnp.inf)
  top = jnp.max(shifted, axis=-1, keepdims=True)
  e = jnp.where(mask, jnp.exp(shifted - jnp.where(jnp.isfinite(top), top, 0.0)), 0.0)
  total = jnp.sum(e, axis=-1, keepdims=True)
  return e / jnp.where(total > 0, total, 1.0)


class HierarchicalEncoder(nn.Module):
  """Word encoder -> word attention -> (dropout) -> sentence encoder.

  `word_encoder` and `sentence_encoder` read plain sequences (items='all');
  `word_scorer` is the word attention's scorer (S&S: `ContextScorer`). The
  word attention of the last call is sown into the 'word_attention'
  collection ([B, S, W]) for whoever asks for it.
  """
  word_encoder: nn.Module
  word_scorer: nn.Module
  sentence_encoder: nn.Module
  sentence_dropout: float = 0.0  # S&S's "pre-document-encoder" dropout

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    batch, sentences, width, dim = embedded.shape
    words = self.word_encoder(embedded.reshape(batch * sentences, width, dim),
                              lengths.reshape(-1), deterministic=deterministic)
    word_mask = masks.sequence_mask(lengths.reshape(-1), width)
    alpha = masked_softmax(self.word_scorer(words), word_mask)  # [B * S, W]
    self.sow('word_attention', 'alpha', alpha.reshape(batch, sentences, width))
    vectors = jnp.einsum('nw,nwh->nh', alpha, words).reshape(batch, sentences, -1)
    if self.sentence_dropout > 0:
      vectors = nn.Dropout(self.sentence_dropout)(vectors, deterministic=deterministic)
    count = jnp.sum(lengths > 0, axis=-1)
    return self.sentence_encoder(vectors, count, deterministic=deterministic)


def sentence_mask(lengths: jnp.ndarray) -> jnp.ndarray:
  """[B, S] words per sentence -> [B, S] bool: the real sentences (HAN's items)."""
  return lengths > 0


def word_attention(module_apply, embedded, lengths) -> jax.Array:
  """Helper for `Model.word_attention`: runs `module_apply(..., mutable=['word_attention'])`."""
  _, state = module_apply(embedded, lengths, True, method='encode', mutable=['word_attention'])
  return jax.tree.leaves(state['word_attention'])[0]
