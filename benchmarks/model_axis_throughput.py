"""Training throughput of M models as one program against the same M models
trained one after another, and the peak memory of each, in one run.

    python benchmarks/model_axis_throughput.py [--dataset=sst] [--encoders=bilstm]
        [--models=5,9] [--batches=40] [--orders=shared,own] [--out=results/benchmarks/model_axis_sst.json]

For each encoder and each M: the first --batches training batches of epoch 0
(the real train split when ATTN_JAX_DATA is set, batch 32, J&W's length
buckets; else synthetic SST-like batches), M models with seeds 0..M-1 and
the config's recipe. Three arms (attn_jax.training.executors):
  vmap        one program, the stacked models vmapped: every model on each batch;
  loop        one program, its one compiled single-model step called for each
              model in turn (the default on CPU);
  sequential  the M models trained one after another as separate runs
              (`run.py` each), each compiling its own step.
Each arm runs in its own child process, compiles every bucket first (timed
apart: "compile seconds" is the total a run of that arm spends compiling),
then times the batches; tokens/s counts real tokens × models. Peak RSS is the
child's peak over its RSS before training (Linux clear_refs). The final
params of the arms are compared (max |difference|).

--orders: 'shared' (every model on one batch order, `train.batch_order=
shared`) and/or 'own' (model m on the order its seed m draws, as a study's
seeds train by default): with own orders the vmapped program stacks the
models' batches padded to the widest of the step, and the loop calls its
step on each model's batch. The cost of own orders is the own arm's
tokens/s against the shared arm's, both measured in this run.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

import machine
from attn_jax import config as config_lib
from attn_jax.core import atomic_io
from attn_jax.data import batching, sources
from attn_jax.data.dataset import load_dataset
from attn_jax.models import build_model
from attn_jax.training import executors, optimizer as optimizer_lib, step as step_lib, trainer
from attn_jax.training.objective import JW

ARMS = ('vmap', 'loop', 'sequential')


def make_batches(dataset: str, count: int, seeds=(0,)):
  """({seed: the first `count` training batches of epoch 0 in the order it
  draws}, vocabulary size); the split is read once for all seeds."""
  cfg = config_lib.default_config(dataset, 'bilstm')
  if sources.archive_dir(None):
    data = load_dataset(cfg.data)
    split, vocab_size, pos_weight = data.splits['train'], len(data.vocab), data.pos_weight
    sequences, labels = split.sequences, split.labels
  else:
    rng = np.random.default_rng(0)
    lengths = np.clip(rng.gamma(3.0, 7.0, size=32 * count), 8, 60).astype(int)
    vocab_size, pos_weight = 13826, 1.0
    sequences = [np.r_[2, rng.integers(4, vocab_size, n), 3].astype(np.int32) for n in lengths]
    labels = rng.integers(0, 2, len(sequences))
  buckets = batching.bucket_lengths(max(len(s) for s in sequences), cfg.data.bucket_growth)
  orders = {s: batching.train_batches(sequences, labels, 32, buckets, pos_weight, seed=s, epoch=0)[:count]
            for s in seeds}
  return orders, vocab_size


def child(args) -> dict:
  """(Child process.) One arm for one encoder and M: times, memory, final params."""
  cfg = config_lib.default_config(args.dataset, args.encoder)
  seeds = list(range(args.num_models))
  own = args.order == 'own'
  # model -> its batches: one order for all, or the order its seed draws
  drawn, vocab_size = make_batches(args.dataset, args.batches, seeds if own else (0,))
  orders = {s: drawn[s if own else 0] for s in seeds}
  model = build_model(cfg.model, vocab_size)
  tx = optimizer_lib.make_optimizer(cfg.train)
  dropout = cfg.model.dropout > 0
  kind = 'loop' if args.arm == 'sequential' else args.arm
  programs = [seeds] if args.arm != 'sequential' else [[s] for s in seeds]

  def fresh_state(members):
    return step_lib.stack([step_lib.init_state(tx, model.init(trainer.init_key(s))) for s in members])

  def step(executor, state, members, keys, index):
    """One training step of `members`, as the trainer takes it (and reads every loss)."""
    if not own:
      return executor.step(state, orders[members[0]][index], keys, {})[0]
    batches = [orders[s][index] for s in members]
    inputs = [JW.batch_inputs('train', b.index, b.tokens.shape[1]) for b in batches]
    return executor.step_each(state, batches, keys, {}, inputs)[0]

  def shape(members, index):  # what a step compiles for: the widths of its batches
    widths = tuple(orders[s][index].tokens.shape[1] for s in members)
    return max(widths) if kind == 'vmap' else frozenset(widths)

  compile_seconds, runs = 0.0, []
  for members in programs:  # a separate run compiles its own step: each is counted
    start_time = time.perf_counter()
    executor = executors.make_executor(kind, len(members), model, tx, JW, dropout)
    keys = jnp.stack([trainer.dropout_key(s) for s in members])
    state, seen = executor.from_checkpoint(fresh_state(members)), set()
    for index in range(args.batches):
      if shape(members, index) not in seen:
        seen.add(shape(members, index))
        state = step(executor, state, members, keys, index)
    compile_seconds += time.perf_counter() - start_time
    runs.append((executor, members, keys))
  with open('/proc/self/clear_refs', 'w') as f:
    f.write('5')
  before, finals, seconds = machine.rss_mb(), [], 0.0
  for executor, members, keys in runs:
    state = executor.from_checkpoint(fresh_state(members))
    start_time = time.perf_counter()
    for index in range(args.batches):
      state = step(executor, state, members, keys, index)
    seconds += time.perf_counter() - start_time
    finals.append(jax.tree.map(np.asarray, executor.to_checkpoint(state).params))
  tokens = sum(int(b.lengths[b.index >= 0].sum()) for s in seeds for b in orders[s])
  params = jax.tree.map(lambda *x: np.concatenate(x), *finals)
  path = args.child_out + '.npz'
  np.savez(path, *jax.tree.leaves(params))
  return {'encoder': args.encoder, 'models': len(seeds), 'arm': args.arm, 'order': args.order,
          'batches': args.batches,
          'seconds': seconds, 'compile_seconds': compile_seconds,
          'tokens_per_second': tokens / seconds, 'rss_before_mb': before,
          'peak_rss_mb': machine.rss_mb(peak=True), 'params_file': path}


def run_child(args, encoder, num_models, arm, order, tmp) -> dict:
  out = os.path.join(tmp, f'{encoder}_{num_models}_{arm}_{order}.json')
  subprocess.run([sys.executable, os.path.abspath(__file__), f'--dataset={args.dataset}',
                  f'--batches={args.batches}', f'--child-encoder={encoder}', f'--child-order={order}',
                  f'--child-models={num_models}', f'--child-arm={arm}', f'--child-out={out}'],
                 check=True)
  return atomic_io.read_json(out)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--dataset', default='sst', choices=['sst', 'imdb', '20news'])
  parser.add_argument('--encoders', default='bilstm')
  parser.add_argument('--models', default='5,9')
  parser.add_argument('--batches', type=int, default=40)
  parser.add_argument('--orders', default='shared', help="comma-separated: 'shared', 'own'")
  parser.add_argument('--out', default=None)
  parser.add_argument('--child-encoder', default=None)
  parser.add_argument('--child-order', default='shared')
  parser.add_argument('--child-models', type=int, default=None)
  parser.add_argument('--child-arm', default=None)
  parser.add_argument('--child-out', default=None)
  args = parser.parse_args()
  if args.child_encoder:
    args.encoder, args.num_models, args.arm, args.order = (args.child_encoder, args.child_models, args.child_arm,
                                                           args.child_order)
    atomic_io.write_json(args.child_out, child(args))
    return
  rows = []
  with tempfile.TemporaryDirectory() as tmp:
    for encoder, num_models, order in ((e, int(m), o) for e in args.encoders.split(',')
                                       for m in args.models.split(',') for o in args.orders.split(',')):
        arms = {arm: run_child(args, encoder, num_models, arm, order, tmp) for arm in ARMS}
        params = {arm: np.load(r.pop('params_file')) for arm, r in arms.items()}
        difference = {arm: max(float(np.max(np.abs(params[arm][k] - params['sequential'][k])))
                               for k in params[arm].files) for arm in ('vmap', 'loop')}
        row = {'encoder': encoder, 'models': num_models, 'order': order, **arms,
               'max_abs_param_difference': difference,
               'speedup': {arm: arms[arm]['tokens_per_second'] / arms['sequential']['tokens_per_second']
                           for arm in ('vmap', 'loop')}}
        rows.append(row)
        line = ', '.join(f'{arm} {arms[arm]["tokens_per_second"]:.0f} tokens/s (compile '
                         f'{arms[arm]["compile_seconds"]:.0f} s, peak RSS '
                         f'+{arms[arm]["peak_rss_mb"] - arms[arm]["rss_before_mb"]:.0f} MB)' for arm in ARMS)
        print(f'{encoder} M={num_models} {order} orders: {line}; vmap {row["speedup"]["vmap"]:.2f}x, loop '
              f'{row["speedup"]["loop"]:.2f}x of sequential', flush=True)
  own = {(r['encoder'], r['models']): r for r in rows if r['order'] == 'own'}
  for r in rows:  # the cost of own orders, against the shared order measured in this run
    if r['order'] == 'shared' and (r['encoder'], r['models']) in own:
      o = own[(r['encoder'], r['models'])]
      print(f'{r["encoder"]} M={r["models"]}: own orders run at ' + ', '.join(
          f'{arm} {o[arm]["tokens_per_second"] / r[arm]["tokens_per_second"]:.2f}x' for arm in ARMS)
            + ' of the shared order\'s tokens/s', flush=True)
  if args.out:
    atomic_io.write_json(args.out, {'dataset': args.dataset, 'batches': args.batches,
                                    'device': str(jax.devices()[0]), 'cpus': os.cpu_count(),
                                    'real_data': bool(sources.archive_dir(None)), 'rows': rows})


if __name__ == '__main__':
  main()
