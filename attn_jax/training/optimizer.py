"""J&W's optimiser (`model/Binary_Classification.py`): Adam with amsgrad, L2
decay except on attention; or S&S's (App. A.1): plain Adam with the gradient's global norm clipped
(`train.optimizer`, `train.clip_norm`).

AMSGrad comes in two rules. PyTorch's (`torch.optim.Adam(amsgrad=True)`,
which J&W's and W&P's code train with: 'torch_amsgrad') keeps the running
maximum of the *raw* second moment v_t and divides it by the bias correction
1 - β₂^t afterwards; optax's (`optax.amsgrad`: 'amsgrad') keeps the maximum of
the bias-corrected v̂_t. Early in training v̂_t of the first, large gradients
stays the maximum, so optax's steps are smaller for hundreds of steps (on a
decaying gradient sequence, about half PyTorch's). Found by running J&W's own
code on attn-jax's inputs (docs/jain_wallace.md, "J&W's own code on the same
inputs"); results trained before 2026-11-26 say 'amsgrad' in their config.

The learning rate and weight decay are optimiser *state*
(`optax.inject_hyperparams`), not constants closed over: models stacked on a
model axis each carry their own values and still run as one program.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import ml_collections
import optax

NO_DECAY = ('attention',)  # J&W give the attention module weight decay 0
HYPERPARAMS = ('learning_rate', 'weight_decay')


OPTIMIZERS = ('torch_amsgrad', 'amsgrad', 'adam')


class TorchAmsgradState(NamedTuple):
  count: jnp.ndarray
  mu: optax.Updates
  nu: optax.Updates
  nu_max: optax.Updates


def scale_by_torch_amsgrad(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> optax.GradientTransformation:
  """PyTorch's AMSGrad step direction: with m_t, v_t Adam's moments,
  v_max = max(v_max, v_t) (raw), update = (m_t / (1 - β₁^t)) /
  (sqrt(v_max) / sqrt(1 - β₂^t) + ε) (torch.optim.Adam, amsgrad=True)."""

  def init(params):
    zeros = lambda: jax.tree.map(jnp.zeros_like, params)
    return TorchAmsgradState(jnp.zeros([], jnp.int32), zeros(), zeros(), zeros())

  def update(updates, state, params=None):
    del params
    mu = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state.mu, updates)
    nu = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, state.nu, updates)
    nu_max = jax.tree.map(jnp.maximum, state.nu_max, nu)
    count = state.count + 1
    c1 = 1 - b1 ** count.astype(jnp.float32)
    c2 = jnp.sqrt(1 - b2 ** count.astype(jnp.float32))
    step = jax.tree.map(lambda m, v: (m / c1) / (jnp.sqrt(v) / c2 + eps), mu, nu_max)
    return step, TorchAmsgradState(count, mu, nu, nu_max)

  return optax.GradientTransformation(init, update)


def torch_amsgrad(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
  """torch.optim.Adam(lr, amsgrad=True) without weight decay."""
  return optax.chain(scale_by_torch_amsgrad(b1, b2, eps), optax.scale_by_learning_rate(learning_rate))


def _jw_optimizer(learning_rate, weight_decay, frozen: tuple[str, ...] = (),
                  attention_lr_scale: float = 1.0, kind: str = 'amsgrad',
                  clip_norm: float = None, decay_attention: bool = False):
  def adam(scale=1.0):
    rule = {'torch_amsgrad': torch_amsgrad, 'amsgrad': optax.amsgrad, 'adam': optax.adam}[kind]
    return rule(learning_rate * scale, b1=0.9, b2=0.999, eps=1e-8)

  # The transforms by label. A decayed attention is one more label only where
  # it is asked for: the optimiser state's structure (and so every checkpoint
  # saved without it) stays what it was.
  transforms = {'decayed': optax.chain(optax.add_decayed_weights(weight_decay), adam()),
                'plain': adam(attention_lr_scale), 'frozen': optax.set_to_zero()}
  if decay_attention:
    transforms['decayed_attention'] = optax.chain(optax.add_decayed_weights(weight_decay),
                                                  adam(attention_lr_scale))

  def labels(params):
    def label(name):
      if name in frozen:
        return 'frozen'
      if name in NO_DECAY:
        return 'decayed_attention' if decay_attention else 'plain'
      return 'decayed'
    return {name: jax.tree.map(lambda _, n=name: label(n), sub) for name, sub in params.items()}

  parts = optax.multi_transform(transforms, labels)
  return parts if clip_norm is None else optax.chain(optax.clip_by_global_norm(clip_norm), parts)


def make_optimizer(cfg: ml_collections.ConfigDict, frozen: tuple[str, ...] = ()) -> optax.GradientTransformation:
  """`config.train` -> amsgrad(lr), with `weight_decay` * params added to the
  gradient first (PyTorch Adam's L2 decay, not AdamW) for every parameter
  outside the `attention` subtree (inside it too with `decay_attention`: J&W's
  QA/NLI trainer), whose step size is `attention_lr_scale`
  times the others' (Meister et al. Table 4: equal or 10×); subtrees named in
  `frozen` (e.g. 'embedding') are not updated at all. `optimizer='adam'`
  uses Adam without amsgrad, `optimizer='amsgrad'` optax's AMSGrad rule instead
  of PyTorch's (module docstring); `clip_norm` clips the gradient's global norm first."""
  return optax.inject_hyperparams(
      _jw_optimizer, static_args=('frozen', 'attention_lr_scale', 'kind', 'clip_norm', 'decay_attention'))(
          learning_rate=cfg.learning_rate, weight_decay=cfg.weight_decay, frozen=tuple(frozen),
          attention_lr_scale=float(cfg.get('attention_lr_scale', 1.0)),
          kind=cfg.get('optimizer', 'amsgrad'), clip_norm=cfg.get('clip_norm', None),
          decay_attention=bool(cfg.get('decay_attention', False)))


SUBTREES = ('embedding', 'encoder', 'attention', 'decoder')


def update_only(train_cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The subtrees `train.update_only` names (None: all)."""
  if train_cfg.get('update_only') is None:
    return SUBTREES
  return tuple(n.strip() for n in train_cfg.update_only.split(',') if n.strip())


def frozen_subtrees(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The params subtrees a run leaves unchanged: the embeddings with
  `model.freeze_embeddings`, and every subtree `train.update_only` leaves out
  (Meister et al.'s frozen adversary trains the `attention` scorer alone)."""
  kept = update_only(cfg.train)
  return tuple(n for n in SUBTREES
               if n not in kept or (n == 'embedding' and cfg.model.freeze_embeddings))


def with_hyperparams(opt_state, train_cfg: ml_collections.ConfigDict):
  """`opt_state` with one model's own learning rate and weight decay."""
  values = dict(opt_state.hyperparams)
  for name in HYPERPARAMS:
    values[name] = jax.numpy.asarray(train_cfg[name], values[name].dtype)
  return opt_state._replace(hyperparams=values)
