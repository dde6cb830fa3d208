"""Training on masked documents (ROAR: Hooker et al. 2019; Madsen et al. 2022),
a plug-in `Objective` of the model-axis trainer.

Every model of the program reads the same documents with its own words
replaced by a mask token: model m masks the words whose rank under ranking
`member['ranking']` is below its fraction `member['numerator'] /
member['denominator']` of the document's words (`roar_masking`). The
rankings of a split are one `RankTable` (R rankings of every document,
stored flat, as documents differ in length); a batch's ranks are the
trainer's per-batch input `inputs['ranks']` [R, B, W], shared by all the
models of a step, each reading its own row. So measures × fractions × seeds
train as one program, on one copy of the data, and selection and evaluation
read the same masked splits (`batch_inputs` is keyed by split).
"""

import dataclasses
from typing import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.analysis import roar_masking
from attn_jax.training.objective import Objective


@dataclasses.dataclass(frozen=True)
class RankTable:
  """R rankings of each document of a split, stored flat.

  Attributes:
    flat: [R, T] int16 ranks (`roar_masking.word_ranks`; NOT_RANKED off the
      words), T the split's positions in all: row i's at offsets[i] ..
      offsets[i] + widths[i].
    offsets: [N] int64, where each document's positions start.
    widths: [N] int, each document's row width (a QA row's passage and query).
  """
  flat: np.ndarray
  offsets: np.ndarray
  widths: np.ndarray

  @classmethod
  def from_rows(cls, rows: Sequence[np.ndarray]) -> 'RankTable':
    """`rows[i]`: [R, width_i] ranks of document i."""
    widths = np.array([r.shape[-1] for r in rows], np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    flat = np.concatenate([np.asarray(r) for r in rows], axis=-1) if rows else np.zeros((0, 0))
    return cls(np.minimum(flat, roar_masking.NOT_RANKED).astype(np.int16), offsets, widths)

  @property
  def num_rankings(self) -> int:
    return self.flat.shape[0]

  def batch(self, index: np.ndarray, width: int) -> np.ndarray:
    """[R, B, width] int32 ranks of a batch's documents (filler rows, index −1,
    and positions past a row: NOT_RANKED, never masked)."""
    docs = np.maximum(index, 0)
    positions = np.arange(width)[None, :]
    valid = (positions < self.widths[docs][:, None]) & (index >= 0)[:, None]
    at = np.where(valid, self.offsets[docs][:, None] + positions, 0)
    ranks = self.flat[:, at] if self.flat.shape[1] else np.zeros((self.num_rankings,) + at.shape, np.int16)
    return np.where(valid[None], ranks, roar_masking.NOT_RANKED).astype(np.int32)


def masked_batch_tokens(tokens, lengths, member, inputs, mask_id: int, rounding: str):
  """The tokens model `member` reads: its ranking's top words at its fraction masked."""
  ranks = inputs['ranks'][member['ranking']]
  masked = roar_masking.masked_words(ranks, lengths, member['numerator'], member['denominator'], rounding)
  return roar_masking.mask_tokens(tokens, masked, mask_id)


def masked_objective(loss: Callable, tables: Mapping[str, RankTable], rankings: Sequence[int],
                     fractions: Sequence[tuple[int, int]], mask_id: int, rounding: str = 'floor') -> Objective:
  """One model per (ranking, fraction) pair, trained with `loss` on its masked documents.

  Args:
    loss: a `training.loss.LOSSES` loss (model, params, batch, rng, member) -> scalar.
    tables: {split name: RankTable} for every split the trainer or an
      evaluation reads (train, the selection split, the test split).
    rankings: [M] each model's row of the tables.
    fractions: [M] each model's k as (numerator, denominator); (0, 1) masks nothing.
    mask_id: the token id that replaces a masked word.
    rounding: how many words k % is (`roar_masking.fraction_count`).

  Returns:
    The `Objective`: its members {'ranking', 'numerator', 'denominator'} [M] int32.
  """
  def masked_loss(model, params, batch, dropout_rng, member, inputs):
    tokens = masked_batch_tokens(batch.tokens, batch.lengths, member, inputs, mask_id, rounding)
    return loss(model, params, batch._replace(tokens=tokens), dropout_rng, member)

  def masked_logits(model, params, tokens, lengths, member, inputs):
    tokens = masked_batch_tokens(tokens, lengths, member, inputs, mask_id, rounding)
    return model.forward(params, tokens, lengths).logits

  def batch_inputs(split: str, index: np.ndarray, width: int) -> dict:
    return {'ranks': tables[split].batch(index, width)}

  return Objective(loss=masked_loss, logits=masked_logits, batch_inputs=batch_inputs,
                   members={'ranking': np.asarray(rankings, np.int32),
                            'numerator': np.asarray([f[0] for f in fractions], np.int32),
                            'denominator': np.asarray([f[1] for f in fractions], np.int32)},
                   mean_loss=getattr(loss, 'is_mean', False))


def with_mask_row(params: dict, vocab_size: int) -> dict:
  """`params` of a model over `vocab_size` tokens, with one more row (zeros:
  the mask token starts as a word the vectors lack does) in each of its
  embedding tables (a QA model's passage and query tables alike) for the mask
  token, id `vocab_size`.

  Raises:
    ValueError: no table [vocab_size, D] under params['embedding'].
  """
  tables = params.get('embedding') if isinstance(params, dict) else None
  found = [leaf for leaf in jax.tree.leaves(tables) if np.ndim(leaf) == 2 and np.shape(leaf)[0] == vocab_size]
  if not found:
    raise ValueError(f'masked training needs an embedding table [{vocab_size}, D] under '
                     "params['embedding'] (attn-jax's own models)")

  def grow(leaf):
    leaf = jnp.asarray(leaf)
    if leaf.ndim == 2 and leaf.shape[0] == vocab_size:
      return jnp.concatenate([leaf, jnp.zeros((1, leaf.shape[1]), leaf.dtype)])
    return leaf
  grown = jax.tree.map(grow, tables)
  return {**params, 'embedding': grown}
