"""`aj.explain`'s programs, sized to the memory there is before they run.

Why: leave-one-out holds a text's n variants of n states at once, so a long
text can ask XLA for more than any machine has (5,000 words on an SST
BiLSTM: ~77 GB) and fail only after compiling, or be killed. So explain
chunks its work as the `loo` stage does (`feature_importance.loo_chunks`:
from XLA's memory analysis of the compiled chunk, documents per chunk, and a
long document's variants a few rows at a time) within a budget
(`attn_jax.core.memory_budget`), and computes fewer texts per call where
even that does not fit. The chunks change how much is computed at once,
not what: the scores are the same to float precision.
"""

from typing import Callable, NamedTuple, Optional

import jax
import ml_collections
import numpy as np

from attn_jax.analysis import gradient_importance
from attn_jax.core import memory_budget, output_folders
from attn_jax.core.errors import AttnJaxError
from attn_jax.data.batching import pad_texts
from attn_jax.data.vocabulary import UNK
from attn_jax.stages import feature_importance, stage

# Documents whose leave-one-out variants run together where they fit: the
# `loo` stage's default (the fastest measured on CPU).
DOCS_PER_CHUNK = 4


class TooLongForMemory(AttnJaxError, ValueError):
  """A text whose analyses do not fit in the memory there is however they
  are chunked; the message names a length that fits. Also a `ValueError`."""


class _Batch(NamedTuple):  # what `feature_importance.loo_chunks` reads of a batch
  tokens: np.ndarray
  lengths: np.ndarray


def context(model, params, key: dict, budget: Optional[int]) -> stage.AnalysisContext:
  """The `loo` stage's context over a model, for `explain_texts`.

  Args:
    model: a binary model over words (`attn_jax.models.interface`).
    params: its params.
    key: what names the model's compiled programs in the stages' cache (a
      run's model config).
    budget: the bytes one program may hold beside its arguments; None: no limit known.

  Returns:
    An `AnalysisContext` on one device, with `analysis.loo.max_chunk_bytes = budget`.
  """
  cfg = ml_collections.ConfigDict({'model': key, 'devices': 1, 'analysis': {'loo': {
      'mode': 'delete', 'docs_per_chunk': DOCS_PER_CHUNK, 'max_chunk_bytes': budget}}})
  return stage.AnalysisContext(model, params, None, 'explain', cfg, '', '')


def gradient_detached(model) -> bool:
  """Whether explain's gradient holds α constant (J&W's `gradient_mem`).

  Only where α can be imposed: a read-only α (the mean over heads, the
  rollout) has no one value to hold every head at, so its gradient is taken
  with the attention attached, and `explain` labels it so.
  """
  return 'imposes_attention' in model.capabilities


def _scores(model):
  detach = gradient_detached(model)

  def fn(params, tokens, lengths):
    forward = model.forward(params, tokens, lengths)
    return {'prob': jax.nn.sigmoid(forward.logits), 'alpha': forward.alpha,
            'gradient': gradient_importance(model, params, tokens, lengths, detach_attention=detach)}
  return fn


_SCORES = 'explain'  # the name of the ŷ, α and gradient program in the stages' cache


def _scores_bytes(ctx, tokens, lengths) -> Optional[int]:
  return ctx.temp_bytes(_SCORES, lambda: _scores(ctx.model), tokens, lengths)


def _loo_bytes(ctx, tokens, lengths, docs: int, rows: Optional[int]) -> Optional[int]:
  return ctx.temp_bytes(*feature_importance._loo_fn(ctx, docs, rows), tokens, lengths)  # pylint: disable=protected-access


def _larger(*got: Optional[int]) -> Optional[int]:
  """The larger of two programs' bytes (they run one after the other); None if either is unknown."""
  return None if None in got else max(got)


def least_bytes(ctx, n: int) -> Optional[int]:
  """XLA's temporary bytes for one text of `n` words, its leave-one-out
  variants one at a time: the least any chunking of it asks for.

  Args:
    ctx: from `context`.
    n: the words of the text.

  Returns:
    Bytes, or None where the backend does not say.
  """
  tokens, lengths = pad_texts([np.full(n, UNK)])
  return _larger(_scores_bytes(ctx, tokens, lengths), _loo_bytes(ctx, tokens, lengths, 1, 1))


def _loo_program(ctx, tokens, lengths, budget: Optional[int]) -> tuple[Callable, Optional[int]]:
  """Leave-one-out's program for a batch, chunked by `loo_chunks` (the `loo`
  stage's sizing), and its bytes (None where no budget is set)."""
  docs, rows = feature_importance.loo_chunks(ctx, _Batch(tokens, lengths))
  need = None if budget is None else _loo_bytes(ctx, tokens, lengths, docs, rows)
  while need is not None and need > budget and rows is not None and rows > 1:
    rows = max(1, rows // 2)  # `loo_chunks` sized the rows from a probe: the chosen program can hold more
    need = _loo_bytes(ctx, tokens, lengths, docs, rows)
  return ctx.jit(*feature_importance._loo_fn(ctx, docs, rows)), need  # pylint: disable=protected-access


def _words_that_fit(ctx, words: int, need: int) -> int:
  """The most words (below `words`, which needs `need` bytes) of one text
  that fit the budget (`least_bytes`); 0 where not even one word does."""
  budget = ctx.settings.loo.max_chunk_bytes
  n = min(words - 1, int(words * budget / need))  # about linear in the length at one variant a chunk
  while n >= 1:
    got = least_bytes(ctx, n)
    if got is None or got <= budget:
      return n
    n = min(n - 1, int(n * min(0.8, budget / got)))
  return 0


class _Call(NamedTuple):  # one compiled call over some texts
  index: list[int]
  tokens: np.ndarray
  lengths: np.ndarray
  scores: Callable
  loo: Callable


def _plan(ctx, batch: list[tuple[int, np.ndarray]], where: str) -> list[_Call]:
  """The calls that compute `batch` (index, ids) within `ctx`'s budget:
  all its texts in one call, or each half in calls of its own."""
  tokens, lengths = pad_texts([seq for _, seq in batch])
  budget = ctx.settings.loo.max_chunk_bytes
  scores_need = None if budget is None else _scores_bytes(ctx, tokens, lengths)
  if len(batch) > 1 and scores_need is not None and scores_need > budget:  # no leave-one-out chunks help
    return _plan(ctx, batch[:len(batch) // 2], where) + _plan(ctx, batch[len(batch) // 2:], where)
  loo, loo_need = _loo_program(ctx, tokens, lengths, budget)
  need = None if budget is None else _larger(scores_need, loo_need)
  if need is None or need <= budget:
    return [_Call([i for i, _ in batch], tokens, lengths, ctx.jit(_SCORES, lambda: _scores(ctx.model)), loo)]
  if len(batch) > 1:  # each half as wide as its own longest text
    return _plan(ctx, batch[:len(batch) // 2], where) + _plan(ctx, batch[len(batch) // 2:], where)
  (i, seq), = batch
  fit = _words_that_fit(ctx, len(seq), need)
  advice = (f'texts of up to {fit:,} words fit: split it into parts of at most {fit:,} words' if fit else
            'not even a one-word text fits: free memory, or use a machine with more')
  raise TooLongForMemory(
      f'text {i} has {len(seq):,} words: explaining it needs about {output_folders.size(need)} at once '
      f'(XLA\'s estimate of its larger program, leave-one-out\'s variants chunked to fit), more than the '
      f'{output_folders.size(budget)} it may use ({where}); {advice}')


def explain_texts(ctx, batches: list[list[tuple[int, np.ndarray]]], where: str) -> dict[int, dict[str, np.ndarray]]:
  """The scores of texts, every call planned (compiled and its memory
  checked) before the first runs; fewer texts per call where all of a batch
  at once would not fit `ctx`'s budget.

  Args:
    ctx: from `context`.
    batches: lists of (text index, [n] word ids), each text at least one word.
    where: what the budget is, for the error (e.g. '75% of the 19 GB available on this host').

  Returns:
    {text index: {'prob': ŷ, 'alpha', 'gradient', 'loo': [L] its padded row
    (the words at positions 1 .. n)}}.

  Raises:
    TooLongForMemory: one text alone does not fit, however chunked (before anything ran).
  """
  calls = [call for batch in batches for call in _plan(ctx, batch, where)]
  out = {}
  for call in calls:
    got = jax.tree.map(np.asarray, call.scores(ctx.params, call.tokens, call.lengths))
    got['loo'] = np.asarray(call.loo(ctx.params, call.tokens, call.lengths).importance)
    out.update({i: {k: v[row] for k, v in got.items()} for row, i in enumerate(call.index)})
  return out
