"""Convolutional encoder (J&W `cnn`, `EncoderCNN`)."""

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from attn_jax.core.registry import ENCODERS
from attn_jax.models import masks
from attn_jax.models.encoders.encoder import Encoder
from attn_jax.models.initializers import torch_uniform


class CNNEncoder(nn.Module):
  """[B, L, D], [B] lengths -> [B, L, hidden]: 'same' convolutions, ReLU.

  One convolution per kernel size with hidden / len(kernel_sizes) filters
  each, concatenated. Padding embeds to zero, so the zero 'same' padding at
  a row's end is what PyTorch's padding does. Outputs outside the words
  (SOS, EOS, padding) are zeroed, as J&W's `(1 - mask)`. `dropout` is S&S's
  conv encoder's own dropout on its input (training only; 0.3 in their code).
  """
  hidden: int = 128
  kernel_sizes: Sequence[int] = (1, 3, 5, 7)
  items: str = 'words'  # 'all': a plain sequence (HAN's sentences, documents); `masks.item_mask`
  dropout: float = 0.0

  @nn.compact
  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray,
               deterministic: bool = True) -> jnp.ndarray:
    if self.dropout > 0:
      embedded = nn.Dropout(self.dropout)(embedded, deterministic=deterministic)
    dim = embedded.shape[-1]
    filters = self.hidden // len(self.kernel_sizes)
    outputs = [
        nn.Conv(filters, (k,), padding='SAME', kernel_init=torch_uniform(dim * k),
                bias_init=torch_uniform(dim * k), name=f'conv{k}')(embedded)
        for k in self.kernel_sizes]
    hidden = jax.nn.relu(jnp.concatenate(outputs, axis=-1))
    words = masks.item_mask(lengths, embedded.shape[1], self.items)[..., None]
    return hidden * words.astype(hidden.dtype)


def has_state_reuse(encoder: CNNEncoder) -> bool:
  """`deletion_states` and `replacement_states` assume 'SAME' padding of
  (k − 1) / 2 on each side: odd kernels."""
  return all(k % 2 == 1 for k in encoder.kernel_sizes)


def deletion_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray,
                    kernel_sizes: Sequence[int]) -> jnp.ndarray:
  """Encoder states of every one-word deletion of one document (J&W LOO, `remove_and_run`).

  Args:
    params: the encoder's params (`conv{k}` per kernel size, all odd).
    embedded: [L, D] the document's embeddings; length: scalar n (with SOS, EOS).

  Returns:
    [L − 2, L, hidden]: row g − 1 is what `CNNEncoder` gives for the document
    with position g removed (n − 1 tokens, zeros outside its words).

  Why not encode the shortened rows: a width-k convolution (k = 2r + 1) at
  position p reads p − r .. p + r, so after removing position g the outputs
  before g − r are the document's own and those from g + r on are its
  outputs one place right. Only the 2r positions between are new: each
  deletion convolves 2r windows instead of L.
  """
  return _at_every_position(_deleted_outputs, params, embedded, kernel_sizes, length - 2)


def _at_every_position(outputs, params, embedded, kernel_sizes, words_end) -> jnp.ndarray:
  """`outputs` at every position of each variant, zero outside its words 1 .. words_end − 1."""
  p = jnp.arange(embedded.shape[0])[None, :]
  hidden = outputs(params, embedded, kernel_sizes, p)
  words = (p >= 1) & (p < words_end)
  return hidden * words[..., None].astype(hidden.dtype)


def deletion_windows(params: dict, embedded: jnp.ndarray,
                     kernel_sizes: Sequence[int]) -> tuple[jnp.ndarray, jnp.ndarray]:
  """The states a deletion changes: [L, D] -> (states [L − 2, 2R, hidden],
  positions [L − 2, 2R]) with R the widest radius; row g − 1 holds the
  shortened row's states at positions g − R .. g + R − 1 (unmasked; positions
  may fall outside the row). Before them the states are the document's own,
  after them its own one place right."""
  radius = max((k - 1) // 2 for k in kernel_sizes)
  g = jnp.arange(1, embedded.shape[0] - 1)[:, None]
  p = g - radius + jnp.arange(2 * radius)[None, :]
  return _deleted_outputs(params, embedded, kernel_sizes, p), p


def _deleted_outputs(params: dict, embedded: jnp.ndarray, kernel_sizes: Sequence[int],
                     p: jnp.ndarray) -> jnp.ndarray:
  """ReLU outputs of each deletion's shortened row at positions p ([1 or
  L − 2, P], row g − 1 without position g): [L − 2, P, hidden], unmasked."""
  width, _ = embedded.shape
  g = jnp.arange(1, width - 1)[:, None]  # the removed position of each row
  at_p = jnp.clip(p, 0, width)
  outputs = []
  for k in kernel_sizes:
    r = (k - 1) // 2
    kernel, bias = params[f'conv{k}']['kernel'], params[f'conv{k}']['bias']  # [k, D, F], [F]
    # The document's own outputs at 0 .. L (one past the end, for the shift).
    padded = jnp.pad(embedded, ((r, r + 1), (0, 0)))
    taps = jnp.stack([padded[j:j + width + 1] for j in range(k)], axis=1)  # [L + 1, k, D]
    own = jnp.einsum('lkd,kdf->lf', taps, kernel) + bias[None]
    shifted = own[jnp.minimum(at_p + 1, width)]
    out = jnp.where((p < g - r)[..., None], own[at_p], shifted)
    # The 2r new outputs of each deletion, at p = g − r .. g + r − 1: their
    # taps read the shortened row q = p + j − r, i.e. the document at q + (q >= g).
    # A convolution is a sum over taps of e_q · kernel[j], so each is a sum of
    # k products the document shares (`share`), not a [k, D] × [k, D, F] product.
    if r:
      share = jnp.einsum('ld,kdf->lkf', embedded, kernel)  # [L, k, F]
      at = g[:, :, None] + jnp.arange(-r, r)[None, :, None] + jnp.arange(-r, r + 1)[None, None, :]
      source = at + (at >= g[:, :, None]).astype(at.dtype)
      inside = (at >= 0) & (source < width)
      products = share[jnp.clip(source, 0, width - 1), jnp.arange(k)[None, None, :]]  # [L − 2, 2r, k, F]
      new = jnp.sum(jnp.where(inside[..., None], products, 0.0), axis=2) + bias[None, None]
      offset = jnp.clip(p - (g - r), 0, 2 * r - 1)
      in_window = (p >= g - r) & (p < g + r)
      out = jnp.where(in_window[..., None], jnp.take_along_axis(new, offset[..., None], axis=1), out)
    outputs.append(out)
  return jax.nn.relu(jnp.concatenate(outputs, axis=-1))


def replacement_states(params: dict, embedded: jnp.ndarray, length: jnp.ndarray,
                       kernel_sizes: Sequence[int]) -> jnp.ndarray:
  """Encoder states of every one-word replacement by PAD of one document:
  arguments as `deletion_states`; [L − 2, L, hidden], row g − 1 what
  `CNNEncoder` gives with position g embedded as PAD (zero), n tokens.

  Why not encode the replaced rows: before the ReLU a convolution is linear
  in its input, so zeroing e_g takes e_g · kernel[j] off the output at
  p = g − j + r (j = 0 .. k − 1) and leaves every other output as it was:
  one [D] × [D, k·F] product per position instead of a convolution per row.
  """
  return _at_every_position(_replaced_outputs, params, embedded, kernel_sizes, length - 1)


def replacement_windows(params: dict, embedded: jnp.ndarray,
                        kernel_sizes: Sequence[int]) -> tuple[jnp.ndarray, jnp.ndarray]:
  """The states a replacement changes: [L, D] -> (states [L − 2, 2R + 1,
  hidden], positions [L − 2, 2R + 1]); row g − 1 holds positions g − R ..
  g + R (unmasked; they may fall outside the row). Every other state is the
  document's own."""
  radius = max((k - 1) // 2 for k in kernel_sizes)
  g = jnp.arange(1, embedded.shape[0] - 1)[:, None]
  p = g - radius + jnp.arange(2 * radius + 1)[None, :]
  return _replaced_outputs(params, embedded, kernel_sizes, p), p


def _replaced_outputs(params: dict, embedded: jnp.ndarray, kernel_sizes: Sequence[int],
                      p: jnp.ndarray) -> jnp.ndarray:
  """ReLU outputs of each replaced row at positions p ([1 or L − 2, P], row
  g − 1 with position g as PAD): [L − 2, P, hidden], unmasked."""
  width = embedded.shape[0]
  g = jnp.arange(1, width - 1)[:, None]  # the replaced position of each row
  rows = jnp.arange(width - 2)[:, None]
  at_p = jnp.clip(p, 0, width - 1)
  outputs = []
  for k in kernel_sizes:
    r = (k - 1) // 2
    kernel, bias = params[f'conv{k}']['kernel'], params[f'conv{k}']['bias']  # [k, D, F], [F]
    padded = jnp.pad(embedded, ((r, r), (0, 0)))
    taps = jnp.stack([padded[j:j + width] for j in range(k)], axis=1)  # [L, k, D]
    own = jnp.einsum('lkd,kdf->lf', taps, kernel) + bias[None]       # [L, F]
    share = jnp.einsum('ld,kdf->lkf', embedded, kernel)               # [L, k, F]
    tap = g - p + r                                                    # e_g's tap at p
    touched = (tap >= 0) & (tap < k)
    taken = share[g[:, 0]][rows, jnp.clip(tap, 0, k - 1)]
    outputs.append(own[at_p] - jnp.where(touched[..., None], taken, 0.0))
  return jax.nn.relu(jnp.concatenate(outputs, axis=-1))


def _build(m, items: str) -> CNNEncoder:
  return CNNEncoder(hidden=m.hidden_dim, kernel_sizes=tuple(m.cnn_kernel_sizes), items=items,
                    dropout=m.get('cnn_dropout', 0.0))


def _check(m) -> str | None:
  if not 0 <= m.cnn_dropout < 1:
    return 'model.cnn_dropout must be in [0, 1)'
  if m.cnn_dropout and m.encoder != 'cnn':
    return 'model.cnn_dropout is for model.encoder=cnn'
  if m.encoder == 'cnn' and m.hidden_dim % len(m.cnn_kernel_sizes):
    return 'model.hidden_dim must be divisible by the number of CNN kernel sizes'
  return None


def _windows(module: CNNEncoder, params: dict, embedded: jnp.ndarray, mode: str):
  windows = deletion_windows if mode == 'delete' else replacement_windows
  return (*windows(params, embedded, module.kernel_sizes),
          max((k - 1) // 2 for k in module.kernel_sizes))


CNN = ENCODERS.register(Encoder(
    name='cnn', paper='jw', order=20, module=CNNEncoder, build=_build, in_han=True,
    # cnn_dropout: on the convolutions' input, after input_dropout (S&S's conv encoder: 0.3).
    keys=lambda dataset, variant: {'cnn_kernel_sizes': (1, 3, 5, 7), 'cnn_dropout': 0.0}, check=_check,
    added={'cnn_dropout': 0.0},
    deletion_states=lambda module, p, e, n: deletion_states(p, e, n, module.kernel_sizes),
    replacement_states=lambda module, p, e, n: replacement_states(p, e, n, module.kernel_sizes),
    variant_windows=_windows, fast=has_state_reuse))
