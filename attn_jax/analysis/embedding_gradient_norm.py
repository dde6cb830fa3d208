"""Gradient norm: ‖∂f/∂e_t‖₂ per word, the plain "gradient" importance of
Li et al. (2016, "Visualizing and Understanding Neural Models in NLP") and of
ROAR studies (Madsen et al. 2022's "gradient").

f is the model's own output with α in the graph: ŷ = σ(z) of a two-class
model, the predicted class's softmax probability with more classes
(`target='logit'`: the logit). The norm is over the embedding's dimensions:
Meister et al.'s g_ŷ(x) (eq. 4, `input_gradient`) before it is normalised
over the words, for any number of classes. Madsen et al.'s code takes the
norm of the gradient at the one-hot input instead (E·∂f/∂e_t, a vector over
the vocabulary) and differentiates the gold label's logit: the same ranking
only where EᵀE is a multiple of the identity and the gold label is the
prediction.
"""

import jax.numpy as jnp

from attn_jax.analysis import needs
from attn_jax.analysis.gradients import Target, embedding_gradient
from attn_jax.analysis.measure import Measure
from attn_jax.core.registry import MEASURES
from attn_jax.models import masks
from attn_jax.models.interface import AttentionModel


def gradient_norm(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                  target: Target = 'prob') -> jnp.ndarray:
  """‖∂f/∂e_t‖₂ [B, L] per word, α attached, 0 off the words.

  Args:
    model: any model in the interface (`attn_jax.models.interface`) that embeds.
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    target: f is σ(z) ('prob'; with more classes the predicted class's
      probability) or the logit ('logit').

  Returns:
    [B, L] non-negative scores, 0 off the words (positions 1 .. length − 2).

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['gradient_norm']`: a model that embeds);
      `ContractError`: its pieces break the interface on this batch.
  """
  needs.check(model, 'gradient_norm')
  gradient, _ = embedding_gradient(model, params, tokens, lengths, target=target, detach_attention=False)
  norm = jnp.sqrt(jnp.sum(gradient * gradient, axis=-1))
  return jnp.where(masks.word_mask(lengths, tokens.shape[1]), norm, 0.0)


# No `stored_as`: the stages of the four papers keep the measures their
# committed results were keyed with; every_analysis, ERASER and ROAR run it.
GRADIENT_NORM = MEASURES.register(Measure(
    name='gradient_norm',
    label='gradient norm ‖∂ŷ/∂e_t‖₂, α attached, any number of classes (Li et al. 2016)',
    column='gradient norm', paper=None,
    section='Li et al. 2016; Meister et al. eq. 4 unnormalised; Madsen et al. 2022 "gradient"', order=45,
    fn=gradient_norm, gradient=True))
