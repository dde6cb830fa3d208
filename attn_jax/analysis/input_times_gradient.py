"""Gradient × input: e_t · ∂f/∂e_t per word, the attribution Captum, ferret,
inseq and Madsen et al. (2022) call input × gradient (Shrikumar et al. 2016,
"Not Just a Black Box"; Denil et al. 2014 scored sentences by the gradient
times the word embeddings).

f is the model's own output with α in the graph: ŷ = σ(z) of a two-class
model, the predicted class's softmax probability with more classes
(`target='logit'`: z, or the predicted class's logit). The dot product sums
the embedding's dimensions (as J&W's gradient does), so a word gets one
signed number. Its magnitude (the default) is J&W's |∂ŷ/∂e_t · e_t| with α
attached (`gradient_importance(..., detach_attention=False)`, checked in
tests/analysis/test_integrated_gradients.py); `signed=True` gives the
attribution itself: summed over the words, the first-order estimate of
f(x) − f(x') for x' the input with zero vectors at the words (integrated
gradients' zero baseline, `path_attributions`, with one point at the input).
"""

import jax.numpy as jnp

from attn_jax.analysis import needs
from attn_jax.analysis.gradients import Target, embedding_gradient
from attn_jax.analysis.measure import Measure
from attn_jax.core.registry import MEASURES
from attn_jax.models import masks
from attn_jax.models.interface import AttentionModel


def gradient_x_input(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                     target: Target = 'prob', signed: bool = False) -> jnp.ndarray:
  """Gradient × input [B, L]: e_t · ∂f/∂e_t per word, 0 off the words.

  Args:
    model: any model in the interface (`attn_jax.models.interface`) that embeds.
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    target: f is σ(z) ('prob'; with more classes the predicted class's
      probability) or the logit ('logit').
    signed: return the attribution itself; False (default): its magnitude.

  Returns:
    [B, L] attributions (signed) or their absolute values, 0 off the words
    (positions 1 .. length − 2).

  Raises:
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['gradient_x_input']`: a model that embeds);
      `ContractError`: its pieces break the interface on this batch.
  """
  needs.check(model, 'gradient_x_input')
  gradient, embedded = embedding_gradient(model, params, tokens, lengths, target=target,
                                          detach_attention=False)
  attribution = jnp.sum(gradient * embedded, axis=-1)
  attribution = jnp.where(masks.word_mask(lengths, tokens.shape[1]), attribution, 0.0)
  return attribution if signed else jnp.abs(attribution)


# No `stored_as`: the stages of the four papers keep the measures their
# committed results were keyed with; every_analysis runs it.
GRADIENT_X_INPUT = MEASURES.register(Measure(
    name='gradient_x_input',
    label='gradient × input, the magnitude of e_t · ∂ŷ/∂e_t, α attached (Shrikumar et al. 2016)',
    column='gradient × input', paper=None,
    section='Shrikumar et al. 2016; Denil et al. 2014; Madsen et al. 2022 "input times gradient"', order=50,
    fn=gradient_x_input, gradient=True))
