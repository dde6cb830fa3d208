"""Leave-one-out importance (J&W §B.2): the output change when a word goes.

J&W delete the word (the sequence gets shorter and is re-encoded; attention
is recomputed over the remaining words) and score it by |ŷ₋ₜ − ŷ|.
Replacing the word by PAD (same length; PAD embeds to zero and gets no
attention) is the common alternative.

Every position of every document is computed in one jitted program: the
L − 2 variants of a document form one batch for the model, and documents
are mapped in chunks (`docs_per_chunk`) so memory stays bounded. Deletion
uses the encoder's own path for it where the model has one
(`Model.encode_deletions`: the BiLSTM shares a document's input projections
and the states the deletion does not reach, the CNN all outputs but the
windows that cover the deleted word, the Average encoder all states) and
re-encodes the shortened rows otherwise (the Transformer). Replacement by
PAD has such paths too for the BiLSTM, the CNN and the Average encoder
(`Model.encode_replacements`). Under softmax attention the CNN and the
Average encoder go further (`loo_windows`): a variant changes only a window
of states, so it attends from the document's own prefix and suffix sums
plus its window instead of over all its states.
"""

from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp

from attn_jax.analysis import loo_windows
from attn_jax.data.vocabulary import PAD
from attn_jax.models import Model, masks

Mode = Literal['delete', 'replace']


class LeaveOneOut(NamedTuple):
  importance: jnp.ndarray     # [B, L] |ŷ₋ₜ − ŷ|, 0 off the words
  probs_without: jnp.ndarray  # [B, L] ŷ₋ₜ, 0 off the words
  probs: jnp.ndarray          # [B] ŷ


def variants(tokens: jnp.ndarray, length: jnp.ndarray, mode: Mode = 'delete'):
  """One document [L] -> its L − 2 leave-one-out variants.

  Row i leaves out position i + 1 (the words are positions 1 .. length − 2;
  rows beyond them are well-formed but meaningless).

  Returns:
    (tokens [L − 2, L], lengths [L − 2]).
  """
  width = tokens.shape[0]
  left_out = jnp.arange(1, width - 1)[:, None]
  positions = jnp.arange(width)[None, :]
  if mode == 'delete':
    source = positions + (positions >= left_out).astype(positions.dtype)
    rows = jnp.where(source < width, tokens[jnp.minimum(source, width - 1)], PAD)
    new_length = length - 1
  elif mode == 'replace':
    rows = jnp.where(positions == left_out, PAD, tokens[None, :])
    new_length = length
  else:
    raise ValueError(f"mode must be 'delete' or 'replace', not {mode!r}")
  return rows.astype(tokens.dtype), jnp.full((width - 2,), new_length, dtype=length.dtype)


def leave_one_out(model: Model, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                  mode: Mode = 'delete', docs_per_chunk: int = 1,
                  reencode: bool = False, windows: bool = True) -> LeaveOneOut:
  """Leave-one-out importance of every word of every document.

  Args:
    tokens: [B, L] int32, L >= 3; lengths: [B] (with SOS and EOS).
    mode: 'delete' (J&W) or 'replace' (by PAD).
    docs_per_chunk: documents run together; peak memory grows with it
      (each document is L − 2 sequences of length L). Not used by the
      windowed path (`windows`), which runs the whole batch at once.
    reencode: re-encode the shortened rows even where the model has a
      deletion path (`Model.encodes_deletions`); for checks and benchmarks.
    windows: under softmax attention, where a variant changes only a window
      of states (CNN, Average), attend from prefix and suffix sums of the
      document's own (`loo_windows`); False: attend over every variant's
      states; for checks and benchmarks.

  Jittable with `model`, `mode`, `docs_per_chunk`, `reencode` and `windows` static.
  """
  probs = jax.nn.sigmoid(model.forward(params, tokens, lengths).logits)

  def one_document(args):
    doc_tokens, length = args
    rows, row_lengths = variants(doc_tokens, length, mode)
    fast = model.encodes_deletions if mode == 'delete' else model.encodes_replacements
    if fast and not reencode:
      embedded = model.embed(params, doc_tokens[None])[0]
      encode = model.encode_deletions if mode == 'delete' else model.encode_replacements
      hidden = encode(params, embedded, length)
      alpha = model.project(model.score(params, hidden), masks.attention_mask(rows, row_lengths))
      return jax.nn.sigmoid(model.decode(params, hidden, alpha))
    return jax.nn.sigmoid(model.forward(params, rows, row_lengths).logits)

  if windows and not reencode and loo_windows.applies(model):
    # O(L·H) per document: nothing to bound, so the whole batch at once
    # (chunks are for the paths that build L − 2 rows of L states).
    without = jax.vmap(lambda t, n: loo_windows.variant_probs(model, params, t, n, mode))(
        tokens, lengths)
  else:
    without = jax.lax.map(one_document, (tokens, lengths), batch_size=docs_per_chunk)
  width = tokens.shape[1]
  without = jnp.pad(without, ((0, 0), (1, 1)))  # row i is position i + 1
  words = masks.word_mask(lengths, width)
  without = jnp.where(words, without, 0.0)
  importance = jnp.where(words, jnp.abs(without - probs[:, None]), 0.0)
  return LeaveOneOut(importance, without, probs)
