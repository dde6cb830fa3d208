"""J&W's question answering and NLI model (their `model/Question_Answering.py`;
the equations, not their code): attention over a passage's words with a
query — the question (bAbI) or the hypothesis (SNLI) — that stays fixed.

    e = embed(tokens)                 # [B, L] -> [B, L, 2D + 1]
    s = encode(e, lengths)            # {'passage': [B, L, H], 'query': [B, H]}
    α = project(score(s), mask)       # over the passage's words
    z = decode(s, α)                  # [B, C]: W₂ tanh(W_p c + W_q Q) + b, c = Σ α_t h_t

The row layout (`query_rows`): a document's row is its passage, `[SOS]
words [EOS]`, then its query, `[SOS] words [EOS]`, then PAD; `lengths` is
the passage's. Every analysis perturbs positions 1 .. length − 2 only, and
a deletion shifts the rest of the row left with the length, so the query is
the same in every variant: the analyses run on this model as on any other,
with the question fixed, as J&W compute them (§2, §3).

Passage and query have an encoder each of the same family, and an embedding
table each (J&W share neither); `embed` gives both rows side by side and a
channel that is 1 on real tokens, from which `encode` finds the query's
length. The query's summary Q is the BiLSTM's final forward and backward
states, the CNN's max over its words (their `max_pool1d` of the masked
ReLU outputs), or the Average encoder's mean over SOS .. EOS (J&W's code
averages over the padded batch width, pads included, so their Q depends on
the batch; here it is each query's own).
"""

import math
from typing import Optional

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.data.vocabulary import PAD
from attn_jax.models import masks
from attn_jax.models.initializers import torch_uniform

SUMMARIES = ('last', 'max', 'mean')


def query_rows(passages, queries, multiple: int = 8) -> tuple[np.ndarray, np.ndarray]:
  """Encoded passages and queries (each int32 `[SOS] .. [EOS]`) -> (rows
  [B, W] int32, passage lengths [B]), W the longest passage + query rounded
  up to `multiple`."""
  lengths = np.asarray([len(p) for p in passages], np.int32)
  total = [len(p) + len(q) for p, q in zip(passages, queries)]
  width = -(-max(total) // multiple) * multiple
  rows = np.full((len(passages), width), PAD, np.int32)
  for b, (p, q) in enumerate(zip(passages, queries)):
    rows[b, :len(p) + len(q)] = np.concatenate([p, q])
  return rows, lengths


class QAEmbedding(nn.Module):
  """[B, L] token ids -> [B, L, 2·dim + 1]: the passage table's row, the
  query table's row, and 1 on a real token (0 on PAD). Tables N(0, init_std²),
  PAD the zero vector (J&W's `padding_idx=0`)."""
  vocab_size: int
  dim: int
  init_std: float = 1.0

  @nn.compact
  def __call__(self, tokens: jnp.ndarray) -> jnp.ndarray:
    def init(key, shape, dtype=jnp.float32):
      return nn.initializers.normal(self.init_std)(key, shape, dtype).at[PAD].set(0.0)

    tables = [self.param(name, init, (self.vocab_size, self.dim)) for name in ('passage', 'query')]
    real = (tokens != PAD)[..., None].astype(tables[0].dtype)
    return jnp.concatenate([jnp.take(t, tokens, axis=0) * real for t in tables] + [real], axis=-1)


def summary(states: jnp.ndarray, lengths: jnp.ndarray, kind: str) -> jnp.ndarray:
  """[B, L, H] query states, [B] lengths (SOS, EOS counted) -> Q [B, H].

  'last': a BiLSTM's final states, forward at the last token and backward at
  the first ([forward; backward] halves). 'max': the max over positions
  (a CNN's outputs are zero off the words and ReLU ≥ 0). 'mean': the mean
  over the first `lengths` positions.
  """
  if kind == 'last':
    half = states.shape[-1] // 2
    last = jnp.take_along_axis(states, jnp.maximum(lengths - 1, 0)[:, None, None], axis=1)[:, 0]
    return jnp.concatenate([last[:, :half], states[:, 0, half:]], axis=-1)
  if kind == 'max':
    return states.max(axis=1)
  if kind == 'mean':
    valid = masks.sequence_mask(lengths, states.shape[1])[..., None].astype(states.dtype)
    return (states * valid).sum(axis=1) / jnp.maximum(lengths, 1)[:, None].astype(states.dtype)
  raise ValueError(f'summary must be one of {SUMMARIES}, not {kind!r}')


class QAEncoder(nn.Module):
  """Embedded rows [B, L, 2D + 1], passage lengths [B] -> {'passage':
  [B, L, H] states, 'query': Q [B, H]}; `passage` and `question` are two
  encoders of one family (separate parameters)."""
  passage: nn.Module
  question: nn.Module
  summary: str = 'last'
  # The query positions the question encoder reads (None: the whole row). A
  # query is a few tokens at the end of a row as wide as the longest passage:
  # over the whole row the question encoder does the passage encoder's work
  # again. The dataset's declared longest query sets it
  # (`DatasetSpec.max_query_tokens`; its loader refuses a longer one).
  query_width: Optional[int] = None

  def __call__(self, embedded: jnp.ndarray, lengths: jnp.ndarray, deterministic: bool = True):
    dim = (embedded.shape[-1] - 1) // 2
    width = embedded.shape[1]
    # The passage encoder sees its own positions only (a convolution at its
    # last words would otherwise reach into the query).
    inside_passage = masks.sequence_mask(lengths, width)[..., None].astype(embedded.dtype)
    states = self.passage(embedded[..., :dim] * inside_passage, lengths, deterministic=deterministic)
    # The query follows the passage: positions length .. length + m − 1.
    read = width if self.query_width is None else min(width, self.query_width)
    index = lengths[:, None] + jnp.arange(read)[None, :]
    inside = (index < width)[..., None].astype(embedded.dtype)
    shifted = jnp.take_along_axis(embedded[..., dim:], jnp.minimum(index, width - 1)[..., None], axis=1)
    shifted = shifted * inside
    query_lengths = jax.lax.stop_gradient(shifted[..., -1].sum(axis=1)).astype(lengths.dtype)
    query_states = self.question(shifted[..., :-1], query_lengths, deterministic=deterministic)
    return {'passage': states, 'query': summary(query_states, query_lengths, self.summary)}


class QAAdditiveScorer(nn.Module):
  """J&W `tanh_qa`: s_t = vᵀ tanh(W_p h_t + b_p + W_q Q + b_q), W: H -> H/2."""

  @nn.compact
  def __call__(self, states) -> jnp.ndarray:
    hidden, query = states['passage'], states['query']
    size = hidden.shape[-1]
    dense = lambda name: nn.Dense(size // 2, kernel_init=torch_uniform(size),
                                  bias_init=torch_uniform(size), name=name)
    u = jnp.tanh(dense('passage')(hidden) + dense('query')(query)[:, None, :])
    return nn.Dense(1, use_bias=False, kernel_init=torch_uniform(size // 2), name='v')(u)[..., 0]


class QADotScorer(nn.Module):
  """J&W `dot_qa`: s_t = h_t · Q / √H (no parameters)."""

  @nn.compact
  def __call__(self, states) -> jnp.ndarray:
    hidden, query = states['passage'], states['query']
    return jnp.einsum('blh,bh->bl', hidden, query) / math.sqrt(hidden.shape[-1])


QA_SCORERS = {'tanh': QAAdditiveScorer, 'dot': QADotScorer}


class QADecoder(nn.Module):
  """J&W `AttnDecoderQA`: logits [B, C] = W₂ tanh(W_p c + b_p + W_q Q + b_q)
  + b₂, c = Σ_t α_t h_t, hidden layer H/2. α is an input (any α can be
  imposed)."""
  classes: int

  @nn.compact
  def __call__(self, states, alpha: jnp.ndarray, deterministic: bool = True) -> jnp.ndarray:
    del deterministic  # J&W's QA model has no dropout
    hidden, query = states['passage'], states['query']
    size = hidden.shape[-1]
    context = jnp.einsum('bl,blh->bh', alpha, hidden)
    dense = lambda name: nn.Dense(size // 2, kernel_init=torch_uniform(size),
                                  bias_init=torch_uniform(size), name=name)
    inner = jnp.tanh(dense('passage')(context) + dense('query')(query))
    return nn.Dense(self.classes, kernel_init=torch_uniform(size // 2),
                    bias_init=torch_uniform(size // 2), name='output')(inner)
