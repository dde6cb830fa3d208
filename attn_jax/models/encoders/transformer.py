"""Transformer encoder (Meister et al. 2021, App. B: 2 layers, 1 head, dim 128)."""

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from attn_jax.core.registry import ENCODERS
from attn_jax.models import masks
from attn_jax.models.encoders.encoder import Encoder


def sinusoidal_positions(width: int, dim: int) -> np.ndarray:
  """[width, dim] fixed sine/cosine position encodings (Vaswani et al. 2017)."""
  position = np.arange(width)[:, None]
  rate = np.exp(-np.log(10000.0) * np.arange(0, dim, 2) / dim)[None, :]
  table = np.zeros((width, dim), dtype=np.float32)
  table[:, 0::2] = np.sin(position * rate)
  table[:, 1::2] = np.cos(position * rate)[:, : dim // 2]
  return table


class TransformerEncoder(nn.Module):
  """[B, L, D], [B] lengths -> [B, L, hidden].

  Embeddings are projected to `hidden`, sinusoidal positions added, then
  post-LN layers (PyTorch `nn.TransformerEncoderLayer` defaults: ReLU
  feed-forward, dropout). Keys past a row's length are masked, so padding
  never changes an output; outputs at padding are zero. Meister et al. leave
  these details unspecified (their App. B). `norm='pre'` puts the
  layer norms before each sub-layer (PyTorch's `norm_first=True`, no final
  norm, `nn.TransformerEncoder`'s default): the output is the residual
  stream, whose norms vary by position (post-LN's are all about √hidden).
  """
  hidden: int = 128
  layers: int = 2
  heads: int = 1
  ffn_dim: int = 128
  dropout: float = 0.1
  norm: str = 'post'

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    width = embedded.shape[1]
    valid = masks.sequence_mask(lengths, width)
    x = nn.Dense(self.hidden, name='input_projection')(embedded)
    x = x + jnp.asarray(sinusoidal_positions(width, self.hidden), x.dtype)[None]
    attend = nn.make_attention_mask(valid, valid)
    pre = self.norm == 'pre'
    drop = lambda y: nn.Dropout(self.dropout)(y, deterministic=deterministic)
    for i in range(self.layers):
      norm1, norm2 = nn.LayerNorm(name=f'layer{i}_norm1'), nn.LayerNorm(name=f'layer{i}_norm2')
      source = norm1(x) if pre else x
      attended = nn.MultiHeadDotProductAttention(
          num_heads=self.heads, qkv_features=self.hidden, dropout_rate=self.dropout,
          deterministic=deterministic, name=f'layer{i}_attention')(source, source, mask=attend)
      x = x + drop(attended) if pre else norm1(x + drop(attended))
      ff = nn.Dense(self.ffn_dim, name=f'layer{i}_ffn_in')(norm2(x) if pre else x)
      ff = nn.Dense(self.hidden, name=f'layer{i}_ffn_out')(drop(nn.relu(ff)))
      x = x + drop(ff) if pre else norm2(x + drop(ff))
      # Every layer's states, for measures of intermediate representations
      # (`Model.encode_layers`); the last is the encoder's output.
      self.sow('intermediates', 'layers', x * valid[..., None].astype(x.dtype))
    return x * valid[..., None].astype(x.dtype)


def _recipe(c, dataset: str, variant: str) -> None:
  """Meister et al.'s Transformer: dot-product attention, dropout 0.1. They
  train it at lr 1e-5 from fastText vectors (epochs unspecified); from
  scratch that barely moves in 8 epochs."""
  del dataset, variant
  c.model.attention = 'dot'
  c.model.dropout = 0.1
  c.train.learning_rate = 1e-4
  c.train.epochs = 20


def _check(m) -> str | None:
  if m.encoder == 'transformer' and m.hidden_dim % m.transformer_heads:
    return 'model.hidden_dim must be divisible by model.transformer_heads'
  return None


TRANSFORMER = ENCODERS.register(Encoder(
    name='transformer', paper='meister', order=40, module=TransformerEncoder,
    build=lambda m, items: TransformerEncoder(
        hidden=m.hidden_dim, layers=m.transformer_layers, heads=m.transformer_heads,
        ffn_dim=m.transformer_ffn_dim, dropout=m.dropout, norm=m.get('transformer_norm', 'post')),
    # transformer_norm 'post': layer norm after each sub-layer (PyTorch's default); 'pre': before.
    keys=lambda dataset, variant: {
        'transformer_layers': 2, 'transformer_heads': 1, 'transformer_norm': 'post',
        'transformer_ffn_dim': 16 if variant == 'smoke' else 32 if dataset == 'synthetic' else 128},
    choices={'transformer_norm': ('post', 'pre')}, added={'transformer_norm': 'post'},
    recipe=_recipe, analyses='meister', check=_check))
