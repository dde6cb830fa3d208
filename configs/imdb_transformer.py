"""J&W recipe: transformer encoder on imdb (variants: '' full, 'smoke' tiny)."""

from attn_jax.config import default_config


def get_config(variant: str = ''):
  return default_config('imdb', 'transformer', variant)
