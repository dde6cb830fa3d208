"""Training throughput of M models as one vmapped program against the same M
models trained one after another, and the peak memory of each, in one run.

    python benchmarks/model_axis_throughput.py [--dataset=sst] [--encoders=bilstm]
        [--models=5,9] [--batches=40] [--out=results/benchmarks/model_axis_sst.json]

For each encoder and each M: the first --batches training batches of epoch 0
(the real train split when ATTN_JAX_DATA is set, batch 32, J&W's length
buckets; else synthetic SST-like batches), M models with seeds 0..M-1 and
the config's recipe. "program": `make_model_axis_step` over the stacked
models, every model on each batch; "sequential": the M models one after
another, each trained by the M = 1 program (what `run.py` runs). Each runs in
its own child process, compiles every bucket first (timed apart), then times
the batches; tokens/s counts real tokens × models. Peak RSS is the child's
peak over its RSS before training (Linux clear_refs). The final params of
the two are asserted equal (float tolerance).
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax import atomic_io, config as config_lib
from attn_jax.data import batching, sources
from attn_jax.data.dataset import load_dataset
from attn_jax.models import build_model
from attn_jax.training import optimizer as optimizer_lib, step as step_lib, trainer


def rss_mb(peak: bool = False) -> float:
  if not peak:
    with open('/proc/self/status') as f:
      return next(int(line.split()[1]) for line in f if line.startswith('VmRSS')) / 1024
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_batches(dataset: str, count: int):
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
  batches = batching.train_batches(sequences, labels, 32, buckets, pos_weight, seed=0, epoch=0)
  return batches[:count], vocab_size


def child(args) -> dict:
  """(Child process.) One arm for one encoder and M: times, memory, final params."""
  cfg = config_lib.default_config(args.dataset, args.encoder)
  batches, vocab_size = make_batches(args.dataset, args.batches)
  model = build_model(cfg.model, vocab_size)
  tx = optimizer_lib.make_optimizer(cfg.train)
  step = jax.jit(step_lib.make_model_axis_step(model, tx, dropout=cfg.model.dropout > 0),
                 donate_argnums=0)
  seeds = list(range(args.num_models))

  def states(members):
    return step_lib.stack([step_lib.init_state(tx, model.init(trainer.init_key(s))) for s in members])

  programs = [seeds] if args.arm == 'program' else [[s] for s in seeds]
  start = time.perf_counter()
  for members in {len(m): m for m in programs}.values():  # compile every bucket of each shape
    state = states(members)
    keys, alive = jnp.stack([trainer.dropout_key(s) for s in members]), jnp.ones(len(members), bool)
    for width in sorted({b.tokens.shape[1] for b in batches}):
      state, loss = step(state, next(b for b in batches if b.tokens.shape[1] == width), keys, alive, {})
      jax.block_until_ready(loss)
  compile_seconds = time.perf_counter() - start
  with open('/proc/self/clear_refs', 'w') as f:
    f.write('5')
  before, finals, seconds = rss_mb(), [], 0.0
  for members in programs:
    state = states(members)
    keys, alive = jnp.stack([trainer.dropout_key(s) for s in members]), jnp.ones(len(members), bool)
    start = time.perf_counter()
    for b in batches:
      state, loss = step(state, b, keys, alive, {})
      np.asarray(loss)  # the trainer reads every loss (its NaN guard)
    seconds += time.perf_counter() - start
    finals.append(jax.tree.map(np.asarray, state.params))
  tokens = sum(int(b.lengths[b.index >= 0].sum()) for b in batches) * len(seeds)
  params = jax.tree.map(lambda *x: np.concatenate(x), *finals)
  path = args.child_out + '.npz'
  np.savez(path, *jax.tree.leaves(params))
  return {'encoder': args.encoder, 'models': len(seeds), 'arm': args.arm, 'batches': len(batches),
          'seconds': seconds, 'compile_seconds': compile_seconds,
          'tokens_per_second': tokens / seconds, 'rss_before_mb': before,
          'peak_rss_mb': rss_mb(peak=True), 'params_file': path}


def run_child(args, encoder, num_models, arm, tmp) -> dict:
  out = os.path.join(tmp, f'{encoder}_{num_models}_{arm}.json')
  subprocess.run([sys.executable, os.path.abspath(__file__), f'--dataset={args.dataset}',
                  f'--batches={args.batches}', f'--child-encoder={encoder}',
                  f'--child-models={num_models}', f'--child-arm={arm}', f'--child-out={out}'],
                 check=True)
  return atomic_io.read_json(out)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--dataset', default='sst', choices=['sst', 'imdb', '20news'])
  parser.add_argument('--encoders', default='bilstm')
  parser.add_argument('--models', default='5,9')
  parser.add_argument('--batches', type=int, default=40)
  parser.add_argument('--out', default=None)
  parser.add_argument('--child-encoder', default=None)
  parser.add_argument('--child-models', type=int, default=None)
  parser.add_argument('--child-arm', default=None)
  parser.add_argument('--child-out', default=None)
  args = parser.parse_args()
  if args.child_encoder:
    args.encoder, args.num_models, args.arm = args.child_encoder, args.child_models, args.child_arm
    atomic_io.write_json(args.child_out, child(args))
    return
  rows = []
  with tempfile.TemporaryDirectory() as tmp:
    for encoder in args.encoders.split(','):
      for num_models in (int(m) for m in args.models.split(',')):
        arms = {arm: run_child(args, encoder, num_models, arm, tmp) for arm in ('program', 'sequential')}
        with np.load(arms['program'].pop('params_file')) as a, \
             np.load(arms['sequential'].pop('params_file')) as b:
          difference = max(float(np.max(np.abs(a[k] - b[k]))) for k in a.files)
        row = {'encoder': encoder, 'models': num_models, 'program': arms['program'],
               'sequential': arms['sequential'], 'max_abs_param_difference': difference,
               'speedup': arms['program']['tokens_per_second'] / arms['sequential']['tokens_per_second']}
        rows.append(row)
        print(f'{encoder} M={num_models}: program {row["program"]["tokens_per_second"]:.0f} tokens/s '
              f'(peak RSS +{row["program"]["peak_rss_mb"] - row["program"]["rss_before_mb"]:.0f} MB), '
              f'sequential {row["sequential"]["tokens_per_second"]:.0f} tokens/s (peak RSS '
              f'+{row["sequential"]["peak_rss_mb"] - row["sequential"]["rss_before_mb"]:.0f} MB): '
              f'{row["speedup"]:.2f}x; final params differ by at most {difference:.1e}', flush=True)
  if args.out:
    atomic_io.write_json(args.out, {'dataset': args.dataset, 'batches': args.batches,
                                    'device': str(jax.devices()[0]), 'cpus': os.cpu_count(),
                                    'real_data': bool(sources.archive_dir(None)), 'rows': rows})


if __name__ == '__main__':
  main()
