"""Every analysis a model has what it needs for, on one batch, in one call.

    results, refused = every_analysis(model, params, tokens, lengths, jax.random.PRNGKey(0))

`results` maps each analysis of `needs.NEEDS` that runs on the model — every
registered importance measure (`attn_jax.core.registry.MEASURES`) and the
other analyses — to its output (each jitted on its own); `refused` maps the others to the one line
that says what the model lacks. Before anything is jitted the model's
pieces are checked on the batch (`contract.check`) and so is every fast
path an analysis will take (leave-one-out's, erase-until-flip's pooled
prefixes), once per model: a model that breaks the interface is refused
(`ContractError`), not run. For a quick look at a model of one's own; the
analysis stages of `run.py` are the resumable, keyed way over a split.
"""

import jax
import jax.numpy as jnp

from attn_jax.analysis import attention_erasure as er, contract, needs
from attn_jax.analysis.adversarial_search import adversarial_attention, max_jsd_within
from attn_jax.analysis.attention_erasure import decision_gradient, erase_until_flip, ranking, single_weight_erasure
from attn_jax.analysis.importance_measures import state_gradient
from attn_jax.analysis.attention_permutation import permutation_test
from attn_jax.analysis.eraser_metrics import erasure_metrics, random_scores
from attn_jax.core.registry import MEASURES


def _calls(model, adversary_steps: int, permutations: int) -> dict:
  """name -> f(params, tokens, lengths, keys), each an analysis of NEEDS: every
  registered importance measure (`MEASURES`, at its default settings), then the others."""
  def on_forward(fn):  # an analysis of the states and α one forward pass gives
    return lambda params, tokens, lengths, keys: fn(params, model.forward(params, tokens, lengths),
                                                    lengths, keys)

  def at_settings(measure):  # a registered measure at its default settings
    return lambda params, tokens, lengths, keys: measure.scores(model, params, tokens, lengths)

  return {
      **{m.name: at_settings(m) for m in MEASURES.values()},
      'permutation_test': lambda p, t, l, k: permutation_test(model, p, t, l, k, permutations).median,
      'adversarial_attention': on_forward(lambda p, f, l, k: max_jsd_within(adversarial_attention(
          model, p, f.hidden, f.alpha, f.mask, l, k, steps=adversary_steps))),
      'single_weight_erasure': on_forward(lambda p, f, l, k: single_weight_erasure(
          model, p, f.hidden, f.alpha, f.mask, k)._asdict()),
      'decision_gradient': on_forward(lambda p, f, l, k: decision_gradient(model, p, f.hidden, f.alpha)),
      'erase_until_flip': on_forward(lambda p, f, l, k: erase_until_flip(
          model, p, f.hidden, f.alpha, f.mask, ranking(f.alpha, f.mask))._asdict()),
      'state_gradient': lambda p, t, l, k: state_gradient(model, p, t, l),
      # ERASER's curves of α's ranking beside a random one (rows 0 and 1 of each array)
      'erasure_metrics': lambda p, t, l, k: erasure_metrics(model, p, t, l, jnp.concatenate(
          [model.forward(p, t, l).alpha[None], random_scores(k, l, t.shape[1])]))._asdict(),
  }


def every_analysis(model, params, tokens, lengths, key: jax.Array, *, adversary_steps: int = 500,
                   permutations: int = 100) -> tuple[dict, dict]:
  """Runs each analysis of `needs.NEEDS` that `model` can take.

  Each analysis is jitted on its own; one the model lacks what it needs for
  is not run but refused, in one line (`needs.refusal`).

  Args:
    model: any model in the interface (`attn_jax.models.interface`).
    params: its parameters.
    tokens: [B, L] int32; lengths: [B] (`attn_jax.data.batching.pad_texts`).
    key: the randomness of the permutations, adversaries and erasure's random item.
    adversary_steps, permutations: J&W's 500 and 100 by default.

  Returns:
    (results {name: output as the analysis returns it, `attention`: α [B, L]},
     refused {name: why, in one line}).

  Raises:
    ContractError: the model's pieces, or a fast path it declares, break
      the interface on this batch (`contract`).
  """
  _check(model, params, tokens, lengths)
  keys = jax.random.split(key, tokens.shape[0])
  results = {'attention': jax.jit(lambda p, t, l: model.forward(p, t, l).alpha)(params, tokens, lengths)}
  refused = {}
  for name, call in _calls(model, adversary_steps, permutations).items():
    reason = needs.refusal(model, name)
    if reason is None:
      results[name] = jax.jit(call)(params, tokens, lengths, keys)
    else:
      refused[name] = reason
  return results, refused


def _check(model, params, tokens, lengths) -> None:
  """The contract and the fast paths the analyses will take, before they are jitted (no values inside)."""
  contract.check(model, params, tokens, lengths)
  for measure in MEASURES.values():  # each measure's fast path, where it runs on the model
    if measure.check_fast is not None and needs.refusal(model, measure.name) is None:
      measure.check_fast(model, params, tokens, lengths)
  if needs.refusal(model, 'erase_until_flip') is None and er.resolve_path(model) == 'pooled':
    fwd = model.forward(params, tokens, lengths)
    contract.once(contract.key(model, 'pooled prefixes'),
                  lambda: er.check_fast_path(model, params, fwd.hidden, fwd.alpha, fwd.mask))
