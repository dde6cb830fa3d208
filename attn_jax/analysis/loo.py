"""Leave-one-out importance (J&W's `Model.remove_and_run`): the output change when a word goes.

J&W delete the word (the sequence gets shorter and is re-encoded; attention
is recomputed over the remaining words) and score it by |ŷ₋ₜ − ŷ|; with
more classes (their QA and NLI models, `Model.remove_and_run`) by the L1
distance of the two output distributions, Σ_c |p₋ₜ,c − p_c|.
Replacing the word by PAD (same length; PAD embeds to zero and gets no
attention) is the common alternative.

Every position of every document is computed in one jitted program: the
L − 2 variants of a document form one batch for the model, and documents
are mapped in chunks (`docs_per_chunk`) so memory stays bounded. Deletion
uses the encoder's own path for it where the model has one
(capability 'deletion_states', `encode_deletions`: the BiLSTM shares a document's input projections
and the states the deletion does not reach, the CNN all outputs but the
windows that cover the deleted word, the Average encoder all states; a QA
model its passage encoder's path, the query's states unchanged) and
re-encodes the shortened rows otherwise (the Transformer). Replacement by
PAD has such paths too for the BiLSTM, the CNN and the Average encoder
('replacement_states', `encode_replacements`). Under softmax attention the CNN and the
Average encoder go further (`loo_windows`): a variant changes only a window
of states, so it attends from the document's own prefix and suffix sums
plus its window instead of over all its states.
"""

import functools
from typing import Literal, NamedTuple, Optional

import jax
import jax.numpy as jnp

from attn_jax.analysis import contract, loo_windows, needs
from attn_jax.analysis.measure import Measure
from attn_jax.core.registry import MEASURES
from attn_jax.data.vocabulary import PAD
from attn_jax.models import masks
from attn_jax.models.interface import AttentionModel, ContractError

Mode = Literal['delete', 'replace']


class LeaveOneOut(NamedTuple):
  """Leave-one-out importance of every word of every document (J&W's `remove_and_run`).

  Attributes:
    importance: [B, L] |ŷ₋ₜ − ŷ| (C > 2 classes: Σ_c |p₋ₜ,c − p_c|), 0 off the words.
    probs_without: [B, L] ŷ₋ₜ, the output without word t ([B, L, C]), 0 off the words.
    probs: [B] ŷ, the output of the whole document ([B, C]).
  """
  importance: jnp.ndarray     # [B, L] |ŷ₋ₜ − ŷ| (C > 2 classes: Σ_c |p₋ₜ,c − p_c|), 0 off the words
  probs_without: jnp.ndarray  # [B, L] ŷ₋ₜ ([B, L, C]), 0 off the words
  probs: jnp.ndarray          # [B] ŷ ([B, C])


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


def fast_path(model: AttentionModel, mode: Mode = 'delete', windows: bool = True) -> str:
  """Which path `leave_one_out` takes for this model: 'windows' (a variant
  changes a window of states, softmax attention: `loo_windows`), 'states'
  (the encoder's own variant states, 'deletion_states' or
  'replacement_states') or 'exact' (every variant re-encoded). Only what the
  model declares is used."""
  if windows and loo_windows.applies(model):
    return 'windows'
  if model.has('deletion_states' if mode == 'delete' else 'replacement_states'):
    return 'states'
  return 'exact'


@functools.cache
def _jitted():
  return jax.jit(leave_one_out, static_argnums=0, static_argnames=('mode', 'reencode', 'windows'))


def check_fast_path(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                    mode: Mode = 'delete', atol: float = 1e-4, windows: bool = True) -> None:
  """Compares `leave_one_out`'s fast path for this model with the exact one
  (every variant re-encoded) on the first document of a batch.

  `leave_one_out` runs it itself, once per model and path, where it takes a
  fast path on concrete inputs (`contract.once`).

  Args:
    tokens: [B, L] int32; lengths: [B]; only row 0 is used.
    atol: the largest |Δŷ₋ₜ| allowed between the two paths.
    windows: as `leave_one_out` (False: the window path is not taken).

  Raises:
    ContractError: the fast path the model's capabilities chose differs
      from the exact one (naming the capability and the difference).
  """
  path = fast_path(model, mode, windows)
  if path == 'exact':
    return
  # The row up to its last token: a QA row's query follows its passage's `lengths[0]`.
  n = int(jnp.max(jnp.nonzero(jnp.asarray(tokens[0]) != PAD, size=tokens.shape[1], fill_value=0)[0])) + 1
  doc, length = jnp.asarray(tokens[:1, :max(n, int(lengths[0]))]), jnp.asarray(lengths[:1])
  run = _jitted()
  fast = run(model, params, doc, length, mode=mode, windows=windows).probs_without
  exact = run(model, params, doc, length, mode=mode, reencode=True).probs_without
  gap = float(jnp.max(jnp.abs(fast - exact)))
  if not gap <= atol:
    caps = ('variant_windows, pooled_decode, scores' if path == 'windows'
            else 'deletion_states' if mode == 'delete' else 'replacement_states')
    raise ContractError(f'leave-one-out\'s fast path ({caps}) differs from re-encoding every variant by '
                         f'up to {gap:.3g} in ŷ on the first document; {type(model).__name__} does not have '
                         'what it declares: remove the capability, or pass reencode=True')


def leave_one_out(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                  mode: Mode = 'delete', docs_per_chunk: int = 1,
                  reencode: bool = False, windows: bool = True,
                  rows_per_chunk: Optional[int] = None) -> LeaveOneOut:
  """Leave-one-out importance of every word of every document.

  J&W's `remove_and_run`: the output change when a word is deleted (the sequence
  re-encoded one shorter), or replaced by PAD (`mode`); every position of
  every document in one program, by the fastest path the model declares
  (`fast_path`; see the module docstring).

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids, L >= 3.
    lengths: [B] int, document lengths with SOS and EOS.
    mode: 'delete' (J&W) or 'replace' (by PAD).
    docs_per_chunk: documents run together; peak memory grows with it
      (each document is L − 2 sequences of length L). Not used by the
      windowed path (`windows`), which runs the whole batch at once.
    reencode: re-encode the shortened rows even where the model has a
      deletion path ('deletion_states'); the exact path, for checks and benchmarks.
    windows: under softmax attention, where a variant changes only a window
      of states (CNN, Average), attend from prefix and suffix sums of the
      document's own (`loo_windows`); False: attend over every variant's
      states; for checks and benchmarks.
    rows_per_chunk: on the re-encoding path, a document's variant rows run
      this many at a time (None: all L − 2 at once), so a document too long
      for its L − 2 rows of states to fit in memory is still analysed.

  Jittable with `model`, `mode`, `docs_per_chunk`, `reencode`, `windows` and
  `rows_per_chunk` static.

  Returns:
    `LeaveOneOut`: importance [B, L] (|ŷ₋ₜ − ŷ|, or Σ_c |p₋ₜ,c − p_c| with
    C > 2 classes), probs_without [B, L] ([B, L, C]) and probs [B] ([B, C]);
    the [B, L] fields are 0 off the words.

  Raises:
    ValueError: `mode` is neither 'delete' nor 'replace' (raised where the variants
      are built: every path but the windowed one).
    InterfaceError: the model does not take the analysis
      (`needs.NEEDS['leave_one_out']`); `ContractError`: its pieces, or the
      fast path it declares, break the interface on the first batch
      (`contract.check`, `check_fast_path`).
  """
  needs.check(model, 'leave_one_out')
  contract.check(model, params, tokens, lengths)
  if not reencode and fast_path(model, mode, windows) != 'exact' and contract.concrete(params, tokens, lengths):
    contract.once(contract.key(model, 'loo fast path', mode, windows), lambda: check_fast_path(
        model, params, tokens, lengths, mode=mode, windows=windows))
  probs = model.probabilities(model.forward(params, tokens, lengths).logits)

  def one_document(args):
    doc_tokens, length = args
    rows, row_lengths = variants(doc_tokens, length, mode)
    # The encoder's variant states, where declared (also when the window path is turned off).
    if not reencode and fast_path(model, mode, windows=False) == 'states':
      embedded = model.embed(params, doc_tokens[None])[0]
      encode = model.encode_deletions if mode == 'delete' else model.encode_replacements
      hidden = encode(params, embedded, length)
      alpha = model.attend(params, hidden, model.attention_mask(rows, row_lengths))
      return model.probabilities(model.decode(params, hidden, alpha))
    if rows_per_chunk is None:
      return model.probabilities(model.forward(params, rows, row_lengths).logits)

    def one_row(args):
      row, n = args
      return model.probabilities(model.forward(params, row[None], n[None]).logits)[0]
    return jax.lax.map(one_row, (rows, row_lengths), batch_size=rows_per_chunk)

  if not reencode and fast_path(model, mode, windows) == 'windows':
    # O(L·H) per document: nothing to bound, so the whole batch at once
    # (chunks are for the paths that build L − 2 rows of L states).
    without = jax.vmap(lambda t, n: loo_windows.variant_probs(model, params, t, n, mode))(
        tokens, lengths)
  else:
    without = jax.lax.map(one_document, (tokens, lengths), batch_size=docs_per_chunk)
  width = tokens.shape[1]
  classes = ((0, 0),) * (without.ndim - 2)  # more than two classes: [B, L − 2, C]
  without = jnp.pad(without, ((0, 0), (1, 1)) + classes)  # row i is position i + 1
  words = masks.word_mask(lengths, width)
  without = jnp.where(words.reshape(words.shape + (1,) * len(classes)), without, 0.0)
  change = jnp.abs(without - probs[:, None])
  if classes:  # J&W's QA code: the L1 distance of the two distributions
    change = change.sum(axis=-1)
  importance = jnp.where(words, change, 0.0)
  return LeaveOneOut(importance, without, probs)


def _check_once(model, params, tokens, lengths) -> None:
  """The deletion fast path `model` takes, checked on this batch once per model."""
  if fast_path(model) != 'exact':
    contract.once(contract.key(model, 'loo fast path', 'delete', True),
                  lambda: check_fast_path(model, params, tokens, lengths))


# Stored by the `loo` stage as 'loo' and, normalised over the words (Meister's
# D_ŷ(x), eq. 6: the same ranking), by the `importance` stage as 'd_y_x'.
LEAVE_ONE_OUT = MEASURES.register(Measure(
    name='leave_one_out', label='J&W leave-one-out', column='leave-one-out', paper='jw',
    section='§3 (Model.remove_and_run): |ŷ − ŷ_{−t}|', order=20,
    fn=lambda model, params, tokens, lengths: leave_one_out(model, params, tokens, lengths).importance,
    # deletion (the default mode); by replacement 'replacement_states'
    fast=(('deletion_states',), ('variant_windows', 'scores', 'pooled_decode')), check_fast=_check_once,
    stored_as={'loo': 'loo', 'importance': 'd_y_x', 'evidence': 'loo'}, columns={'d_y_x': 'D_ŷ(x)'}, short='LOO'))
