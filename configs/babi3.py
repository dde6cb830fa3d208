"""J&W's QA model on bAbI task 3 (variants: '' full, 'smoke' tiny); the encoder
is the BiLSTM unless --config.model.encoder=cnn|average (attention: --config.model.attention=tanh|dot)."""

from attn_jax.config import default_config


def get_config(variant: str = ''):
  return default_config('babi3', 'bilstm', variant)
