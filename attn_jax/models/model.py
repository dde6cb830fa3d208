"""The model as pure functions of a params pytree.

    e = model.embed(params, tokens)                  # [B, L] -> [B, L, D]
    h = model.encode(params, e, lengths)             # -> [B, L, H]
    s = model.score(params, h)                       # -> [B, L]
    α = model.project(s, mask)                       # -> [B, L], 0 off the words
    z = model.decode(params, h, α)                   # -> [B] logits ([B, C] for C > 2 classes)

S&S's HAN (`han.HierarchicalEncoder`) is the same with tokens [B, S, W],
lengths [B, S] (words per sentence) and the sentences as the items: h is
[B, S, H] and α [B, S], its final (sentence) attention layer.

Every stage is a plain function, so `jax.grad` / `jax.vmap` can take the
output with respect to the embeddings, the hidden states or α, and any α can
be imposed on `decode`. The params pytree has one subtree per stage:
`embedding`, `encoder`, `attention` (the scorer) and `decoder`.
"""

import dataclasses
import functools
from typing import Callable, Optional

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections

from attn_jax.core.registry import ENCODERS
from attn_jax.models import han, masks, projections, qa
from attn_jax.models.decoder import Decoder
from attn_jax.models.embedding import Embedding
from attn_jax.models.encoders.encoder import fast_path
from attn_jax.models.han import HierarchicalEncoder
from attn_jax.models.interface import AttentionModel, Forward, output_probs  # pylint: disable=unused-import
from attn_jax.models.scorers import SCORERS


class AttentionClassifier(nn.Module):
  """The four stages; `Model` calls them one at a time through `apply`.

  There is deliberately no `__call__`: a whole forward pass must choose its
  attention, which is `Model.forward`'s job (score, then project).
  `create_params` only makes the parameters.
  """
  embedding: nn.Module
  encoder: nn.Module
  attention: nn.Module
  decoder: nn.Module
  # Dropout on the embeddings before the encoder, in training only (S&S's
  # "pre-document-encoder" dropout for FLAN, "pre-sentence-encoder" for HAN).
  input_dropout: float = 0.0

  def setup(self):
    self.embedding_dropout = nn.Dropout(self.input_dropout)

  def embed(self, tokens):
    return self.embedding(tokens)

  def encode(self, embedded, lengths, deterministic=True):
    if self.input_dropout > 0:
      embedded = self.embedding_dropout(embedded, deterministic=deterministic)
    return self.encoder(embedded, lengths, deterministic=deterministic)

  def score(self, hidden):
    return self.attention(hidden)

  def decode(self, hidden, alpha, deterministic=True):
    return self.decoder(hidden, alpha, deterministic=deterministic)

  def create_params(self, tokens, lengths):
    """Touches every stage once so `init` creates all parameters; the uniform
    α here only gives `decode` its input shape, and the output is discarded."""
    hidden = self.encode(self.embed(tokens), lengths)
    mask = (han.sentence_mask(lengths) if tokens.ndim == 3
            else masks.attention_mask(tokens, lengths))
    self.decode(hidden, projections.uniform(self.score(hidden), mask))


@dataclasses.dataclass(frozen=True)
class Model(AttentionModel):
  """The project's own models in the analyses' interface
  (`attn_jax.models.interface`): `attend` is score, then project; the
  capabilities follow from the encoder family (`capabilities`)."""
  module: AttentionClassifier
  project: Callable[[jnp.ndarray, jnp.ndarray], jnp.ndarray]  # (scores, mask) -> α

  def init(self, rng: jax.Array) -> dict:
    if self.hierarchical:
      tokens, lengths = jnp.array([[[4, 5, 6]]], jnp.int32), jnp.array([[3]], jnp.int32)
    elif self.question_answering:  # a passage of one word, then a query of one
      tokens, lengths = jnp.array([[2, 4, 3, 2, 5, 3]], jnp.int32), jnp.array([3], jnp.int32)
    else:
      tokens, lengths = jnp.array([[2, 4, 5, 3]], jnp.int32), jnp.array([4], jnp.int32)
    return self.module.init(rng, tokens, lengths, method='create_params')['params']

  @property
  def hierarchical(self) -> bool:
    """Whether it reads documents × sentences × words (S&S's HAN)."""
    return isinstance(self.module.encoder, HierarchicalEncoder)

  @property
  def question_answering(self) -> bool:
    """Whether it reads a passage and a query (J&W's QA/NLI model, `qa`)."""
    return isinstance(self.module.encoder, qa.QAEncoder)

  @property
  def capabilities(self) -> frozenset:
    """What `attn_jax.models.interface.CAPABILITIES` this model has: its
    decoder reads the states only through Σ α h (`Decoder`), its scorers
    score each state alone, every encoder gives its layers' states, and the
    fast variant paths its encoder family registers. The QA model's states
    are the passage's and the query's, and its decoder reads the query too:
    α can be imposed, scores read, and a passage's one-word variants encoded
    by its passage encoder's family's paths (the query is the same in every
    variant); nothing more."""
    if self.question_answering:
      return frozenset({'imposes_attention', 'scores'} | {
          hook for hook in ('deletion_states', 'replacement_states') if self._fast_path(hook) is not None})
    caps = {'imposes_attention', 'array_states', 'pooled_decode', 'scores', 'layer_states'}
    caps.update(name for name, hook in (('deletion_states', 'deletion_states'),
                                         ('replacement_states', 'replacement_states'),
                                         ('variant_windows', 'variant_windows'))
                if self._fast_path(hook) is not None)
    if self.hierarchical:
      caps.add('hierarchical')
    return frozenset(caps)

  @property
  def num_classes(self) -> int:
    """2 for a binary model (one logit, sigmoid), C for a softmax over C."""
    return self.module.decoder.classes

  def attention_mask(self, tokens: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
    """[B, L] bool: the items attention may weigh (the words; HAN: the sentences)."""
    if self.hierarchical:
      return han.sentence_mask(lengths)
    return masks.attention_mask(tokens, lengths)

  def word_attention(self, params, tokens: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
    """HAN only: the word attention [B, S, W] within each sentence."""
    if not self.hierarchical:
      raise ValueError('word_attention is the HAN\'s lower attention layer; a flat model has one layer')
    apply = functools.partial(self.module.apply, {'params': params})
    return han.word_attention(apply, self.embed(params, tokens), lengths)

  def embed(self, params, tokens: jnp.ndarray) -> jnp.ndarray:
    return self.module.apply({'params': params}, tokens, method='embed')

  def encode(self, params, embedded: jnp.ndarray, lengths: jnp.ndarray,
             dropout_rng: Optional[jax.Array] = None) -> jnp.ndarray:
    """Deterministic unless a `dropout_rng` is given (only the Transformer has dropout)."""
    rngs = {} if dropout_rng is None else {'dropout': dropout_rng}
    return self.module.apply({'params': params}, embedded, lengths, dropout_rng is None,
                             method='encode', rngs=rngs)

  def score(self, params, hidden: jnp.ndarray) -> jnp.ndarray:
    return self.module.apply({'params': params}, hidden, method='score')

  def attend(self, params, hidden: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """α [B, L] = project(score(h), mask): the attention under test."""
    return self.project(self.score(params, hidden), mask)

  def decode(self, params, hidden: jnp.ndarray, alpha: jnp.ndarray,
             dropout_rng: Optional[jax.Array] = None) -> jnp.ndarray:
    """Deterministic unless a `dropout_rng` is given (S&S's classifier dropout)."""
    rngs = {} if dropout_rng is None else {'dropout': dropout_rng}
    return self.module.apply({'params': params}, hidden, alpha, dropout_rng is None,
                             method='decode', rngs=rngs)

  def encode_layers(self, params, embedded: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
    """[K, B, L, H]: the states of every encoder layer, zero at padding; K is
    the Transformer's layer count and 1 for the other encoders; [-1] equals
    `encode` (deterministic)."""
    hidden, state = self.module.apply({'params': params}, embedded, lengths, True,
                                      method='encode', mutable=['intermediates'])
    layers = jax.tree.leaves(state.get('intermediates', {}))
    return jnp.stack(layers) if layers else hidden[None]

  def with_values(self, values: dict) -> 'Model':
    """This model as one model of a model axis sees it: `values` are its own
    per-model values (`attn_jax.training.objective`); a 'sparsegen_lambda'
    (a traced scalar under vmap) sets its sparsegen λ."""
    if 'sparsegen_lambda' not in values:
      return self
    return dataclasses.replace(self, project=functools.partial(
        projections.sparsegen_lin, lam=values['sparsegen_lambda']))

  def _fast_path(self, hook: str) -> Optional[Callable]:
    if not self.question_answering:
      return fast_path(self.module.encoder, hook)
    # QA: the passage's encoder's path; the query's states are the same in every variant.
    passage_path = None if hook == 'variant_windows' else fast_path(self.module.encoder.passage, hook)
    return None if passage_path is None else functools.partial(_qa_variant_states, passage_path)

  @property
  def encodes_deletions(self) -> bool:
    """Whether `encode_deletions` has a fast path for this encoder (its
    family's `deletion_states`: all but the Transformer, whose every state
    reads every position, S&S's families and a HAN)."""
    return self._fast_path('deletion_states') is not None

  def encode_deletions(self, params, embedded: jnp.ndarray, length: jnp.ndarray) -> jnp.ndarray:
    """[L, D] embeddings of one document -> [L − 2, L, H] states of its one-word
    deletions (row i without position i + 1), equal to `encode` of the
    shortened rows. Only where `encodes_deletions`."""
    path = self._fast_path('deletion_states')
    if path is None:
      raise NotImplementedError(f'no deletion path for {type(self.module.encoder).__name__}; '
                                'encode the shortened rows instead')
    return path(self.module.encoder, params['encoder'], embedded, length)

  @property
  def encodes_replacements(self) -> bool:
    """Whether `encode_replacements` has a fast path for this encoder."""
    return self._fast_path('replacement_states') is not None

  def encode_replacements(self, params, embedded: jnp.ndarray, length: jnp.ndarray) -> jnp.ndarray:
    """[L, D] embeddings of one document -> [L − 2, L, H] states of its
    one-word replacements by PAD (row i with position i + 1 as PAD), equal to
    `encode` of the replaced rows. Only where `encodes_replacements`."""
    path = self._fast_path('replacement_states')
    if path is None:
      raise NotImplementedError(f'no replacement path for {type(self.module.encoder).__name__}; '
                                'encode the replaced rows instead')
    return path(self.module.encoder, params['encoder'], embedded, length)

  @property
  def variants_change_windows(self) -> bool:
    """Whether `variant_windows` holds: a one-word deletion or replacement
    changes only the states within a fixed radius of the word (the CNN and
    the Average encoder)."""
    return self._fast_path('variant_windows') is not None

  def variant_windows(self, params, embedded: jnp.ndarray, mode: str):
    """[L, D] embeddings of one document -> (states [L − 2, P, H], positions
    [L − 2, P], radius R): the states of each one-word variant (row g − 1
    leaves out position g) at the P positions it changes, g − R .. g + R − 1
    of the shortened row for 'delete' (P = 2R), g − R .. g + R for 'replace'
    (P = 2R + 1). All other states are the document's own (one place left
    after the window for 'delete'). Only where `variants_change_windows`."""
    path = self._fast_path('variant_windows')
    if path is None:
      raise NotImplementedError(f'the variants of {type(self.module.encoder).__name__} change every state')
    return path(self.module.encoder, params['encoder'], embedded, mode)

  def forward_embedded(self, params, embedded: jnp.ndarray, lengths: jnp.ndarray,
                       mask: jnp.ndarray, dropout_rng: Optional[jax.Array] = None) -> Forward:
    """The pass from given embeddings (for gradients with respect to them)."""
    hidden = self.encode(params, embedded, lengths, dropout_rng)
    scores = self.score(params, hidden)
    alpha = self.project(scores, mask)
    decode_rng = None if dropout_rng is None else jax.random.fold_in(dropout_rng, 1)
    return Forward(self.decode(params, hidden, alpha, decode_rng), alpha, scores, hidden,
                   embedded, mask)

  def forward(self, params, tokens: jnp.ndarray, lengths: jnp.ndarray,
              dropout_rng: Optional[jax.Array] = None) -> Forward:
    """tokens [B, L] int32, lengths [B] (with SOS and EOS) -> `Forward`
    (HAN: tokens [B, S, W], lengths [B, S])."""
    return self.forward_embedded(params, self.embed(params, tokens), lengths,
                                 self.attention_mask(tokens, lengths), dropout_rng)


def build_encoder(cfg: ml_collections.ConfigDict, items: str = 'words') -> nn.Module:
  """The encoder `cfg.encoder` names (a registered family, `ENCODERS`);
  `items='all'` for a plain sequence (S&S's encoders inside a HAN), 'words'
  for J&W's layout."""
  if cfg.encoder not in ENCODERS:
    raise ValueError(f'{ENCODERS.unknown(cfg.encoder)}; choose from {", ".join(ENCODERS.names())}')
  family = ENCODERS[cfg.encoder]
  if items != 'words' and not family.in_han:
    han_ok = ', '.join(e.name for e in ENCODERS.values() if e.in_han)
    raise ValueError(f'a HAN is built from the {han_ok} encoders, not {cfg.encoder!r}')
  return family.build(cfg, items)


def build_model(cfg: ml_collections.ConfigDict, vocab_size: int) -> Model:
  """The model described by `config.model`.

  J&W's flat models, S&S's FLAN, or with `hierarchical` S&S's HAN (the same
  encoder and scorer at both levels); with `query`, J&W's QA/NLI model.

  Args:
    cfg: `config.model`: the encoder family (`encoder`), the scorer
      (`attention`), the projection (`projection`, `sparsegen_lambda`),
      `embed_dim`, `embed_init_std`, and optionally `classes` (default 2),
      the dropouts, `init`, `hierarchical` and `query`.
    vocab_size: the rows of the embedding (the vocabulary's size).

  Returns:
    A `Model` (an `AttentionModel`) whose params come from `model.init(rng)`.

  Raises:
    ValueError: an unregistered encoder, a HAN from an encoder family that
      cannot be in one, or a QA model from another encoder or attention than
      J&W's.
    KeyError: an unknown attention (scorer) or projection.

  Example:
    model = build_model(config.model, len(vocab))
    params = model.init(jax.random.PRNGKey(0))
    fwd = model.forward(params, tokens, lengths)
  """
  if cfg.get('query', False):
    return _qa_model(cfg, vocab_size)
  if cfg.get('hierarchical', False):
    encoder = HierarchicalEncoder(build_encoder(cfg, 'all'), SCORERS[cfg.attention](),
                                  build_encoder(cfg, 'all'), cfg.get('sentence_dropout', 0.0))
  else:
    encoder = build_encoder(cfg)
  module = AttentionClassifier(
      embedding=Embedding(vocab_size, cfg.embed_dim, cfg.embed_init_std),
      encoder=encoder,
      attention=SCORERS[cfg.attention](),
      decoder=Decoder(cfg.get('classes', 2), cfg.get('output_dropout', 0.0), cfg.get('init', 'torch')),
      input_dropout=cfg.get('input_dropout', 0.0))
  return Model(module, projections.get(cfg.projection, cfg.sparsegen_lambda))


def _qa_variant_states(passage_path: Callable, encoder: qa.QAEncoder, params: dict, embedded: jnp.ndarray,
                       length: jnp.ndarray) -> dict:
  """A QA row's one-word passage variants (`encode_deletions`, `encode_replacements`).

  Args:
    passage_path: the passage encoder family's `deletion_states` or
      `replacement_states`.
    encoder: the `qa.QAEncoder`; params: its params.
    embedded: [L, 2D + 1] one row's embeddings (`qa.QAEmbedding`), length: the passage's.

  Returns:
    {'passage': [L − 2, L, H], 'query': [L − 2, H]}: the passage's states
    from its family's path, on the passage's embeddings alone as `QAEncoder`
    masks them; the query's summary of the whole row, the same in every
    variant (a deletion shifts the query left with the passage's length, a
    replacement leaves it in place).
  """
  dim = (embedded.shape[-1] - 1) // 2
  inside = masks.sequence_mask(length[None], embedded.shape[0])[0][:, None].astype(embedded.dtype)
  passage = passage_path(encoder.passage, params['passage'], embedded[:, :dim] * inside, length)
  query = encoder.apply({'params': params}, embedded[None], length[None])['query']
  return {'passage': passage, 'query': jnp.broadcast_to(query, (passage.shape[0],) + query.shape[1:])}


# How each family's query states become Q (`qa.summary`).
QA_SUMMARIES = {'bilstm': 'last', 'cnn': 'max', 'average': 'mean'}


def _qa_model(cfg: ml_collections.ConfigDict, vocab_size: int) -> Model:
  """J&W's QA/NLI model (`qa`): a passage encoder and a query encoder of the
  family `cfg.encoder`, `tanh_qa` or `dot_qa` attention, their decoder."""
  if cfg.encoder not in QA_SUMMARIES or cfg.attention not in qa.QA_SCORERS:
    raise ValueError(f'the QA model is built from the {", ".join(QA_SUMMARIES)} encoders with '
                     f'{" or ".join(qa.QA_SCORERS)} attention (J&W), not {cfg.encoder} + {cfg.attention}')
  module = AttentionClassifier(
      embedding=qa.QAEmbedding(vocab_size, cfg.embed_dim, cfg.embed_init_std),
      encoder=qa.QAEncoder(build_encoder(cfg), build_encoder(cfg), QA_SUMMARIES[cfg.encoder],
                           cfg.get('query_width')),
      attention=qa.QA_SCORERS[cfg.attention](),
      decoder=qa.QADecoder(cfg.classes))
  return Model(module, projections.get(cfg.projection, cfg.sparsegen_lambda))
