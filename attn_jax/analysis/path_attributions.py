"""Integrated gradients (Sundararajan et al., ICML 2017, "Axiomatic Attribution
for Deep Networks", §3): each word's embedding difference from a baseline
times the gradient averaged along the straight path from the baseline to
the input,

    IG_t = (e_t − e'_t) · (1/m) Σ_k ∂f/∂e_t (e' + a_k (e − e')),   a_k = (k − ½)/m,

the integral approximated by a Riemann sum (their §5) at the midpoints of m =
`steps` intervals, whose error falls as O(1/m²) for a smooth f. The dot
product sums the embedding's dimensions, so a word gets one signed number.
f is the model's own output with α in the graph: ŷ = σ(z) of a two-class
model, the softmax probability of the class predicted at the input with
more classes (`target='logit'`: the logit). The baseline differs from the
input at the words only (SOS, EOS and padding kept), so completeness
(their Proposition 1) reads Σ_words IG_t → f(x) − f(x') as m grows (checked
in tests/analysis/test_integrated_gradients.py). Baselines: 'zero' (zero
embeddings, Sundararajan et al.'s choice for text) or 'pad' (the embedding
of PAD at every word, the analogue of Madsen et al.'s mask token).
"""

from typing import Literal

import jax
import jax.numpy as jnp

from attn_jax.analysis import contract, needs
from attn_jax.analysis.gradients import Target
from attn_jax.analysis.measure import Measure
from attn_jax.core.registry import MEASURES
from attn_jax.data.vocabulary import PAD
from attn_jax.models import masks
from attn_jax.models.interface import AttentionModel

Baseline = Literal['zero', 'pad']


def baseline_embeddings(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray,
                        baseline: Baseline = 'zero') -> tuple[jnp.ndarray, jnp.ndarray]:
  """The input's embeddings and the baseline's: the words replaced, the rest kept.

  Args:
    model: a model that embeds (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    baseline: 'zero' (zero vectors at the words) or 'pad' (PAD's embedding there).

  Returns:
    (embedded [B, L, D], baseline [B, L, D]).
  """
  embedded = model.embed(params, tokens)
  words = masks.word_mask(lengths, tokens.shape[1])
  if baseline == 'zero':
    other = jnp.zeros_like(embedded)
  elif baseline == 'pad':
    other = model.embed(params, jnp.where(words, PAD, tokens).astype(tokens.dtype))
  else:
    raise ValueError(f"baseline must be 'zero' or 'pad', not {baseline!r}")
  return embedded, jnp.where(words[..., None], other, embedded)


def output_of_embeddings(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray,
                         target: Target = 'prob'):
  """f: embeddings [B, L, D] -> [B], the output integrated gradients attributes.

  Args:
    model: a model that embeds (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids (the class is chosen at their embeddings).
    lengths: [B] int, document lengths with SOS and EOS.
    target: 'prob' (σ(z); the predicted class's softmax probability) or 'logit'.

  Returns:
    A function of embeddings [B, L, D] giving [B]: with more classes, the
    class predicted at `tokens`' own embeddings, fixed along the path.
  """
  mask = model.attention_mask(tokens, lengths)
  logits_at = getattr(model, 'logits_at', None)  # a forward whose later layers read the ids too

  def logits(e):
    return logits_at(params, tokens, e, lengths) if logits_at is not None else (
        model.forward_embedded(params, e, lengths, mask).logits)

  chosen = None
  if model.num_classes > 2:
    chosen = jax.lax.stop_gradient(jnp.argmax(logits(model.embed(params, tokens)), axis=-1))

  def f(e):
    z = logits(e)
    if z.ndim == 1:
      return jax.nn.sigmoid(z) if target == 'prob' else z
    values = jax.nn.softmax(z, axis=-1) if target == 'prob' else z
    return jnp.take_along_axis(values, chosen[:, None], axis=-1)[:, 0]

  return f


def integrated_gradients(model: AttentionModel, params, tokens: jnp.ndarray, lengths: jnp.ndarray, *,
                         steps: int = 50, baseline: Baseline = 'zero', target: Target = 'prob',
                         signed: bool = False) -> jnp.ndarray:
  """Integrated gradients [B, L] at the word embeddings, 0 off the words.

  One backward pass of the batch per step (`lax.scan`, so the [B, L, D]
  gradient sum is all that lives across steps).

  Args:
    model: any model in the interface that embeds (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32 token ids.
    lengths: [B] int, document lengths with SOS and EOS.
    steps: m, the points of the midpoint rule along the path.
    baseline: 'zero' or 'pad' (`baseline_embeddings`).
    target: 'prob' or 'logit' (`output_of_embeddings`).
    signed: return the attributions (they sum to ≈ f(x) − f(baseline));
      False (default): their magnitudes, the importance a ranking reads.

  Returns:
    [B, L] attributions or their absolute values, 0 off the words
    (positions 1 .. length − 2).

  Raises:
    ValueError: `steps` < 1 or an unknown `baseline`.
    InterfaceError: the model lacks what the analysis needs
      (`needs.NEEDS['integrated_gradients']`: a model that embeds);
      `ContractError`: its pieces break the interface on this batch.
  """
  if steps < 1:
    raise ValueError(f'steps must be >= 1, not {steps}')
  needs.check(model, 'integrated_gradients')
  contract.check(model, params, tokens, lengths)
  embedded, base = baseline_embeddings(model, params, tokens, lengths, baseline)
  f = output_of_embeddings(model, params, tokens, lengths, target)
  grad = jax.grad(lambda e: jnp.sum(f(e)))
  delta = embedded - base

  def step(total, a):
    return total + grad(base + a * delta), None

  points = (jnp.arange(steps, dtype=embedded.dtype) + 0.5) / steps
  total, _ = jax.lax.scan(step, jnp.zeros_like(embedded), points)
  attribution = jnp.sum(delta * total, axis=-1) / steps
  attribution = jnp.where(masks.word_mask(lengths, tokens.shape[1]), attribution, 0.0)
  return attribution if signed else jnp.abs(attribution)


# Its settings are what every_analysis and a stage use (50 steps: Captum's
# default; `integrated_gradients(..., steps=...)` for others).
# No `stored_as`: the stages of the four papers keep the measures their
# committed results were keyed with.
INTEGRATED_GRADIENTS = MEASURES.register(Measure(
    name='integrated_gradients', label='integrated gradients, zero baseline, 50 steps (Sundararajan et al. 2017)',
    column='integrated gradients', paper=None, section='Sundararajan et al. 2017, §3 (computed as §5)', order=60,
    fn=integrated_gradients, gradient=True, settings={'steps': 50, 'baseline': 'zero'}))
