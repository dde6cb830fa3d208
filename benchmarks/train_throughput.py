"""Training throughput (real tokens per second): attn-jax's host memory
setting against glibc's default (the code before it), side by side in one
run, and each encoder against a plain Flax BiLSTM.

    python benchmarks/train_throughput.py [--dataset=imdb] [--batches=40] [--rounds=3]
        [--encoders=bilstm] [--flax-baseline] [--out=results/benchmarks/train_throughput_imdb.json]

Two arms, each in its own child process, alternated for --rounds rounds:
  system  ATTN_JAX_MALLOC=system: glibc's malloc as it comes, which maps and
          unmaps every buffer above 32 MiB at each step (attn-jax until
          2026-11-25);
  kept    the default: freed memory is kept for the next step
          (attn_jax.core.host_memory).
Both train the same batches — the first --batches of epoch 0 (the real train
split when ATTN_JAX_DATA is set: batch 32, J&W's length buckets; else
synthetic IMDB-like lengths) — through the trainer's own path (the
single-model executor: state donated, every loss read), from the same
initial params; every bucket is compiled first and not timed. Each child
reports tokens/s (best of 2 passes), minor page faults per step and peak
RSS, and saves its final params: the arms must agree bit for bit.
`--flax-baseline` adds the obvious Flax BiLSTM (`nn.Bidirectional` of
`nn.RNN(nn.LSTMCell)`) as a row of each child.

How far from this machine's limit: for the BiLSTM each child also counts the
step's matmul FLOPs (`bilstm_matmul_flops`) and times, in the same process,
one jitted f32 GEMM of the step's largest shape (the input projection of the
mean padded batch) and a 2048² matmul: the achieved GFLOP/s against what a
GEMM reaches here bounds any further speed-up that keeps the padded shapes.
"""

import argparse
import dataclasses
import os
import resource
import subprocess
import sys
import tempfile
import time

import flax.linen as nn
import jax
import numpy as np

import machine
from attn_jax import config as config_lib
from attn_jax.core import atomic_io, determinism, host_memory
from attn_jax.data import batching, sources
from attn_jax.data.batching import Batch
from attn_jax.data.dataset import load_dataset
from attn_jax.models import build_model, masks
from attn_jax.models.model import Model
from attn_jax.training import executors, optimizer as optimizer_lib, step as step_lib, trainer
from attn_jax.training.objective import JW

ARMS = {'system': {host_memory.ENV: 'system'}, 'kept': {}}


class FlaxRNNBiLSTM(nn.Module):
  """The obvious Flax BiLSTM: per-step input projections, autodiff through scan."""
  hidden: int = 128

  @nn.compact
  def __call__(self, embedded, lengths, deterministic=True):
    del deterministic
    rnn = nn.Bidirectional(nn.RNN(nn.LSTMCell(self.hidden)), nn.RNN(nn.LSTMCell(self.hidden)))
    out = rnn(embedded, seq_lengths=lengths)
    return out * masks.sequence_mask(lengths, embedded.shape[1])[..., None].astype(out.dtype)


def make_batches(dataset: str, count: int) -> tuple[list[Batch], int, bool]:
  cfg = config_lib.default_config(dataset, 'bilstm')
  real = bool(sources.archive_dir(None))
  if real:
    data = load_dataset(cfg.data)
    split, vocab_size, pos_weight = data.splits['train'], len(data.vocab), data.pos_weight
    sequences, labels = split.sequences, split.labels
  else:
    rng = np.random.default_rng(0)
    lengths = np.clip(rng.gamma(2.0, 90.0, size=32 * count), 8, 400).astype(int)
    vocab_size, pos_weight = 12000, 1.0
    sequences = [np.r_[2, rng.integers(4, vocab_size, n), 3].astype(np.int32) for n in lengths]
    labels = rng.integers(0, 2, len(sequences))
  buckets = batching.bucket_lengths(max(len(s) for s in sequences), cfg.data.bucket_growth)
  batches = batching.train_batches(sequences, labels, 32, buckets, pos_weight, seed=0, epoch=0)
  return batches[:count], vocab_size, real


def _model(dataset: str, encoder: str, vocab_size: int) -> Model:
  if encoder == 'flax_bilstm':
    base = build_model(config_lib.default_config(dataset, 'bilstm').model, vocab_size)
    return Model(dataclasses.replace(base.module, encoder=FlaxRNNBiLSTM(128)), base.project)
  return build_model(config_lib.default_config(dataset, encoder).model, vocab_size)


def bilstm_matmul_flops(slots: int, embed_dim: int, hidden_dim: int) -> int:
  """Matmul FLOPs of one BiLSTM training step over `slots` padded token slots:
  per slot and direction the input projection (2·E·4H) and the recurrence
  (2·H·4H) forward, twice that backward (the gradients of the input and of
  the weights). Attention, decoder and optimizer are elementwise or smaller
  by orders of magnitude and not counted."""
  forward = 2 * slots * 2 * 4 * hidden_dim * (embed_dim + hidden_dim)
  return 3 * forward


def _faults() -> int:
  return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def child(args) -> dict:
  """(Child process.) Every encoder's tokens/s on the saved batches."""
  saved = np.load(args.child_batches)
  batches = [Batch(*(saved[f'{i}_{f}'] for f in Batch._fields)) for i in range(int(saved['count']))]
  vocab_size = int(saved['vocab_size'])
  tokens = sum(int(b.lengths[b.index >= 0].sum()) for b in batches)
  slots = sum(b.tokens.size for b in batches)
  rows = {}
  machine.reset_peak()
  for encoder in args.encoders.split(','):
    cfg = config_lib.default_config(args.dataset, 'bilstm' if encoder == 'flax_bilstm' else encoder)
    model = _model(args.dataset, encoder, vocab_size)
    tx = optimizer_lib.make_optimizer(cfg.train)
    executor = executors.make_executor('loop', 1, model, tx, JW, False)
    keys = trainer.dropout_key(0)[None]

    def fresh(model=model, tx=tx, executor=executor):
      return executor.from_checkpoint(
          step_lib.stack([step_lib.init_state(tx, model.init(trainer.init_key(0)))]))

    state = fresh()
    for width in sorted({b.tokens.shape[1] for b in batches}):  # compile every bucket first
      state, _ = executor.step(state, next(b for b in batches if b.tokens.shape[1] == width), keys, {})
    best, faults = float('inf'), 0
    for _ in range(2):
      state = fresh()
      started, faults_before = time.perf_counter(), _faults()
      for b in batches:
        state, _ = executor.step(state, b, keys, {})  # reads every loss, as the trainer does
      best = min(best, time.perf_counter() - started)
      faults = _faults() - faults_before
    path = f'{args.child_out}.{encoder}.npz'
    np.savez(path, *jax.tree.leaves(jax.tree.map(np.asarray, executor.to_checkpoint(state).params)))
    rows[encoder] = {'tokens_per_second': tokens / best, 'ms_per_step': best / len(batches) * 1e3,
                     'minor_faults_per_step': faults / len(batches), 'params_file': path}
    if encoder == 'bilstm':
      m = cfg.model
      flops = bilstm_matmul_flops(slots, m.embed_dim, m.hidden_dim)
      rows[encoder].update({
          'matmul_gflop_per_step': flops / len(batches) / 1e9, 'gflops': flops / best / 1e9,
          'input_gemm_gflops': machine.matmul_rate(slots // len(batches), m.embed_dim, 8 * m.hidden_dim) / 1e9,
          'matmul_2048_gflops': machine.matmul_peak(2048) / 1e9})
  return {'host_memory': host_memory.status(), 'gpu_determinism': determinism.status(),
          'tokens': tokens, 'padded_slots': slots,
          'peak_rss_mb': machine.rss_mb(peak=True), 'encoders': rows}


def run_child(args, arm: str, round_: int, tmp: str, batches_file: str) -> dict:
  out = os.path.join(tmp, f'{arm}_{round_}')
  env = {k: v for k, v in os.environ.items() if k != host_memory.ENV}
  subprocess.run([sys.executable, os.path.abspath(__file__), f'--dataset={args.dataset}',
                  f'--encoders={args.encoders}', f'--child-batches={batches_file}',
                  f'--child-out={out}'], check=True, env={**env, **ARMS[arm]})
  return atomic_io.read_json(out + '.json')


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--dataset', default='imdb', choices=['sst', 'imdb', '20news'])
  parser.add_argument('--batches', type=int, default=40)
  parser.add_argument('--rounds', type=int, default=3)
  parser.add_argument('--encoders', default='bilstm')
  parser.add_argument('--flax-baseline', action='store_true')
  parser.add_argument('--out', default=None)
  parser.add_argument('--child-batches', default=None)
  parser.add_argument('--child-out', default=None)
  args = parser.parse_args()
  if args.child_batches:
    atomic_io.write_json(args.child_out + '.json', child(args))
    return
  if args.flax_baseline:
    args.encoders = 'flax_bilstm,' + args.encoders
  encoders = args.encoders.split(',')
  batches, vocab_size, real = make_batches(args.dataset, args.batches)
  runs = {arm: [] for arm in ARMS}
  with tempfile.TemporaryDirectory() as tmp:
    batches_file = os.path.join(tmp, 'batches.npz')
    np.savez(batches_file, count=len(batches), vocab_size=vocab_size,
             **{f'{i}_{f}': getattr(b, f) for i, b in enumerate(batches) for f in Batch._fields})
    for round_ in range(args.rounds):
      for arm in ARMS:
        runs[arm].append(run_child(args, arm, round_, tmp, batches_file))
        print(f'round {round_ + 1} {arm}: ' + ', '.join(
            f'{e} {r["tokens_per_second"]:.0f} tokens/s ({r["minor_faults_per_step"]:.0f} faults/step)'
            for e, r in runs[arm][-1]['encoders'].items()), flush=True)
    rows = []
    for encoder in encoders:
      params = {arm: [np.load(r['encoders'][encoder].pop('params_file')) for r in runs[arm]]
                for arm in ARMS}
      reference = params['system'][0]
      difference = max(float(np.max(np.abs(p[k] - reference[k])))
                       for arm in ARMS for p in params[arm] for k in reference.files)
      rate = {arm: [r['encoders'][encoder]['tokens_per_second'] for r in runs[arm]] for arm in ARMS}
      ratios = [k / s for k, s in zip(rate['kept'], rate['system'])]
      rows.append({'encoder': encoder,
                   **{arm: {'tokens_per_second': rate[arm],
                            'median_tokens_per_second': float(np.median(rate[arm])),
                            'ms_per_step': [r['encoders'][encoder]['ms_per_step'] for r in runs[arm]],
                            'minor_faults_per_step': [r['encoders'][encoder]['minor_faults_per_step']
                                                      for r in runs[arm]],
                            **{k: [r['encoders'][encoder][k] for r in runs[arm]]
                               for k in ('gflops', 'input_gemm_gflops', 'matmul_2048_gflops')
                               if k in runs[arm][0]['encoders'][encoder]}} for arm in ARMS},
                   **({'matmul_gflop_per_step': runs['kept'][0]['encoders'][encoder]['matmul_gflop_per_step']}
                      if 'matmul_gflop_per_step' in runs['kept'][0]['encoders'][encoder] else {}),
                   'speedup_per_round': ratios, 'speedup_median': float(np.median(ratios)),
                   'max_abs_param_difference': difference})
  first = runs['kept'][0]
  print(f'\n{args.dataset}: {len(batches)} training batches of 32 ({"real" if real else "synthetic"} data), '
        f'{first["tokens"]} real tokens in {first["padded_slots"]} padded slots; '
        f'{jax.device_count()} {jax.devices()[0].platform} device(s), {os.cpu_count()} CPUs')
  print(f'{"encoder":<14}{"system tok/s":>14}{"kept tok/s":>12}{"speed-up":>10}{"faults/step":>14}'
        f'{"max |Δparam|":>14}')
  for row in rows:
    print(f'{row["encoder"]:<14}{row["system"]["median_tokens_per_second"]:>14.0f}'
          f'{row["kept"]["median_tokens_per_second"]:>12.0f}{row["speedup_median"]:>9.2f}x'
          f'{np.median(row["system"]["minor_faults_per_step"]):>7.0f} → '
          f'{np.median(row["kept"]["minor_faults_per_step"]):<5.0f}{row["max_abs_param_difference"]:>11.1e}')
  for row in rows:
    if 'gflops' in row['kept']:
      print(f'{row["encoder"]}: {row["matmul_gflop_per_step"]:.1f} GFLOP of matmuls a step; kept arm '
            f'{np.median(row["kept"]["gflops"]):.0f} GFLOP/s against {np.median(row["kept"]["input_gemm_gflops"]):.0f} '
            f'for its input GEMM alone and {np.median(row["kept"]["matmul_2048_gflops"]):.0f} for a 2048² matmul')
  print('peak RSS (MB): ' + ', '.join(f'{arm} {np.median([r["peak_rss_mb"] for r in runs[arm]]):.0f}'
                                      for arm in ARMS))
  if args.out:
    atomic_io.write_json(args.out, {
        'command': 'python benchmarks/train_throughput.py ' + ' '.join(sys.argv[1:]),
        'dataset': args.dataset, 'batches': len(batches), 'real_data': real,
        'tokens': first['tokens'], 'padded_slots': first['padded_slots'],
        'device': str(jax.devices()[0]), 'cpus': os.cpu_count(),
        'host_memory': {arm: runs[arm][0]['host_memory'] for arm in ARMS},
        'gpu_determinism': runs['kept'][0]['gpu_determinism'],
        'peak_rss_mb': {arm: [r['peak_rss_mb'] for r in runs[arm]] for arm in ARMS},
        'rows': rows})


if __name__ == '__main__':
  main()
