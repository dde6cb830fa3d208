"""What an analysis needs from a model: the interface every analysis takes.

A model, for `attn_jax.analysis`, is four pure functions of a params pytree
in the papers' own decomposition, plus the mask of the items its attention
weighs and what it can do beyond that (its capabilities, declared):

    e = model.embed(params, tokens)              # [B, L] int32 -> [B, L, D]
    h = model.encode(params, e, lengths)         # -> states: any pytree of [B, ...] arrays
    α = model.attend(params, h, mask)            # -> [B, L], the attention under test
    z = model.decode(params, h, α)               # -> [B] logits (two classes) or [B, C]
    mask = model.attention_mask(tokens, lengths) # [B, L] bool, the items α weighs
    model.num_classes                            # 2: one logit, sigmoid; C: softmax over C
    model.capabilities                           # frozenset of names from CAPABILITIES

The batch layout is stated once, in `attn_jax.data.batching.pad_texts`:
row b is `[SOS] w_1 .. w_n [EOS] PAD ..`, `lengths[b] = n + 2`, and the
items are the words, positions 1 .. n (`attention_mask`'s default). α is
0 off the mask and sums to 1 over it. `decode` takes α as an input, so an
analysis can impose another α (a permutation, an adversary, an erasure);
only a model that declares 'imposes_attention' promises that doing so means
what those analyses assume.

Subclass `AttentionModel` (the project's own `Model` does) or build one from
functions, a Flax linen module or a Flax NNX module (`attn_jax.models.adapters`).
A model must be hashable: analyses are jitted with it static.

An analysis that needs more than the four functions says so with `require`,
which refuses a model without the capability in one line naming what is
missing, before anything is traced. A fast path that assumes a property of
the model runs only where the model declares it. What the pieces promise
(α a distribution over the mask, the output's shape, each declared
capability and fast path) is checked on the first real batch an analysis
reads (`attn_jax.analysis.contract`), which refuses what does not hold with
`ContractError`.
"""

import functools
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from attn_jax.core.errors import AttnJaxError
from attn_jax.models import masks

# name -> what a model that declares it promises (and who uses it).
CAPABILITIES = {
    'imposes_attention':
        'decode(params, states, α) is the model\'s output with any α on the simplex over the mask '
        'imposed, not only its own (permutation, adversarial attention, S&S\'s erasure, Meister\'s D_ŷ(I))',
    'array_states':
        'states is one [B, L, H] array whose row t is item t\'s state (Meister\'s g_ŷ(I), S&S\'s '
        'erasure of a HAN\'s sentences)',
    'pooled_decode':
        'states is one [B, L, H] array and decode reads it only through the context Σ_t α_t h_t, so '
        'decode(h, α) == decode(c[:, None, :], 1) (S&S\'s erase-until-flip from prefix sums, '
        'leave-one-out\'s window path)',
    'scores':
        'score(params, states) -> [B, L] with s_t a function of item t\'s state alone, and '
        'project(scores, mask) -> α, with attend == project(score(h), mask) (Meister\'s D_ŷ(I), '
        'adversaries through the model\'s own projection, leave-one-out\'s window path)',
    'deletion_states':
        'encode_deletions(params, e [L, D], length) -> [L − 2, L, H], the states of a document\'s '
        'one-word deletions, equal to encoding the shortened rows (leave-one-out\'s fast path; '
        'states as encode gives them, e.g. a QA model\'s passage and query, with the variants first)',
    'replacement_states':
        'encode_replacements(params, e [L, D], length) -> [L − 2, L, H], the states with each word '
        'replaced by PAD (leave-one-out by replacement, fast path)',
    'variant_windows':
        'variant_windows(params, e [L, D], mode) -> (states, positions, radius): a one-word variant '
        'changes only the states within a fixed radius (leave-one-out\'s window path)',
    'layer_states':
        'encode_layers(params, e, lengths) -> [K, B, L, H], every encoder layer\'s states, [-1] '
        'the states attention pools (Meister\'s g_{h_p}(x))',
    'hierarchical':
        'tokens are [B, S, W] documents of sentences, lengths [B, S], and the items are the '
        'sentences (S&S\'s HAN)',
    'heads':
        'attend returns [B, heads, L], one α per attention head, and decode takes the same '
        '(select one with attn_jax.models.heads before an analysis)',
    'layer_attention':
        'layer_attention(params, states) -> [K, B, heads, L, L], every self-attention layer\'s '
        'weights (attention rollout, attn_jax.models.heads.rollout)',
}


class InterfaceError(AttnJaxError, ValueError):
  """A model lacks what an analysis needs, or a fast path it declared does not hold for it.

  Both an `AttnJaxError` (a problem with the input, not with attn-jax) and a
  `ValueError`. `require` raises it before anything is traced.

  Args:
    *args: the message, as for any exception: one line naming the problem
      (what is missing) and the fix.
  """


class ContractError(InterfaceError):
  """A model's pieces do not do what the interface or a declared capability promises.

  Found on a real batch by `attn_jax.analysis.contract` the first time an
  analysis reads the model. An `InterfaceError` (so an `AttnJaxError` and a
  `ValueError`).

  Args:
    *args: the message: one line naming what differs, by how much, and the fix.
  """


class Forward(NamedTuple):
  """Everything one forward pass computes; all [B, ...].

  Attributes:
    logits: [B] (two classes) or [B, C].
    alpha: α [B, L], the attention under test ([B, heads, L] from a model
      that declares 'heads').
    scores: [B, L], the scores before projection (None without 'scores').
    hidden: the states: [B, L, H], or any pytree of [B, ...].
    embedded: [B, L, D], the embeddings the pass started from.
    mask: [B, L] bool, the attention mask.
    probs: (property) P(y = 1) [B] of a binary model; the class
      distribution [B, C] otherwise (`output_probs`).
  """
  logits: jnp.ndarray    # [B] (two classes) or [B, C]
  alpha: jnp.ndarray     # [B, L]
  scores: Any            # [B, L] before projection (None without 'scores')
  hidden: Any            # the states: [B, L, H], or any pytree of [B, ...]
  embedded: jnp.ndarray  # [B, L, D]
  mask: jnp.ndarray      # [B, L] bool, the attention mask

  @property
  def probs(self) -> jnp.ndarray:
    """P(y = 1) [B] of a binary model; the class distribution [B, C] otherwise."""
    return output_probs(self.logits)


def output_probs(logits: jnp.ndarray) -> jnp.ndarray:
  """One forward pass's logits -> probabilities, same shape.

  Which one is read off the rank of `logits`, not off a model.

  Args:
    logits: [B] (binary) or [B, C].

  Returns:
    The sigmoid of [B] logits (P(y = 1) [B]), or the softmax over the last
    axis of [B, C] logits (the class distribution [B, C]).
  """
  return jax.nn.sigmoid(logits) if logits.ndim == 1 else jax.nn.softmax(logits, axis=-1)


def floating_logits(model, logits, where: str = 'decode'):
  """`logits`, refused in one line where they are not floating (ints, bools).

  Every measure reads ŷ = σ(z) or a softmax of the logits, and a gradient
  of them; integer logits (class ids, rounded scores) fail deep inside one.
  Every subclass's own `decode` is wrapped in this check.

  Args:
    model: the model whose `where` gave them, for the message.
    logits: what `decode` returned: [B] or [B, C].
    where: the piece that gave them, for the message.

  Returns:
    `logits`, unchanged.

  Raises:
    InterfaceError: naming the dtype and the fix.
  """
  dtype = getattr(logits, 'dtype', None)
  if dtype is not None and not jnp.issubdtype(dtype, jnp.floating):
    raise InterfaceError(f'{where} of {type(model).__name__} returns {dtype} logits; the analyses read '
                         'ŷ = σ(z) (or a softmax) and its gradient, so decode must return floating logits: '
                         'return the real-valued scores (e.g. logits.astype(jnp.float32)), not class ids '
                         'or rounded values')
  return logits


def _checking_decode(decode):
  """`decode` whose logits pass `floating_logits`."""
  @functools.wraps(decode)
  def checked(self, *args, **kwargs):
    return floating_logits(self, decode(self, *args, **kwargs))
  checked.checks_logits = True
  return checked


class AttentionModel:
  """The interface every analysis takes: a model as pure functions of a params pytree.

  See the module docstring for the batch layout and what α must be.
  Subclasses define `embed`, `encode`, `attend`, `decode`, `num_classes`
  and `capabilities`, and the methods of the capabilities they declare
  (`CAPABILITIES`). The rest (`attention_mask`, `forward`,
  `probabilities`, ...) derives from those. A model must be hashable:
  analyses are jitted with it static. The project's own `Model` subclasses
  it; `attn_jax.models.adapters` builds one from functions or a Flax module.

  Attributes:
    num_classes: 2 (the default): one logit [B] and a sigmoid; C > 2:
      logits [B, C] and a softmax over C.
    capabilities: frozenset of names from `CAPABILITIES` that hold for the
      model; by default none.
    embeds: whether `embed` gives float embeddings [B, L, D] the gradient
      analyses can differentiate at; True but for a model given as a
      forward function of token ids alone (`adapters.from_forward`).
    hierarchical: (property) whether it declares 'hierarchical': reads
      documents × sentences × words (S&S's HAN).
  """

  num_classes: int = 2
  capabilities: frozenset = frozenset()
  embeds: bool = True  # `embed` gives float embeddings the gradient analyses differentiate at

  def __init_subclass__(cls, **kwargs):
    """Wraps a subclass's own `decode` so that logits that are not floating
    are refused in one line (`floating_logits`) where an analysis first reads
    them, under `jax.jit` too (a dtype is known while tracing)."""
    super().__init_subclass__(**kwargs)
    own = cls.__dict__.get('decode')
    if callable(own) and not getattr(own, 'checks_logits', False):
      cls.decode = _checking_decode(own)

  def embed(self, params, tokens: jnp.ndarray) -> jnp.ndarray:
    """Embeds the tokens; the gradient analyses differentiate with respect to these.

    Args:
      params: the model's params pytree.
      tokens: [B, L] int32 token ids in the `pad_texts` layout ([B, S, W]
        for a 'hierarchical' model).

    Returns:
      Embeddings [B, L, D].
    """
    raise NotImplementedError

  def encode(self, params, embedded: jnp.ndarray, lengths: jnp.ndarray) -> Any:
    """Encodes the embeddings into the states `attend` and `decode` read.

    Args:
      params: the model's params pytree.
      embedded: [B, L, D], from `embed`.
      lengths: [B] int32, each row's length with SOS and EOS.

    Returns:
      The states: any pytree of [B, ...] arrays.
    """
    raise NotImplementedError

  def attend(self, params, states: Any, mask: jnp.ndarray) -> jnp.ndarray:
    """The attention under test.

    Args:
      params: the model's params pytree.
      states: from `encode`.
      mask: [B, L] bool, the items α weighs (`attention_mask`).

    Returns:
      α [B, L]: 0 off the mask, summing to 1 over it ([B, heads, L] for a
      model that declares 'heads').
    """
    raise NotImplementedError

  def decode(self, params, states: Any, alpha: jnp.ndarray) -> jnp.ndarray:
    """The output from the states and α, which is an input so another α can be imposed.

    Args:
      params: the model's params pytree.
      states: from `encode`.
      alpha: α [B, L], the model's own or an imposed one (only a model that
        declares 'imposes_attention' promises the latter is meaningful).

    Returns:
      Logits [B] (two classes) or [B, C].
    """
    raise NotImplementedError

  def attention_mask(self, tokens: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
    """The items attention weighs.

    Args:
      tokens: [B, L] int32 token ids.
      lengths: [B] int32, each row's length with SOS and EOS.

    Returns:
      [B, L] bool; by default the words of the `[SOS] words [EOS]` layout
      (positions 1 .. length − 2), PAD excluded.
    """
    return masks.attention_mask(tokens, lengths)

  def has(self, capability: str) -> bool:
    """Whether the model declares `capability`.

    Args:
      capability: a name from `CAPABILITIES`.

    Returns:
      True if it is in `capabilities`.
    """
    return capability in self.capabilities

  @property
  def hierarchical(self) -> bool:
    """Whether it reads documents × sentences × words (S&S's HAN)."""
    return self.has('hierarchical')

  def probabilities(self, logits: jnp.ndarray) -> jnp.ndarray:
    """The output probabilities: what J&W's analyses compare.

    Args:
      logits: [..., B] (binary) or [..., B, C].

    Returns:
      ŷ = σ(z), same shape, or the softmax over the C classes.
    """
    return jax.nn.sigmoid(logits) if self.num_classes <= 2 else jax.nn.softmax(logits, axis=-1)

  def distribution(self, logits: jnp.ndarray) -> jnp.ndarray:
    """The output distribution over the classes (S&S's p, §2.1).

    Args:
      logits: [..., B] (binary) or [..., B, C].

    Returns:
      [..., B, C]; [1 − ŷ, ŷ] for a binary model, the softmax otherwise.
    """
    if self.num_classes > 2:
      return jax.nn.softmax(logits, axis=-1)
    p = jax.nn.sigmoid(logits)
    return jnp.stack([1.0 - p, p], axis=-1)

  def log_distribution(self, logits: jnp.ndarray) -> jnp.ndarray:
    """`distribution` in log space.

    Args:
      logits: [..., B] (binary) or [..., B, C].

    Returns:
      [..., B, C]: [log(1 − ŷ), log ŷ] from a binary logit without
      cancellation; the log-softmax otherwise.
    """
    if self.num_classes > 2:
      return jax.nn.log_softmax(logits, axis=-1)
    return jnp.stack([jax.nn.log_sigmoid(-logits), jax.nn.log_sigmoid(logits)], axis=-1)

  def scores_of(self, params, states) -> Optional[jnp.ndarray]:
    """The scores before projection where the model declares 'scores', else None.

    Args:
      params: the model's params pytree.
      states: from `encode`.

    Returns:
      `score(params, states)` [B, L] with 'scores'; None without.
    """
    return self.score(params, states) if self.has('scores') else None  # pytype: disable=attribute-error

  def forward_embedded(self, params, embedded: jnp.ndarray, lengths: jnp.ndarray,
                       mask: jnp.ndarray) -> Forward:
    """The pass from given embeddings (for gradients with respect to them).

    Args:
      params: the model's params pytree.
      embedded: [B, L, D], e.g. from `embed`.
      lengths: [B] int32, each row's length with SOS and EOS.
      mask: [B, L] bool, the items α weighs (`attention_mask`).

    Returns:
      `Forward`: the logits of `decode` with the model's own α, α, the
      scores (`scores_of`), the states, `embedded` and `mask`.
    """
    hidden = self.encode(params, embedded, lengths)
    alpha = self.attend(params, hidden, mask)
    return Forward(self.decode(params, hidden, alpha), alpha, self.scores_of(params, hidden), hidden,
                   embedded, mask)

  def forward(self, params, tokens: jnp.ndarray, lengths: jnp.ndarray) -> Forward:
    """One forward pass from the tokens.

    Args:
      params: the model's params pytree.
      tokens: [B, L] int32 token ids in the `pad_texts` layout.
      lengths: [B] int32, each row's length with SOS and EOS.

    Returns:
      `Forward` (`forward_embedded` from `embed(params, tokens)` and
      `attention_mask(tokens, lengths)`).
    """
    return self.forward_embedded(params, self.embed(params, tokens), lengths,
                                 self.attention_mask(tokens, lengths))


def describe(model) -> str:
  """The model's class name and its declared capabilities, for messages.

  Args:
    model: any model; its `capabilities` are read where it has them.

  Returns:
    A string such as 'Model (declares imposes_attention, scores)', the
    capabilities sorted, or '... (declares no capabilities)'.
  """
  caps = sorted(getattr(model, 'capabilities', ()) or ())
  return f'{type(model).__name__} (declares {", ".join(caps) if caps else "no capabilities"})'


def require(model, analysis: str, *capabilities: str, binary: bool = False,
            single_attention: bool = True) -> None:
  """Refuses, in one line, a model `analysis` cannot run on.

  Called before anything is traced. Checks, in order: the methods `embed`,
  `encode`, `attend`, `decode` and `attention_mask`; that every declared
  capability is known; one α (with `single_attention`); each capability in
  `capabilities`; two classes (with `binary`).

  Args:
    model: the model handed to the analysis.
    analysis: the analysis's name, for the message.
    *capabilities: names from `CAPABILITIES` the analysis needs.
    binary: the analysis reads ŷ = σ(z) of a two-class model (J&W's).
    single_attention: the analysis needs one α [B, L] (a multi-head model
      must have one head, their mean or the rollout selected first).

  Returns:
    None, where the model has all the analysis needs.

  Raises:
    InterfaceError: naming the first thing missing and what to do: a
      method of the interface, a declared capability that is unknown, one α
      (the model declares 'heads' and `single_attention` is set), a
      capability the analysis needs (with the model's own reason where its
      `why_not(capability)` gives one, e.g. a head view's), or two classes
      (`binary`).
  """
  missing_methods = [m for m in ('embed', 'encode', 'attend', 'decode', 'attention_mask')
                     if not callable(getattr(model, m, None))]
  if missing_methods:
    raise InterfaceError(f'{analysis} takes a model with embed, encode, attend, decode and attention_mask '
                         f'(attn_jax.models.interface); {type(model).__name__} has no '
                         f'{", ".join(missing_methods)}: wrap it with attn_jax.models.adapters')
  declared = getattr(model, 'capabilities', frozenset())
  unknown = sorted(set(declared) - set(CAPABILITIES))
  if unknown:
    raise InterfaceError(f'{type(model).__name__} declares unknown capabilities {unknown}; the known ones: '
                         f'{", ".join(CAPABILITIES)}')
  if single_attention and 'heads' in declared:
    raise InterfaceError(f'{analysis} reads one α [B, L]; {type(model).__name__} attends with several heads: '
                         'pick one with attn_jax.models.heads.head(model, k), .mean_over_heads(model) or '
                         '.rollout(model)')
  for capability in capabilities:
    if capability not in declared:
      why = model.why_not(capability) if callable(getattr(model, 'why_not', None)) else None
      raise InterfaceError(f'{analysis} needs a model with {capability!r} ({CAPABILITIES[capability]}); '
                           + (why or f'{describe(model)} does not: declare it if it holds, or leave this '
                                     'analysis out'))
  if binary and getattr(model, 'num_classes', 2) != 2:
    raise InterfaceError(f'{analysis} reads ŷ = σ(z) of a two-class model (J&W\'s measures); '
                         f'{type(model).__name__} has {model.num_classes} classes')
