"""J&W's optimiser (§A.5): Adam with amsgrad, L2 decay except on attention."""

import jax
import ml_collections
import optax

NO_DECAY = ('attention',)  # J&W give the attention module weight decay 0


def make_optimizer(cfg: ml_collections.ConfigDict) -> optax.GradientTransformation:
  """`config.train` -> amsgrad(lr), with `weight_decay` * params added to the
  gradient first (PyTorch Adam's L2 decay, not AdamW) for every parameter
  outside the `attention` subtree."""
  def adam():
    return optax.amsgrad(cfg.learning_rate, b1=0.9, b2=0.999, eps=1e-8)

  def labels(params):
    return {name: jax.tree.map(lambda _, n=name: 'plain' if n in NO_DECAY else 'decayed', sub)
            for name, sub in params.items()}

  return optax.multi_transform(
      {'decayed': optax.chain(optax.add_decayed_weights(cfg.weight_decay), adam()),
       'plain': adam()},
      labels)
