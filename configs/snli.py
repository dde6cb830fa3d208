"""J&W's NLI model on SNLI (variants: '' full, 'smoke' tiny); the encoder is the
BiLSTM unless --config.model.encoder=cnn|average. Training needs SNLI's train
file, which is not distributed beside the project (see docs/usage.md)."""

from attn_jax.config import default_config


def get_config(variant: str = ''):
  return default_config('snli', 'bilstm', variant)
