"""Meister et al.'s importance measures (2021, §3.1 and App. A).

Importance of the inputs x (the word embeddings e_i) and of the intermediate
representations I (the encoder states h_i that attention pools), each
normalised to sum 1 over the words, and the normalised entropy of such a
distribution:

    g_ŷ(x)      ‖∂ŷ/∂e_i‖₂                            eq. 4   `input_gradient`
    g_{h_p}(x)  ‖∂‖h_p‖₂/∂e_i‖₂, one row per position p   eq. 5   `state_gradient`
    g_ŷ(I)      ‖∂ŷ/∂h_i‖₂                                    `hidden_gradient`
    D_ŷ(x)      |ŷ − ŷ_{−i}|, word i deleted             eq. 6   `normalised_loo`
    D_ŷ(I)      |ŷ − ŷ_{−i}|, h_i out of attention's support   `attention_deletion`
    H̃(p)        −Σ p log p / log n                   footnote 1  `normalised_entropy`

Choices the paper leaves open, with the option that changes
each: ŷ = σ(z), the probability, as J&W; n counts the words only (SOS and EOS
excluded); attention stays in the graph for every gradient
(`detach_attention=False`; with α detached, ∂ŷ/∂h_i = σ'·α_i·θ and τ(α, g_ŷ(I))
would be 1 by construction); "removing" h_i means excluding position i from
the projection's simplex, re-projecting and re-decoding (for softmax this is
S&S's zero-and-renormalise).

A caveat for g_{h_p}(x) on a post-LayerNorm Transformer: with scale 1 and
bias 0 (its initialisation) LayerNorm's output has norm √H whatever its
input, so ‖h_p‖ is constant and its gradient is rounding noise; only the
trained scale and bias make it depend on the input (docs/meister.md).

All take a model (`attn_jax.models.interface`), params and a batch (tokens [B, L] int32, lengths [B]
with SOS and EOS) and are jittable with `model` and the keyword options
static. [B, L] results are 0 off the words (positions 1 .. length − 2).
"""

import jax
import jax.numpy as jnp

from attn_jax.analysis import contract, needs
from attn_jax.analysis.gradients import embedding_gradient, reduce_gradient
from attn_jax.analysis.measure import Measure
from attn_jax.core.registry import MEASURES
from attn_jax.models import masks
from attn_jax.models.interface import AttentionModel


def normalise(scores: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
  """[..., B, L] non-negative scores -> each row over the words divided by its sum.

  Args:
    scores: [..., B, L] non-negative scores.
    lengths: [B] int, document lengths with SOS and EOS.

  Returns:
    [..., B, L] each row summing to 1 over the words (positions
    1 .. length − 2); 0 off the words; a row that is 0 on every word stays 0.
  """
  words = jnp.broadcast_to(masks.word_mask(lengths, scores.shape[-1]), scores.shape)
  scores = jnp.where(words, scores, 0.0)
  total = jnp.sum(scores, axis=-1, keepdims=True)
  return jnp.where(total > 0, scores / jnp.where(total > 0, total, 1.0), 0.0)


def normalised_entropy(p: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
  """[..., B, L] distributions over the words -> [..., B] normalised entropy.

  H̃(p) = −Σ p log p / log n (Meister et al. footnote 1; 1 = uniform, 0 = one
  word), 0·log 0 = 0, n the number of words (SOS and EOS excluded).

  Args:
    p: [..., B, L] distributions over the words; values off the words are ignored.
    lengths: [B] int, document lengths with SOS and EOS.

  Returns:
    [..., B] H̃(p); NaN where a document has fewer than 2 words or p is 0 on
    every word.
  """
  words = jnp.broadcast_to(masks.word_mask(lengths, p.shape[-1]), p.shape)
  positive = words & (p > 0)
  plogp = jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0)
  n = jnp.broadcast_to((lengths - 2).astype(p.dtype), p.shape[:-1])
  total = jnp.sum(jnp.where(words, p, 0.0), axis=-1)
  ok = (n >= 2) & (total > 0)
  return jnp.where(ok, -jnp.sum(plogp, axis=-1) / jnp.log(jnp.where(ok, n, 2.0)), jnp.nan)


def input_gradient(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                   detach_attention: bool = False) -> jnp.ndarray:
  """g_ŷ(x) [B, L]: ‖∂ŷ/∂e_i‖₂ normalised over the words (Meister et al. eq. 4).

  ŷ = σ(z); the gradient at the word embeddings (`embedding_gradient`).

  Args:
    model: a two-class model (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    detach_attention: treat α as a constant; False (default): α stays in the graph.

  Returns:
    [B, L] each document's scores summing to 1 over the words, 0 off them.

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['input_gradient']`: two classes; with
      `detach_attention=True` also 'imposes_attention');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  needs.check(model, 'input_gradient')
  grad, embedded = embedding_gradient(model, params, tokens, lengths, target='prob',
                                      detach_attention=detach_attention)
  return normalise(reduce_gradient(grad, embedded, lengths, 'l2'), lengths)


def _l2(x: jnp.ndarray) -> jnp.ndarray:
  return jnp.sqrt(jnp.sum(x * x, axis=-1))


def hidden_gradient(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                    detach_attention: bool = False) -> jnp.ndarray:
  """g_ŷ(I) [B, L]: ‖∂ŷ/∂h_i‖₂ normalised over the words, h the encoder output.

  ŷ = σ(z). With `detach_attention=False` (default) α = φ(score(h)) is
  differentiated too, so h_i counts both as a value pooled and as what sets
  the weights.

  Args:
    model: a two-class model with array states (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    detach_attention: treat α as a constant (then ∂ŷ/∂h_i = σ'·α_i·θ).

  Returns:
    [B, L] each document's scores summing to 1 over the words, 0 off them.

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['hidden_gradient']`: 'array_states', two classes);
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  needs.check(model, 'hidden_gradient')
  contract.check(model, params, tokens, lengths)
  mask = model.attention_mask(tokens, lengths)
  hidden = model.encode(params, model.embed(params, tokens), lengths)

  def total(h):
    alpha = model.attend(params, h, mask)
    if detach_attention:
      alpha = jax.lax.stop_gradient(alpha)
    return jnp.sum(jax.nn.sigmoid(model.decode(params, h, alpha)))

  return normalise(_l2(jax.grad(total)(hidden)), lengths)


def attention_deletion(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
  """D_ŷ(I) [B, L]: |ŷ − ŷ_{−i}| normalised over the words.

  ŷ = σ(z); ŷ_{−i} decodes the same states with position i excluded from the
  projection's support (α re-projected from the same scores; for softmax
  S&S's zero-and-renormalise). No re-encoding: all L variants of a batch are
  one [B, L, L] projection and L decodes.

  Args:
    model: a two-class model with 'scores' and 'imposes_attention'
      (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.

  Returns:
    [B, L] each document's scores summing to 1 over the words, 0 off them.

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['attention_deletion']`: 'scores', 'imposes_attention',
      two classes);
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  needs.check(model, 'attention_deletion')
  contract.check(model, params, tokens, lengths)
  fwd = model.forward(params, tokens, lengths)
  width = tokens.shape[1]
  keep = fwd.mask[:, None, :] & ~jnp.eye(width, dtype=bool)[None]  # [B, i, L]
  scores = jnp.broadcast_to(fwd.scores[:, None, :], keep.shape)
  alphas = model.project(scores, keep)
  without = jax.vmap(lambda a: model.decode(params, fwd.hidden, a), in_axes=1, out_axes=1)(alphas)
  change = jnp.abs(jax.nn.sigmoid(without) - jax.nn.sigmoid(fwd.logits)[:, None])
  return normalise(change, lengths)


def normalised_loo(loo_importance: jnp.ndarray, lengths: jnp.ndarray) -> jnp.ndarray:
  """D_ŷ(x) [B, L] (Meister et al. eq. 6) from J&W's deletion leave-one-out |ŷ − ŷ_{−i}|.

  Args:
    loo_importance: [B, L] |ŷ − ŷ_{−i}|
      (`attn_jax.analysis.loo.leave_one_out(...).importance`).
    lengths: [B] int, document lengths with SOS and EOS.

  Returns:
    [B, L] each document's scores summing to 1 over the words, 0 off them
    (`normalise`).
  """
  return normalise(loo_importance, lengths)


def _layer_states(model: AttentionModel, params, embedded, lengths, layer: int) -> jnp.ndarray:
  return model.encode_layers(params, embedded, lengths)[layer]


def _state_rows(model: AttentionModel, params, tokens, lengths, layer: int, chunk: int, reduce):
  """Applies `reduce` ([C, B, L] normalised rows p of g_{h_p}(x) -> [C, B, ...])
  chunk by chunk over the positions p; returns [B, L, ...] (row p at axis 1)."""
  needs.check(model, 'state_gradient')
  contract.check(model, params, tokens, lengths)
  embedded = model.embed(params, tokens)
  width = tokens.shape[1]

  def norms(e):
    h = _layer_states(model, params, e, lengths, layer)
    squared = jnp.sum(h * h, axis=-1)
    # ‖0‖ has no derivative: padding rows (and any zero state) get norm 0 with gradient 0.
    return jnp.where(squared > 0, jnp.sqrt(jnp.where(squared > 0, squared, 1.0)), 0.0)

  _, pull = jax.vjp(norms, embedded)
  chunks = -(-width // chunk)
  positions = jnp.arange(chunks * chunk).reshape(chunks, chunk)

  def one_chunk(ps):
    cotangents = jnp.broadcast_to(jax.nn.one_hot(ps, width, dtype=embedded.dtype)[:, None, :],
                                  (chunk,) + embedded.shape[:2])
    (grads,) = jax.vmap(pull)(cotangents)          # [C, B, L, D]: ∂‖h_p‖/∂e_i per p of the chunk
    return reduce(normalise(_l2(grads), lengths))  # rows p normalised over the words i

  out = jax.lax.map(one_chunk, positions)           # [chunks, C, B, ...]
  out = out.reshape((chunks * chunk,) + out.shape[2:])[:width]
  return jnp.moveaxis(out, 0, 1)


def state_gradient(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                   layer: int = -1, chunk: int = 16) -> jnp.ndarray:
  """g_{h_p}(x) [B, L(p), L(i)] (Meister et al. eq. 5): ‖∂‖h_p‖₂/∂e_i‖₂ per position p.

  h = `model.encode_layers(...)[layer]` (−1: the encoder output attention
  pools). One backward pass per position p (documents of a batch together:
  they are independent), `chunk` positions at a time, so the [L, B, L, D]
  Jacobian never exists whole. Meister et al.'s App. A per-dimension variant
  is not computed (they report it nearly identical). A zero state (padding)
  has norm 0 with gradient 0.

  Args:
    model: a model with 'layer_states' (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    layer: which of `model.encode_layers`' outputs is h (−1: the encoder output attention pools).
    chunk: positions p differentiated at a time.

  Returns:
    [B, L(p), L(i)]: row p is ‖∂‖h_p‖₂/∂e_i‖₂ normalised over the words i;
    rows p off the words are 0.

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['state_gradient']`: 'layer_states');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  rows = _state_rows(model, params, tokens, lengths, layer, chunk, lambda r: r)
  words = masks.word_mask(lengths, tokens.shape[1])
  return jnp.where(words[:, :, None], rows, 0.0)


def state_gradient_entropy(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                           layer: int = -1, chunk: int = 16) -> jnp.ndarray:
  """H̃(g_{h_p}(x)) [B, L]: the normalised entropy of each row p of `state_gradient`.

  Meister et al. Table 1 (`normalised_entropy` of each row); only [C, B, L]
  rows are alive at a time (C = `chunk`).

  Args:
    model: a model with 'layer_states' (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    layer: which of `model.encode_layers`' outputs is h (−1: the encoder output attention pools).
    chunk: positions p differentiated at a time.

  Returns:
    [B, L] the entropy of row p at position p; NaN off the words (and where
    `normalised_entropy` gives NaN).

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['state_gradient']`: 'layer_states');
      `ContractError` (one): its pieces break the interface on this batch
      (`contract`).
  """
  entropy = _state_rows(model, params, tokens, lengths, layer, chunk,
                        lambda r: normalised_entropy(r, lengths))
  return jnp.where(masks.word_mask(lengths, tokens.shape[1]), entropy, jnp.nan)


# Meister et al.'s measures of the inputs and of the states (Table 6's columns).
# D_ŷ(x) is J&W's leave-one-out normalised (`loo.LEAVE_ONE_OUT`, stored by the
# `importance` stage as 'd_y_x'). g_ŷ(x) is also the `gradient` stage's
# unnormalised 'gradient_l2' (the same ranking), for any number of classes.
INPUT_GRADIENT = MEASURES.register(Measure(
    name='input_gradient', label='Meister eq. 4 g_ŷ(x)', column='g_ŷ(x)', paper='meister',
    section='§3.1 eq. 4', order=16, fn=input_gradient, multi_class=False, gradient=True,
    embedding_gradient=('prob', False, 'l2'),
    stored_as={'gradient': 'gradient_l2', 'importance': 'g_y_x', 'evidence': 'gradient_l2'},
    columns={'gradient_l2': 'Meister g(x)'}))
HIDDEN_GRADIENT = MEASURES.register(Measure(
    name='hidden_gradient', label='Meister g_ŷ(I)', column='g_ŷ(I)', paper='meister', section='§3.1',
    order=30, fn=hidden_gradient, capabilities=('array_states',), multi_class=False,
    stored_as={'importance': 'g_y_i'}))
ATTENTION_DELETION = MEASURES.register(Measure(
    name='attention_deletion', label='Meister D_ŷ(I)', column='D_ŷ(I)', paper='meister', section='§3.1',
    order=40, fn=attention_deletion, capabilities=('scores', 'imposes_attention'), multi_class=False,
    stored_as={'importance': 'd_y_i'}))
