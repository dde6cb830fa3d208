"""Stage `evidence`: each importance measure scored by how well it ranks the
known evidence (bAbI's supporting facts' words) among the passage's words
(`attn_jax.analysis.evidence_ranking`: average precision, and whether the top word is
evidence), beside a random ranking's exact expected AP.

The measures, over the passage's words with the question fixed:
- `alpha`: the attention under test;
- J&W's gradient (`gradient_mem`: |∂p(ŷ)/∂e_t · e_t|, α detached) and its variants
  of the `gradient` stage: `gradient_logit` (the logit's), `gradient_attached`
  (α in the graph) and `gradient_l2` (Meister et al.'s g_ŷ(x), eq. 4);
- J&W's leave-one-out (`remove_and_run`: Σ|Δ output distribution| deleting the word);
  Meister's D_ŷ(x) is this deletion;
- S&S's rankings (S&S §5.1): the decision gradient ∂d/∂α and α·∂d/∂α.
Meister's g_ŷ(I) and D_ŷ(I) (the `importance` stage) are for binary models
and are not scored.

Beside them, rankings that read no model (`attn_jax.analysis.position_baselines`):
later words first, and a random ranking of word types (the chance of a
model whose measures are functions of the word type, as an Average
encoder's are). The last-statement-first ranking needs the passage's
statement separators, which the encoded split does not carry: the study's
report computes it from the data files (`attn_jax.tables.known_evidence`).

`kept.npz` (`stage_store.KEPT`, copied to results/ by `report --save`) holds
the per-question AP of every measure and baseline, float16 [rows, questions]
with the rows' names: what a paired test across questions reads.
"""

import numpy as np

from attn_jax.analysis import attention_erasure as er, evidence_ranking as ev, measure, statistics
from attn_jax.analysis import position_baselines as baselines
from attn_jax.core.registry import STAGES
from attn_jax.plots import evidence_figures
from attn_jax.stages.stage import Stage

# The rows it scores: α, the registered measures that name the stage
# (`Measure.stored_as['evidence']`: those the `gradient` or `loo` stage
# stores are read from their results; any other is computed here by its own
# function), then S&S's decision gradients. Its results were first keyed
# with the gradient stage's four and leave-one-out.
ATTENTION = 'alpha'
DECISION = ('decision_gradient', 'decision_gradient_x_attention')
EVIDENCE_KEYED = ('gradient', 'gradient_logit', 'gradient_attached', 'gradient_l2', 'loo')
_INPUTS = ('gradient', 'loo')  # the required stages whose results hold a measure's scores


def measures() -> tuple:
  """The names of the rows the stage scores, in order (read from the registry now)."""
  return (ATTENTION, *measure.stored('evidence'), *DECISION)


def _from_inputs() -> dict:
  """{row name: (required stage, its array)}: the measures read from the gradient and loo stages."""
  out = {}
  for name, m in measure.stored('evidence').items():
    stage = next((s for s in _INPUTS if s in m.stored_as), None)
    if stage is not None:
      out[name] = (stage, m.stored_as[stage])
  return out


_PAIRS_PER_CHUNK = 1 << 22  # the [B, L, L] comparisons stay ~4M (bAbI 3's passages reach 1,348 words)


def _decision_gradient_fn(model, from_inputs: tuple):
  def fn(params, tokens, lengths):
    fwd = model.forward(params, tokens, lengths)
    grad = er.decision_gradient(model, params, fwd.hidden, fwd.alpha)
    out = {'decision_gradient': grad, 'decision_gradient_x_attention': grad * fwd.alpha}
    # A measure registered for the stage that no required stage stores.
    out.update(measure.computed('evidence', model, params, tokens, lengths, elsewhere=from_inputs))
    return out
  return fn


def _compute(ctx, batch):
  from_inputs = tuple(_from_inputs())
  fn = ctx.jit('evidence:' + ','.join(measures()), lambda: _decision_gradient_fn(ctx.model, from_inputs))
  return fn(ctx.params, batch.tokens, batch.lengths)


def evidence_mask(evidence: list, width: int) -> np.ndarray:
  """[N, width] bool from each document's evidence positions (SOS is 0)."""
  mask = np.zeros((len(evidence), width), bool)
  for i, positions in enumerate(evidence):
    mask[i, np.asarray(positions, np.int64)] = True
  return mask


def score(measures: dict, evidence: np.ndarray, lengths: np.ndarray) -> dict:
  """{measure: [N, W] scores}, [N, W] evidence, [N] lengths (with SOS/EOS) ->
  {measure: {'ap': [N], 'top_hit': [N]}} (numpy), in chunks of documents."""
  width = evidence.shape[1]
  words = (np.arange(width)[None, :] >= 1) & (np.arange(width)[None, :] <= np.asarray(lengths)[:, None] - 2)
  out = {name: {'ap': [], 'top_hit': []} for name in measures}
  step = max(1, _PAIRS_PER_CHUNK // (width * width))
  for start in range(0, len(lengths), step):
    rows = slice(start, start + step)
    part = ev.scores_by_measure({n: np.asarray(s[rows], np.float32) for n, s in measures.items()},
                                evidence[rows], words[rows])
    for name, values in part.items():
      for k, v in values.items():
        out[name][k].append(np.asarray(v))
  return {n: {k: np.concatenate(v) for k, v in d.items()} for n, d in out.items()}


def _finalize(ctx, arrays, inputs):
  grad = inputs['gradient']
  lengths = grad['lengths']
  width = grad['alpha'].shape[1]
  found = {ATTENTION: grad[ATTENTION], **arrays}
  found.update({name: inputs[stage][array] for name, (stage, array) in _from_inputs().items()
                if array in inputs[stage]})
  # In `measures()` order; a measure the model cannot take is absent.
  rows = {name: found[name] for name in measures() if name in found}
  evidence = evidence_mask(ctx.split.evidence, width)
  scored = score({n: np.asarray(m)[:, :width] for n, m in rows.items()}, evidence, lengths)
  count = evidence[:, 1:].sum(axis=1)
  chance = ev.chance_average_precision(count, np.maximum(np.asarray(lengths) - 2, 0))
  out = {'lengths': lengths, 'evidence_words': count.astype(np.int32), 'chance_ap': chance}
  summary = {'measures': {}, 'chance': {'mean_ap': float(np.nanmean(chance))},
             'evidence_words': {'mean': float(count.mean()), 'mean_fraction_of_words':
                                float(np.mean(count / np.maximum(np.asarray(lengths) - 2, 1)))}}
  for name, values in scored.items():
    out[f'ap_{name}'], out[f'top_hit_{name}'] = values['ap'], values['top_hit']
    ci = statistics.bootstrap_interval(values['ap'][np.isfinite(values['ap'])], seed=ctx.settings.seed)
    summary['measures'][name] = {
        'mean_ap': float(np.nanmean(values['ap'])), 'bootstrap_ci95': [ci['low'], ci['high']],
        'mean_ap_over_chance': float(np.nanmean(values['ap'] - chance)),
        'top_hit': float(np.mean(values['top_hit']))}
  summary['best'] = max(summary['measures'], key=lambda n: summary['measures'][n]['mean_ap'])
  words = baselines.words_mask(np.asarray(lengths), width)
  tokens = np.zeros((len(lengths), width), np.int64)
  for i, sequence in enumerate(ctx.split.sequences):
    tokens[i, :min(len(sequence), width)] = sequence[:width]
  found = baselines.baseline_average_precision(evidence, words, types=tokens, seed=ctx.settings.seed)
  summary['baselines'] = {}
  for name in BASELINES:
    out[f'ap_{name}'] = found[name]
    mean, error = baselines.mean_with_error(found[name], found.get(f'{name}_se'))
    summary['baselines'][name] = {'mean_ap': mean, 'monte_carlo_se': error}
  summary['baselines']['random_word_types']['draws'] = baselines.TYPE_DRAWS
  return out, summary


BASELINES = ('later_words_first', 'random_word_types')


def kept(arrays, summary) -> dict:
  """The per-question AP of every measure and baseline, float16 [rows,
  questions], and the rows' names (`stage_store.KEPT`)."""
  del summary
  names = [n for n in (*measures(), 'chance', *BASELINES) if f'ap_{n}' in arrays or n == 'chance']
  rows = [arrays['chance_ap'] if n == 'chance' else arrays[f'ap_{n}'] for n in names]
  return {'ap': np.asarray(rows, np.float16), 'names': np.asarray(names)}


def _figures(arrays, inputs, summary, directory):
  return evidence_figures.average_precision_boxes(
      {n: arrays[f'ap_{n}'] for n in measures() if f'ap_{n}' in arrays}, arrays['chance_ap'], directory)


EVIDENCE = STAGES.register(Stage(
    name='evidence', paper='evidence', order=100, requires=('gradient', 'loo'),
    compute=_compute, positional=measure.Names('evidence', fixed=DECISION),
    finalize=_finalize, figures=_figures, multi_class=True, needs_evidence=True, kept=kept,
    keyed_measures=EVIDENCE_KEYED))
