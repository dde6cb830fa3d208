"""The interface's promises, checked on a model's first real batch, once (`check`).

An analysis reads a model only through its pieces, so a piece that does not
do what `attn_jax.models.interface` states gives a wrong number, not an
error. Every public analysis, `every_analysis`, the analysis stages and
`aj.explain` call `check` (or `check_states`, given the states); it runs
once per (model, batch shape) and refuses in one line that names what
differs, by how much, and the fix (`ContractError`). What it compares:

  output  decode's logits are [B] with num_classes=2 (two columns [B, 2] are
          refused: σ of each is not ŷ; `adapters.one_logit`), [B, C] with C
  alpha   α (and each head's, under a head view) is ≥ 0, 0 off
          `attention_mask` and sums to 1 over it
  own     a head view's decode of its own α is the model's output (the
          other heads are read from attend(states, all-True mask))
  model   decode(encode(embed(x)), attend(…)) equals the model's own output
          where the adapter was given `forward=` (else not compared); a
          forward-only model's forward with its embeddings put back equals
          its forward of the ids
  scores  'scores': attend(h, mask) == project(score(h), mask)
  pooled  'pooled_decode': decode(h, α) == decode(Σ α h as one item, 1)
  layers  'layer_states' with 'array_states': encode_layers(…)[-1] == encode(…)

The fast paths resting on more than one batch's pieces (leave-one-out's
variant states and windows, erase-until-flip's prefix sums) are compared
with their exact paths where they run, on their first batch
(`loo.check_fast_path`, `attention_erasure.check_fast_path`, each `once`).

Inside a trace (an analysis under one's own `jax.jit`) no value can be read,
and the check is skipped: call `check(model, params, tokens, lengths)` once
first. It only reads: no result changes.
"""

import collections
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.models import heads
from attn_jax.models.interface import ContractError

__all__ = ['TOLERANCE', 'check', 'check_states', 'concrete', 'key', 'once', 'verdict']

TOLERANCE = 1e-3  # |Σα − 1|, α off the mask, and logits (absolute, plus as much relative)
_DONE: collections.OrderedDict = collections.OrderedDict()
_LIMIT = 512
_RUNNING: set = set()


def concrete(*trees) -> bool:
  """Whether every array in `trees` has values to read.

  Args:
    *trees: pytrees of arrays (None leaves are skipped).

  Returns:
    False where any leaf is a tracer (inside `jax.jit`, `grad`, `vmap`, ...).
  """
  return not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(trees))


def key(model, *parts) -> Optional[tuple]:
  """What `once` remembers a check by.

  Args:
    model: the model checked (compared by its hash and equality).
    *parts: what else the check depends on (a name, shapes, a mode).

  Returns:
    (model, *parts) where it hashes, else None (then nothing is remembered).
  """
  try:
    hash((model,) + parts)
  except TypeError:
    return None
  return (model,) + parts


def once(what: Optional[tuple], run: Callable[[], None]) -> None:
  """Runs `run` unless `what` passed before (or is running); a refusal is not remembered.

  Args:
    what: the key (`key`); None runs every time.
    run: the check; raises where it refuses.

  Returns:
    None.
  """
  if what is not None and (what in _DONE or what in _RUNNING):
    return
  if what is not None:
    _RUNNING.add(what)
  try:
    run()
  finally:
    _RUNNING.discard(what)
  if what is not None:
    _DONE[what] = True
    while len(_DONE) > _LIMIT:
      _DONE.popitem(last=False)


def _has(model, capability: str) -> bool:
  return capability in (getattr(model, 'capabilities', ()) or ())


def _from_states(model, params, states, mask) -> dict:
  """The arrays the checks compare that follow from the states and the mask."""
  base = heads.base_of(model)
  alpha = model.attend(params, states, mask)
  out = {'mask': mask, 'alpha': alpha,
         'logits': base.decode(params, states, base.attend(params, states, mask))}
  if base is not model:
    out['heads'] = base.attend(params, states, mask)
    if _has(model, 'imposes_attention') and getattr(model, 'kind', None) == 'head':
      out['own'] = model.decode(params, states, alpha)
  if _has(model, 'scores'):
    out['projected'] = model.project(model.score(params, states), mask)
  if _has(model, 'pooled_decode'):
    context = jnp.einsum('bl,blh->bh', alpha, states)
    out['pooled'] = model.decode(params, context[:, None, :], jnp.ones(alpha.shape[:1] + (1,), alpha.dtype))
  return out


def _from_tokens(model, params, tokens, lengths) -> dict:
  fwd = model.forward(params, tokens, lengths)
  out = _from_states(model, params, fwd.hidden, fwd.mask)
  out['forward'] = fwd.logits
  own = getattr(heads.base_of(model), 'forward_fn', None)
  if own is not None:
    out['model'] = own(params, tokens, lengths)
  if getattr(model, 'embeds', False) and callable(getattr(model, 'logits_at', None)):
    out['replaced'] = model.logits_at(params, tokens, model.embed(params, tokens), lengths)
  if _has(model, 'layer_states') and _has(model, 'array_states'):
    out['states'], out['last_layer'] = fwd.hidden, model.encode_layers(params, fwd.embedded, lengths)[-1]
  return out


def _computed(fn, model, *args) -> dict:
  """fn(model, *args) jitted with the model static where it hashes, on the host as float64."""
  run = jax.jit(fn, static_argnums=0) if key(model) is not None else fn
  return jax.tree.map(np.asarray, run(model, *args))


def check(model, params, tokens, lengths, *, tolerance: float = TOLERANCE) -> None:
  """Refuses, in one line, a model whose pieces break the interface on this batch.

  Runs once per (model, batch shape); skipped inside a trace.

  Args:
    model: any model in the interface.
    params: its params.
    tokens: [B, L] int32 ([B, S, W] hierarchical); lengths: [B] ([B, S]).
    tolerance: the largest |Σα − 1|, α off the mask, and logit gap (plus
      as much relative) allowed.

  Returns:
    None where everything holds.

  Raises:
    ContractError: the first promise that does not hold (module docstring).
  """
  if not concrete(params, tokens, lengths):
    return
  once(key(model, 'batch', np.shape(tokens), np.shape(lengths)),
       lambda: _refuse(model, _computed(_from_tokens, model, params, tokens, lengths), tolerance))


def check_states(model, params, states, mask=None, alpha=None, *, tolerance: float = TOLERANCE) -> None:
  """`check` for an analysis given the states: what follows from them and the mask.

  Args:
    model: any model in the interface.
    params: its params.
    states: from `model.encode`.
    mask: [B, L] bool, the items; None: only decode's output shape is
      checked, at `alpha`.
    alpha: [B, L], used only where `mask` is None.
    tolerance: as `check`.

  Returns:
    None where everything holds.

  Raises:
    ContractError: as `check`.
  """
  if not concrete(params, states, mask, alpha):
    return
  shapes = tuple(np.shape(x) for x in jax.tree.leaves(states))
  if mask is None:
    if alpha is not None:
      once(key(model, 'decode', shapes, np.shape(alpha)), lambda: _refuse(model, _computed(
          lambda m, p, s, a: {'logits': m.decode(p, s, a), 'alpha': a}, model, params, states, alpha),
          tolerance))
    return
  once(key(model, 'states', shapes, np.shape(mask)),
       lambda: _refuse(model, _computed(_from_states, model, params, states, mask), tolerance))


def _refuse(model, out: dict, tolerance: float) -> None:
  reason = verdict(model, out, tolerance)
  if reason is not None:
    raise ContractError(reason)


def _gap(a, b, rows) -> tuple[float, float]:
  """(max |a − b|, max of |a − b| − tolerance-relative slack) over the rows with items."""
  a, b = np.asarray(a, np.float64)[rows], np.asarray(b, np.float64)[rows]
  if not a.size:
    return 0.0, 0.0
  diff = np.abs(a - b)
  return float(np.max(diff)), float(np.max(diff - TOLERANCE * np.abs(b)))


def _distribution(alpha, mask, what: str, tol: float) -> Optional[str]:
  """Why `alpha` [B, (heads,) L] is not a distribution over `mask` [B, L] (None: it is)."""
  a = np.asarray(alpha, np.float64)
  m = np.broadcast_to(np.asarray(mask, bool).reshape(mask.shape[:1] + (1,) * (a.ndim - 2) + mask.shape[1:]),
                      a.shape)
  rows = m.any(axis=-1)
  if not rows.any():
    return None
  a, m = a[rows], m[rows]
  if not np.isfinite(a).all():
    return f'{what} holds NaN or inf on rows with items: attend must give finite weights'
  off, low = float(np.max(np.where(m, 0.0, np.abs(a)))), float(np.max(-a))
  sums = np.sum(np.where(m, a, 0.0), axis=-1)
  worst = float(sums.flat[np.argmax(np.abs(sums - 1.0))])
  fix = ('if the model attends other positions too (a CLS token over SOS and EOS, say), declare them with '
         'attention_mask=...; if attend recomputes its weights, project them over the mask it is given')
  if off > tol:
    return f'{what} puts up to {off:.3g} on positions attention_mask excludes (it must be 0 there): {fix}'
  if low > tol:
    return f'{what} has weights down to {-low:.3g} (a distribution is ≥ 0): project scores onto the simplex'
  if abs(worst - 1.0) > tol:
    return f'{what} sums to {worst:.3g} over the items attention_mask declares, not 1: {fix}'
  return None


def _output(model, logits, batch: int, where: str) -> Optional[str]:
  """Why `logits` is not the output `num_classes` says (None: it is)."""
  classes = getattr(model, 'num_classes', 2)
  want = (batch,) if classes == 2 else (batch, classes)
  shape = tuple(np.shape(logits))
  if shape == want:
    return None
  if classes == 2 and shape == (batch, 2):
    return (f'{where} gives two columns [B, 2] while num_classes=2 reads one logit [B] and ŷ = σ(z): every '
            'measure would read σ of each column; wrap what gives them in aj.adapters.one_logit (e.g. '
            'decode=one_logit(\'decode\'), from_forward(one_logit(forward))): z₁ − z₀, whose σ is the '
            'softmax\'s P(class 1)')
  return (f'{where} gives logits of shape {list(shape)} for a batch of {batch}; num_classes={classes} means '
          f'{list(want)}: ' + ('drop the last axis' if shape == (batch, 1) else
                               'set num_classes to the classes the model predicts'))


def verdict(model, out: dict, tolerance: float = TOLERANCE) -> Optional[str]:
  """The first promise `out` (the arrays `check` computed) shows broken, in one line; None: all hold.

  Args:
    model: the model checked.
    out: name -> array, as `check` computes them ('logits', 'mask', 'alpha',
      and where they apply 'heads', 'own', 'forward', 'model', 'replaced',
      'projected', 'pooled', 'states', 'last_layer').
    tolerance: as `check`.

  Returns:
    The refusal's message, or None.
  """
  name = type(heads.base_of(model)).__name__
  batch = int(np.shape(out['alpha'])[0])
  mask = np.asarray(out['mask'], bool) if 'mask' in out else np.ones((batch, 1), bool)
  rows = mask.reshape(batch, -1).any(axis=-1)  # rows with items (a batch's filler rows may have none)
  reason = _output(model, out['logits'], batch, 'decode')
  if reason is None and 'model' in out:
    reason = _output(model, out['model'], batch, 'the model\'s own forward')
  if reason is None and not np.all(np.isfinite(np.asarray(out['logits'])[rows])):
    reason = 'decode gives NaN or inf logits on rows with items: check that every id is inside the embedding table'
  if reason is not None or 'mask' not in out:
    return reason
  tol = max(tolerance, 8 * float(jnp.finfo(out['alpha'].dtype).eps)) if jnp.issubdtype(
      out['alpha'].dtype, jnp.floating) else tolerance
  reason = _distribution(out['alpha'], mask, 'α', tol)
  for k in range(np.shape(out.get('heads', np.zeros((0, 0))))[1]):
    reason = reason or _distribution(out['heads'][:, k], mask, f'head {k}\'s α', tol)
  if reason is not None:
    return reason
  checks = (
      ('own', 'logits', f'imposing head {getattr(model, "index", 0)}\'s own α changes the model\'s output by '
       'up to {gap:.3g} in a logit: a head view imposes one head and reads the others from attend(states, '
       'all-True mask), so attend must read the weights encode computed over the model\'s mask, not '
       'recompute them from the mask it is given (attn_jax.models.heads)'),
      ('forward', 'logits', 'forward differs from decode(encode(embed(x)), attend(…)) by up to {gap:.3g} in '
       'a logit: forward must be the composition of the pieces'),
      ('model', 'logits', 'decode(encode(embed(x)), attend(…)) differs from ' + name + '\'s own forward by '
       'up to {gap:.3g} in a logit: the pieces are not the model; check that attention_mask declares what '
       'it attends (default: the words) and that embed, encode and decode do what its forward does'),
      ('replaced', 'forward', 'the forward with the embeddings put back differs from the forward of the ids '
       'by up to {gap:.3g} in a logit: embed= (or the embedding layer named) is not what the forward '
       'embeds with, or that layer is called more than once'),
      ('pooled', 'logits', 'decode(h, α) differs from decode(Σ α h as one item of weight 1) by up to '
       '{gap:.3g} in a logit: \'pooled_decode\' does not hold (the decoder reads more than Σ α h: a '
       'residual, another head); remove that capability (the exact paths run)'),
  )
  for got, reference, message in checks:
    if got in out and np.shape(out[got]) != np.shape(out[reference]):
      return (f'{got} gives shape {list(np.shape(out[got]))} where {reference} gives '
              f'{list(np.shape(out[reference]))}: ' + message.split(': ', 1)[-1])
    if got in out:
      gap, over = _gap(out[got], out[reference], rows)
      if over > tolerance:
        return message.format(gap=gap)
  if 'projected' in out and np.shape(out['projected']) != np.shape(out['alpha']):
    return (f'project(score(h), mask) has shape {list(np.shape(out["projected"]))}, attend '
            f'{list(np.shape(out["alpha"]))}: \'scores\' promises attend == project(score(h), mask)'
            + (' (a multi-head model\'s score gives [B, heads, L])' if 'heads' in out else ''))
  if 'projected' in out:
    gap, over = _gap(out['projected'], out['alpha'], rows)
    if over > tol:
      return (f'attend differs from project(score(h), mask) by up to {gap:.3g}: \'scores\' does not hold; '
              'make attend = project(score(h), mask) or remove that capability')
  if 'last_layer' in out:
    if np.shape(out['last_layer']) != np.shape(out['states']):
      return (f'encode_layers(…)[-1] has shape {list(np.shape(out["last_layer"]))}, encode {list(np.shape(out["states"]))}: '
              "'layer_states' promises [-1] is the states attention pools")
    gap, over = _gap(out['last_layer'], out['states'], rows)
    if over > tolerance:
      return (f'encode_layers(…)[-1] differs from encode(…) by up to {gap:.3g}: \'layer_states\' promises [-1] '
              'is the states attention pools; make it so or remove that capability')
  return None
