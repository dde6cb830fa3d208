"""J&W recipe: transformer encoder on 20news (variants: '' full, 'smoke' tiny)."""

from attn_jax.config import default_config


def get_config(variant: str = ''):
  return default_config('20news', 'transformer', variant)
