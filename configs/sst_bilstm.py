"""J&W recipe: bilstm encoder on sst (variants: '' full, 'smoke' tiny)."""

from attn_jax.config import default_config


def get_config(variant: str = ''):
  return default_config('sst', 'bilstm', variant)
