"""Synthetic planted-word task: needs no data files; ~2 minutes on a 2-core CPU.

Usage: python run.py --config=configs/synthetic.py[:smoke] [--config.model.encoder=cnn]
"""

from attn_jax.config import default_config


def get_config(variant: str = ''):
  return default_config('synthetic', 'bilstm', variant)
