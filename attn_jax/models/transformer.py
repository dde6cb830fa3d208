"""Transformer encoder (Meister et al. 2021, App. B: 2 layers, 1 head, dim 128)."""

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from attn_jax.models import masks


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
  these details unspecified (ALGORITHMS.md §A.7). `norm='pre'` puts the
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
