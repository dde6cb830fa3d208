"""Gradient feature importance at the embeddings (J&W's `Model.gradient_mem`; Meister et al. eq. 4).

J&W score token t by |∂ŷ/∂e_t · e_t| ("gradient × input"), with ŷ the
sigmoid probability and the attention weights detached, so no gradient
flows through the attention module. For more classes (their QA and NLI
models) ŷ is the predicted class's softmax probability (`Model.gradient_mem`
of their QA code). The variants researchers ask for are
options: the logit instead of the probability, attention not detached, and
the L2 norm of the gradient instead of its dot product with the input.

On a multi-head model seen through a head view (`attn_jax.models.heads`)
"α detached" is that view's α: one head's weights held constant, the other
heads' in the graph. `detach_attention='all_heads'` holds every head's
weights constant (J&W's gradient of the whole model); the two differ.
"""

from typing import Literal, Union

import jax
import jax.numpy as jnp

from attn_jax.analysis import contract, needs
from attn_jax.analysis.measure import Measure
from attn_jax.core.registry import MEASURES
from attn_jax.models import heads, masks
from attn_jax.models.interface import AttentionModel

Target = Literal['prob', 'logit']
Reduction = Literal['dot', 'l2']
Detach = Union[bool, Literal['all_heads']]
_NEED = {True: 'gradient_importance', False: 'gradient_importance_attached',
         'all_heads': 'gradient_importance_all_heads'}


def embedding_gradient(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                       target: Target = 'prob', detach_attention: Detach = True):
  """∂ŷ_b/∂e_{b,t} for every document of a batch in one backward pass.

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32; lengths: [B] (with SOS and EOS).
    target: differentiate σ(z) ('prob', J&W) or the logit z; with more
      classes, the predicted class's softmax probability or its logit.
    detach_attention: True: treat α as a constant (J&W; on a head view,
      that head's weights only); False: differentiate through it;
      'all_heads': a head view's model with every head's weights constant.

  Returns:
    (gradient [B, L, D], embedded [B, L, D]). Documents are independent, so
    the gradient of the batch sum is each document's own gradient.

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['gradient_importance']`: 'imposes_attention', when
      `detach_attention`; 'all_heads': a head view); `ContractError`: its
      pieces break the interface on this batch (`contract.check`).
  """
  # Detaching α imposes it (a constant) on decode; attached, the pass is the model's own.
  if isinstance(detach_attention, str) and detach_attention != 'all_heads':
    raise ValueError(f"detach_attention is True, False or 'all_heads', not {detach_attention!r}")
  detach = detach_attention if isinstance(detach_attention, str) else bool(detach_attention)
  needs.check(model, _NEED[detach])
  contract.check(model, params, tokens, lengths)
  embedded = model.embed(params, tokens)
  mask = model.attention_mask(tokens, lengths)
  base = heads.base_of(model) if detach == 'all_heads' else model
  logits_at = getattr(model, 'logits_at', None)  # a forward whose later layers read the ids too

  def total(e):
    if not detach and logits_at is not None:
      logits = logits_at(params, tokens, e, lengths)
    elif not detach:
      logits = model.forward_embedded(params, e, lengths, mask).logits
    else:
      hidden = base.encode(params, e, lengths)
      logits = base.decode(params, hidden, jax.lax.stop_gradient(base.attend(params, hidden, mask)))
    return jnp.sum(differentiated(logits, target))

  return jax.grad(total)(embedded), embedded


def differentiated(logits: jnp.ndarray, target: Target = 'prob') -> jnp.ndarray:
  """[B] what the gradient is of: σ(z) or z of a binary logit [B]; of logits
  [B, C], the predicted class's softmax probability or logit (the class
  chosen at the point, not differentiated)."""
  if logits.ndim == 1:
    return jax.nn.sigmoid(logits) if target == 'prob' else logits
  values = jax.nn.softmax(logits, axis=-1) if target == 'prob' else logits
  chosen = jax.lax.stop_gradient(jnp.argmax(logits, axis=-1))
  return jnp.take_along_axis(values, chosen[:, None], axis=-1)[:, 0]


def reduce_gradient(gradient: jnp.ndarray, embedded: jnp.ndarray, lengths: jnp.ndarray,
                    reduction: Reduction = 'dot') -> jnp.ndarray:
  """[B, L, D] gradients -> [B, L] scores, 0 off the words.

  'dot': |g_t · e_t| (J&W); 'l2': ‖g_t‖₂ (Meister et al. eq. 4).
  """
  if reduction == 'dot':
    scores = jnp.abs(jnp.sum(gradient * embedded, axis=-1))
  elif reduction == 'l2':
    scores = jnp.sqrt(jnp.sum(gradient * gradient, axis=-1))
  else:
    raise ValueError(f"reduction must be 'dot' or 'l2', not {reduction!r}")
  return jnp.where(masks.word_mask(lengths, gradient.shape[1]), scores, 0.0)


def gradient_importance(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                        target: Target = 'prob', detach_attention: Detach = True,
                        reduction: Reduction = 'dot') -> jnp.ndarray:
  """Per-token gradient importance [B, L], 0 off the words (J&W's `gradient_mem` by default).

  J&W's |∂ŷ/∂e_t · e_t| with ŷ = σ(z) and α detached; the options give the
  variants (the logit, α attached, Meister et al.'s L2 norm, eq. 4). J&W
  normalise each row to sum 1 before use; that changes no rank statistic,
  so the raw scores are returned. Jittable with `model` and the keyword
  options static.

  Args:
    model: the model (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    target: differentiate σ(z) ('prob', J&W) or the logit z ('logit'); with
      more classes, the predicted class's softmax probability or its logit.
    detach_attention: True: treat α as a constant (J&W; on a head view,
      that head's weights only, the others in the graph); False:
      differentiate through it (gradient × input with `reduction='dot'`);
      'all_heads': a head view's model with every head's weights constant.
    reduction: 'dot', |g_t · e_t| (J&W), or 'l2', ‖g_t‖₂ (Meister et al. eq. 4).

  Returns:
    [B, L] raw (unnormalised) scores, 0 off the words (positions 1 .. length − 2).

  Raises:
    ValueError: `reduction` is neither 'dot' nor 'l2'.
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['gradient_importance']`: 'imposes_attention', when
      `detach_attention`; 'all_heads': a head view), or (`ContractError`) its
      pieces break the interface on this batch.
  """
  gradient, embedded = embedding_gradient(model, params, tokens, lengths, target=target,
                                          detach_attention=detach_attention)
  return reduce_gradient(gradient, embedded, lengths, reduction)


def _variant(target: Target, detach: Detach, reduction: Reduction):
  """gradient_importance with these options, as a `Measure.fn`."""
  return lambda model, params, tokens, lengths: gradient_importance(
      model, params, tokens, lengths, target=target, detach_attention=detach, reduction=reduction)


# J&W's gradient and its variants. `embedding_gradient` is what the `gradient`
# stage computes them from (one pass per detach); Meister's g_ŷ(x), the L2
# variant with α attached, is `importance_measures.INPUT_GRADIENT`.
GRADIENT = MEASURES.register(Measure(
    name='gradient_importance', label="J&W gradient, α detached (a head view: that head's only)",
    column='J&W gradient', paper='jw', section='§3 (Model.gradient_mem): |∂ŷ/∂e_t · e_t|', order=10,
    fn=_variant('prob', True, 'dot'), capabilities=('imposes_attention',), gradient=True,
    embedding_gradient=('prob', True, 'dot'), stored_as={'gradient': 'gradient', 'evidence': 'gradient'},
    short='gradient'))
GRADIENT_LOGIT = MEASURES.register(Measure(
    name='gradient_importance_logit', label='gradient of the logit z, α detached (target=\'logit\')',
    column='gradient (logit)', paper='jw', section='§3, of the logit', order=12,
    fn=_variant('logit', True, 'dot'), capabilities=('imposes_attention',), gradient=True,
    embedding_gradient=('logit', True, 'dot'),
    stored_as={'gradient': 'gradient_logit', 'evidence': 'gradient_logit'}))
GRADIENT_ATTACHED = MEASURES.register(Measure(
    name='gradient_importance_attached', label='gradient, α attached (detach_attention=False)',
    column='gradient, α attached', paper='jw', section='§3, α in the graph', order=14,
    fn=_variant('prob', False, 'dot'), gradient=True, embedding_gradient=('prob', False, 'dot'),
    stored_as={'gradient': 'gradient_attached', 'evidence': 'gradient_attached'}))
GRADIENT_ALL_HEADS = MEASURES.register(Measure(
    name='gradient_importance_all_heads',
    label="J&W gradient, every head's α detached (detach_attention='all_heads')",
    column="J&W gradient, all heads detached", paper='jw', section='§3, on a multi-head model', order=15,
    fn=_variant('prob', 'all_heads', 'dot'), capabilities=('imposes_attention',), gradient=True, views=True))
