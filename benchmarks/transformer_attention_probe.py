"""Does the Meister Transformer's attention move in training? (issue 35)

    python benchmarks/transformer_attention_probe.py [--epochs 20] \
        [--variant NAME=key=value,key=value ...] [--out results/meister_probe/probe.json] \
        [--readme docs/meister.md]

Trains SST's Transformer (configs/sst_transformer.py: J&W's loss, amsgrad,
batch 32) once per variant, epoch by epoch with the library's own train
step, and after each epoch records on the dev split: the mean normalised
entropy H̃(α) of the attention over each document's words and the mean
largest weight; dev accuracy; how far the word states spread around their
document's mean (`state_spread`: pooling weights matter only if they do); the query's norm ‖u‖ and, over the epoch's
first 20 batches, the mean gradient norm of the attention scorer's params
and of the encoder's, and the cosine between the scorer's gradient summed
over the positive documents and over the negative ones (near −1: the two
classes pull a linear scorer's query opposite ways, and it stays put). The default variants are the committed recipe (lr
1e-4), Meister's Table 4 lr 1e-5, pre-LN layers, and a key-projected
scaled dot-product scorer (`model.attention=key_dot`), and the attention
params at 10× the learning rate (Meister: "equal to or 10×"); and, outside
the paper's recipe, J&W's additive tanh scorer over the same states. A variant
already in --out with the same settings and epochs is not trained again.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from attn_jax import config as config_lib  # noqa: E402
from attn_jax.core import atomic_io  # noqa: E402
from attn_jax.data import split_batches  # noqa: E402
from attn_jax.data.dataset import load_dataset  # noqa: E402
from attn_jax.models import build_model  # noqa: E402
from attn_jax.tables.common import markdown, plain, write_blocks  # noqa: E402
from attn_jax.workdirs.initial_params import initial_params  # noqa: E402
from attn_jax.training import objective, step as step_lib, trainer  # noqa: E402
from attn_jax.training.optimizer import make_optimizer, with_hyperparams  # noqa: E402

VARIANTS = {
    'recipe (lr 1e-4, post-LN, dot)': {},
    'lr 1e-5 (Meister Table 4)': {'train.learning_rate': 1e-5},
    'pre-LN': {'model.transformer_norm': 'pre'},
    'key-projected dot': {'model.attention': 'key_dot'},
    'attention lr ×10': {'train.attention_lr_scale': 10.0},
    # Outside Meister's recipe: a scorer not linear in h (J&W's additive tanh)
    # over the same states, to test the reading that a linear one stays flat.
    'tanh scorer (not Meister\'s)': {'model.attention': 'tanh'},
}


def normalised_entropy(alpha: np.ndarray, mask: np.ndarray) -> np.ndarray:
  n = mask.sum(axis=1)
  p = np.where(mask, alpha, 0.0)
  h = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=1)
  return np.where(n > 1, h / np.log(np.maximum(n, 2)), 1.0)


def state_spread(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
  """[B]: how much a document's word states differ from their mean, as a
  share of their size: Σ_t ‖h_t − h̄‖² / Σ_t ‖h_t‖² over its words (0: all
  states equal, when no pooling weights can change the output)."""
  m = mask[..., None].astype(hidden.dtype)
  n = np.maximum(mask.sum(axis=1), 1)[:, None]
  mean = (hidden * m).sum(axis=1) / n
  deviation = (((hidden - mean[:, None]) ** 2).sum(-1) * mask).sum(axis=1)
  size = ((hidden ** 2).sum(-1) * mask).sum(axis=1)
  return deviation / np.maximum(size, 1e-12)


def _flat(tree) -> np.ndarray:
  return np.concatenate([np.ravel(np.asarray(x, np.float64)) for x in jax.tree.leaves(tree)])


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
  return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def _norm(tree) -> float:
  return float(jnp.sqrt(sum(jnp.sum(x.astype(jnp.float32) ** 2) for x in jax.tree.leaves(tree))))


def probe(overrides: dict, epochs: int, log=print) -> dict:
  cfg = config_lib.default_config('sst', 'transformer')
  for key, value in overrides.items():
    config_lib.set_key(cfg, key, value)
  cfg.train.epochs = epochs
  dataset = load_dataset(cfg.data)
  model = build_model(cfg.model, len(dataset.vocab))
  params = initial_params(model, cfg, dataset, lambda *_: None)
  optimizer = make_optimizer(cfg.train)
  state = step_lib.TrainState(params, with_hyperparams(optimizer.init(params), cfg.train), jnp.zeros((), jnp.int32))
  train_step = jax.jit(step_lib.make_train_step(model, optimizer))
  grad_fn = jax.jit(jax.grad(lambda p, b, r: objective.jw_loss(model, p, b, r, {}, {})))
  forward = jax.jit(lambda p, t, l: model.forward(p, t, l))
  buckets = trainer.dataset_buckets(dataset, cfg.data.bucket_growth, model, None)
  train, dev = dataset.splits['train'], dataset.splits['dev']
  key = trainer.dropout_key(cfg.seed)
  epochs_out = []

  def dev_measures(p):
    ent, top, spread, correct, total = [], [], [], 0, 0
    for b in split_batches.eval_batches(dev, 64, buckets):
      fwd = forward(p, b.tokens, b.lengths)
      real = b.index >= 0
      alpha, mask = np.asarray(fwd.alpha)[real], np.asarray(fwd.mask)[real]
      ent.append(normalised_entropy(alpha, mask))
      top.append(np.max(np.where(mask, alpha, 0.0), axis=1))
      spread.append(state_spread(np.asarray(fwd.hidden)[real], mask))
      correct += int(np.sum((np.asarray(fwd.probs)[real] > 0.5) == (b.labels[real] > 0.5)))
      total += int(real.sum())
    return (float(np.mean(np.concatenate(ent))), float(np.mean(np.concatenate(top))), correct / total,
            float(np.mean(np.concatenate(spread))))

  h, top, acc, spread = dev_measures(state.params)
  epochs_out.append({'epoch': 0, 'dev_entropy': h, 'dev_max_alpha': top, 'dev_accuracy': acc,
                     'dev_state_spread': spread, 'query_norm': _norm(state.params['attention'])})
  started = time.time()
  for epoch in range(1, epochs + 1):
    grads_att, grads_enc = [], []
    by_class = {1: None, 0: None}  # the scorer's gradient summed over each class's documents
    batches = split_batches.train_batches(train, cfg.train.batch_size, buckets, dataset.pos_weight,
                                          cfg.seed, epoch - 1)
    for i, b in enumerate(batches):
      rng = jax.random.fold_in(key, int(state.step))
      if i < 20:
        g = grad_fn(state.params, b, rng)
        grads_att.append(_norm(g['attention']))
        grads_enc.append(_norm(g['encoder']))
        for label in by_class:
          only = b._replace(weights=b.weights * (b.labels == label))
          part = _flat(grad_fn(state.params, only, rng)['attention'])
          by_class[label] = part if by_class[label] is None else by_class[label] + part
      state, loss = train_step(state, b, rng)
    h, top, acc, spread = dev_measures(state.params)
    row = {'epoch': epoch, 'dev_entropy': h, 'dev_max_alpha': top, 'dev_accuracy': acc,
           'dev_state_spread': spread,
           'query_norm': _norm(state.params['attention']),
           'attention_grad_norm': float(np.mean(grads_att)), 'encoder_grad_norm': float(np.mean(grads_enc)),
           # cos(scorer gradient from positive documents, from negative ones): −1 when they cancel
           'attention_grad_class_cosine': _cosine(by_class[1], by_class[0]),
           'seconds': round(time.time() - started, 1)}
    epochs_out.append(row)
    log(f'  epoch {epoch}: H̃(α) {h:.4f}, max α {top:.3f}, dev acc {acc:.3f}, state spread {spread:.3f}, '
        f'‖attention params‖ '
        f'{row["query_norm"]:.3f}, grad norm attention {row["attention_grad_norm"]:.2e} / encoder '
        f'{row["encoder_grad_norm"]:.2e}, cos(positive, negative documents\' scorer gradients) '
        f'{row["attention_grad_class_cosine"]:+.2f}')
  return {'overrides': overrides, 'epochs': epochs_out}


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--epochs', type=int, default=20)
  parser.add_argument('--variant', action='append',
                      help='NAME=key=value,key=value (repeatable); default: the four of VARIANTS')
  parser.add_argument('--out', default='results/meister_probe/probe.json')
  parser.add_argument('--readme', action='append', help='rewrite the meister-probe block of this page')
  args = parser.parse_args(argv)
  variants = VARIANTS
  if args.variant:
    variants = {}
    for text in args.variant:
      name, _, rest = text.partition('=')
      pairs = [p.split('=', 1) for p in rest.split(',') if p]
      variants[name] = {k: _value(v) for k, v in pairs}
  done = {}
  if os.path.exists(args.out):
    done = atomic_io.read_json(args.out).get('variants', {})
  for name, overrides in variants.items():
    if (name in done and done[name]['overrides'] == overrides and len(done[name]['epochs']) == args.epochs + 1
        and 'attention_grad_class_cosine' in done[name]['epochs'][-1]):
      print(f'{name}: done')
      continue
    print(f'{name}: {overrides}')
    done[name] = probe(overrides, args.epochs)
    os.makedirs(os.path.dirname(args.out) or '.', exist_ok=True)
    atomic_io.write_json(args.out, {'epochs': args.epochs, 'variants': done})
  rows = table(done)
  print(plain(rows))
  if args.readme:
    write_blocks(args.readme, 'meister-probe', markdown(rows),
                 f'python benchmarks/transformer_attention_probe.py --epochs {args.epochs} --out {args.out}',
                 [args.out])
  return 0


def table(done: dict) -> list[list[str]]:
  """One row per variant: start → end of training (dev split), and the
  scorer's gradient over the epochs (mean)."""
  rows = [['variant', 'H̃(α)', 'mean max α', 'dev accuracy', '‖scorer params‖', 'word-state spread',
           'scorer / encoder gradient norm', 'cos(positive, negative gradient)']]
  order = [n for n in VARIANTS if n in done] + [n for n in done if n not in VARIANTS]
  for name in order:
    r = done[name]
    first, last, trained = r['epochs'][0], r['epochs'][-1], r['epochs'][1:]
    mean = lambda k: float(np.mean([e[k] for e in trained]))
    rows.append([name, f'{first["dev_entropy"]:.4f} → {last["dev_entropy"]:.4f}',
                 f'{first["dev_max_alpha"]:.3f} → {last["dev_max_alpha"]:.3f}', f'{last["dev_accuracy"]:.3f}',
                 f'{first["query_norm"]:.3f} → {last["query_norm"]:.3f}',
                 f'{first["dev_state_spread"]:.2f} → {last["dev_state_spread"]:.2f}',
                 f'{mean("attention_grad_norm"):.2f} / {mean("encoder_grad_norm"):.0f}',
                 f'{mean("attention_grad_class_cosine"):+.2f}'])
  return rows


def _value(text: str):
  for cast in (int, float):
    try:
      return cast(text)
    except ValueError:
      pass
  return text


if __name__ == '__main__':
  sys.exit(main())
