"""Every analysis a model has what it needs for, on one batch, in one call.

    results, refused = every_analysis(model, params, tokens, lengths, jax.random.PRNGKey(0))

`results` maps each analysis of `needs.NEEDS` that runs on the model to its
output (each jitted on its own); `refused` maps the others to the one line
that says what the model lacks. Before anything is jitted the model's
pieces are checked on the batch (`contract.check`) and so is every fast
path an analysis will take (leave-one-out's, erase-until-flip's pooled
prefixes), once per model: a model that breaks the interface is refused
(`ContractError`), not run. For a quick look at a model of one's own; the
analysis stages of `run.py` are the resumable, keyed way over a split.
"""

import jax

from attn_jax.analysis import attention_erasure as er, contract, loo, needs
from attn_jax.analysis.adversarial_search import adversarial_attention, max_jsd_within
from attn_jax.analysis.attention_erasure import decision_gradient, erase_until_flip, ranking, single_weight_erasure
from attn_jax.analysis.gradients import gradient_importance
from attn_jax.analysis.importance_measures import attention_deletion, hidden_gradient, input_gradient, state_gradient
from attn_jax.analysis.loo import leave_one_out
from attn_jax.analysis.attention_permutation import permutation_test


def _calls(model, adversary_steps: int, permutations: int) -> dict:
  """name -> f(params, tokens, lengths, keys), each an analysis of NEEDS."""
  def on_forward(fn):  # an analysis of the states and α one forward pass gives
    return lambda params, tokens, lengths, keys: fn(params, model.forward(params, tokens, lengths),
                                                    lengths, keys)

  return {
      'gradient_importance': lambda p, t, l, k: gradient_importance(model, p, t, l),
      'gradient_importance_all_heads': lambda p, t, l, k: gradient_importance(model, p, t, l,
                                                                              detach_attention='all_heads'),
      'gradient_importance_attached': lambda p, t, l, k: gradient_importance(model, p, t, l,
                                                                             detach_attention=False),
      'leave_one_out': lambda p, t, l, k: leave_one_out(model, p, t, l).importance,
      'permutation_test': lambda p, t, l, k: permutation_test(model, p, t, l, k, permutations).median,
      'adversarial_attention': on_forward(lambda p, f, l, k: max_jsd_within(adversarial_attention(
          model, p, f.hidden, f.alpha, f.mask, l, k, steps=adversary_steps))),
      'single_weight_erasure': on_forward(lambda p, f, l, k: single_weight_erasure(
          model, p, f.hidden, f.alpha, f.mask, k)._asdict()),
      'decision_gradient': on_forward(lambda p, f, l, k: decision_gradient(model, p, f.hidden, f.alpha)),
      'erase_until_flip': on_forward(lambda p, f, l, k: erase_until_flip(
          model, p, f.hidden, f.alpha, f.mask, ranking(f.alpha, f.mask))._asdict()),
      'input_gradient': lambda p, t, l, k: input_gradient(model, p, t, l),
      'hidden_gradient': lambda p, t, l, k: hidden_gradient(model, p, t, l),
      'attention_deletion': lambda p, t, l, k: attention_deletion(model, p, t, l),
      'state_gradient': lambda p, t, l, k: state_gradient(model, p, t, l),
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
  if needs.refusal(model, 'leave_one_out') is None and loo.fast_path(model) != 'exact':
    contract.once(contract.key(model, 'loo fast path', 'delete', True),
                  lambda: loo.check_fast_path(model, params, tokens, lengths))
  if needs.refusal(model, 'erase_until_flip') is None and er.resolve_path(model) == 'pooled':
    fwd = model.forward(params, tokens, lengths)
    contract.once(contract.key(model, 'pooled prefixes'),
                  lambda: er.check_fast_path(model, params, fwd.hidden, fwd.alpha, fwd.mask))
