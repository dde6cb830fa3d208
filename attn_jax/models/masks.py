"""Which positions of a padded `[SOS] w_1 .. w_n [EOS] PAD ..` row are what."""

import jax.numpy as jnp

from attn_jax.data.vocabulary import PAD


def sequence_mask(lengths: jnp.ndarray, width: int) -> jnp.ndarray:
  """[B] lengths -> [B, width] bool: positions < L (SOS, words, EOS)."""
  return jnp.arange(width)[None, :] < lengths[:, None]


def word_mask(lengths: jnp.ndarray, width: int) -> jnp.ndarray:
  """[B] lengths -> [B, width] bool: positions 1 .. L-2 (the words)."""
  positions = jnp.arange(width)[None, :]
  return (positions >= 1) & (positions < lengths[:, None] - 1)


def attention_mask(tokens: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
  """[B, L] bool: positions that may receive attention.

  The words, except any replaced by PAD (leave-one-out by replacement):
  SOS, EOS and padding get zero attention (J&W `BatchHolder.masks`).
  """
  return word_mask(lengths, tokens.shape[1]) & (tokens != PAD)


def item_mask(lengths: jnp.ndarray, width: int, items: str) -> jnp.ndarray:
  """[B] lengths -> [B, width] bool: the items of a row. 'words': J&W's
  layout, positions 1 .. L-2 (SOS and EOS are not items); 'all': positions
  < L (HAN's sentences and documents have no SOS or EOS)."""
  if items == 'words':
    return word_mask(lengths, width)
  if items == 'all':
    return sequence_mask(lengths, width)
  raise ValueError(f"items must be 'words' or 'all', not {items!r}")
