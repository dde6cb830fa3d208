"""Training throughput (real tokens per second) of each encoder, against a
baseline run in the same process: the same model with the straightforward
Flax BiLSTM (`nn.Bidirectional` of `nn.RNN(nn.LSTMCell)`).

    python benchmarks/train_throughput.py [--dataset=imdb] [--batches=40]

Uses the real train split when ATTN_JAX_DATA is set (batches as training
makes them: batch 32, length buckets), else synthetic batches of IMDB-like
lengths. Compilation is excluded (every bucket is run once first).
"""

import argparse
import dataclasses
import time

import flax.linen as nn
import jax
import numpy as np

from attn_jax import config as config_lib
from attn_jax.data import batching, sources
from attn_jax.data.dataset import load_dataset
from attn_jax.models import build_model, masks
from attn_jax.models.model import Model
from attn_jax.training import optimizer as optimizer_lib, step as step_lib


class FlaxRNNBiLSTM(nn.Module):
  """The obvious Flax BiLSTM: per-step input projections, autodiff through scan."""
  hidden: int = 128

  @nn.compact
  def __call__(self, embedded, lengths, deterministic=True):
    del deterministic
    rnn = nn.Bidirectional(nn.RNN(nn.LSTMCell(self.hidden)), nn.RNN(nn.LSTMCell(self.hidden)))
    out = rnn(embedded, seq_lengths=lengths)
    return out * masks.sequence_mask(lengths, embedded.shape[1])[..., None].astype(out.dtype)


def make_batches(args):
  cfg = config_lib.default_config(args.dataset, 'bilstm')
  if sources.archive_dir(None):
    data = load_dataset(cfg.data)
    split, vocab_size = data.splits['train'], len(data.vocab)
    sequences, labels = split.sequences, split.labels
  else:
    rng = np.random.default_rng(0)
    lengths = np.clip(rng.gamma(2.0, 90.0, size=32 * args.batches), 8, 400).astype(int)
    vocab_size = 12000
    sequences = [np.r_[2, rng.integers(4, vocab_size, n), 3].astype(np.int32) for n in lengths]
    labels = rng.integers(0, 2, len(sequences))
  buckets = batching.bucket_lengths(max(len(s) for s in sequences))
  batches = batching.train_batches(sequences, labels, 32, buckets, 1.0, seed=0, epoch=0)
  return batches[:args.batches], vocab_size


def throughput(model, batches, repeats):
  tx = optimizer_lib.make_optimizer(config_lib.default_config('imdb', 'bilstm').train)
  state = step_lib.init_state(tx, model.init(jax.random.PRNGKey(0)))
  step = jax.jit(step_lib.make_train_step(model, tx))
  for width in sorted({b.tokens.shape[1] for b in batches}):  # compile every bucket first
    jax.block_until_ready(step(state, next(b for b in batches if b.tokens.shape[1] == width)))
  tokens = sum(int(b.lengths[b.index >= 0].sum()) for b in batches)
  best = float('inf')
  for _ in range(repeats):
    start = time.perf_counter()
    for b in batches:
      state, loss = step(state, b)
    jax.block_until_ready(loss)
    best = min(best, time.perf_counter() - start)
  return tokens / best, best / len(batches)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--dataset', default='imdb', choices=['sst', 'imdb', '20news'])
  parser.add_argument('--batches', type=int, default=40)
  parser.add_argument('--repeats', type=int, default=2)
  args = parser.parse_args()
  batches, vocab_size = make_batches(args)
  mean_len = np.mean([b.lengths[b.index >= 0].mean() for b in batches])
  print(f'{args.dataset}: {len(batches)} training batches of 32, mean length {mean_len:.0f} tokens, '
        f'{jax.device_count()} {jax.devices()[0].platform} device(s)')
  base_cfg = config_lib.default_config(args.dataset, 'bilstm').model
  baseline_model = build_model(base_cfg, vocab_size)
  baseline_model = Model(dataclasses.replace(baseline_model.module, encoder=FlaxRNNBiLSTM(128)),
                         baseline_model.project)
  base_rate, base_step = throughput(baseline_model, batches, args.repeats)
  print(f'{"encoder":<34}{"tokens/s":>10}{"ms/step":>10}{"vs baseline":>13}')
  print(f'{"bilstm (baseline: flax nn.RNN)":<34}{base_rate:>10.0f}{base_step * 1e3:>10.1f}{1.0:>12.2f}x')
  for encoder in ('bilstm', 'cnn', 'average', 'transformer'):
    cfg = config_lib.default_config(args.dataset, encoder).model
    rate, per_step = throughput(build_model(cfg, vocab_size), batches, args.repeats)
    print(f'{encoder:<34}{rate:>10.0f}{per_step * 1e3:>10.1f}{rate / base_rate:>12.2f}x')


if __name__ == '__main__':
  main()
