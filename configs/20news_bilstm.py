"""J&W recipe: bilstm encoder on 20news (variants: '' full, 'smoke' tiny)."""

from attn_jax.config import default_config


def get_config(variant: str = ''):
  return default_config('20news', 'bilstm', variant)
