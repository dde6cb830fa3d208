"""J&W's optimiser (§A.5): Adam with amsgrad, L2 decay except on attention.

The learning rate and weight decay are optimiser *state*
(`optax.inject_hyperparams`), not constants closed over: models stacked on a
model axis each carry their own values and still run as one program.
"""

import jax
import ml_collections
import optax

NO_DECAY = ('attention',)  # J&W give the attention module weight decay 0
HYPERPARAMS = ('learning_rate', 'weight_decay')


def _jw_optimizer(learning_rate, weight_decay, frozen: tuple[str, ...] = ()):
  def adam():
    return optax.amsgrad(learning_rate, b1=0.9, b2=0.999, eps=1e-8)

  def labels(params):
    def label(name):
      return 'frozen' if name in frozen else 'plain' if name in NO_DECAY else 'decayed'
    return {name: jax.tree.map(lambda _, n=name: label(n), sub) for name, sub in params.items()}

  return optax.multi_transform(
      {'decayed': optax.chain(optax.add_decayed_weights(weight_decay), adam()),
       'plain': adam(), 'frozen': optax.set_to_zero()},
      labels)


def make_optimizer(cfg: ml_collections.ConfigDict, frozen: tuple[str, ...] = ()) -> optax.GradientTransformation:
  """`config.train` -> amsgrad(lr), with `weight_decay` * params added to the
  gradient first (PyTorch Adam's L2 decay, not AdamW) for every parameter
  outside the `attention` subtree; subtrees named in `frozen` (e.g.
  'embedding') are not updated at all."""
  return optax.inject_hyperparams(_jw_optimizer, static_args=('frozen',))(
      learning_rate=cfg.learning_rate, weight_decay=cfg.weight_decay, frozen=tuple(frozen))


def frozen_subtrees(model_cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  return ('embedding',) if model_cfg.freeze_embeddings else ()


def with_hyperparams(opt_state, train_cfg: ml_collections.ConfigDict):
  """`opt_state` with one model's own learning rate and weight decay."""
  values = dict(opt_state.hyperparams)
  for name in HYPERPARAMS:
    values[name] = jax.numpy.asarray(train_cfg[name], values[name].dtype)
  return opt_state._replace(hyperparams=values)
