"""Documents/s of gradient importance and of the adversarial search by
analysis batch size, and of leave-one-out by `docs_per_chunk`, on a trained
run's test documents (compilation excluded: one batch of every width runs
first).

    python benchmarks/analysis_batch_size.py --workdir=runs/sst_bilstm [--sample=N] \\
        [--batch-sizes=32,64,128] [--chunks=1,4,16,32] [--adversarial-batch-sizes=32,128,512]
"""

import argparse
import json
import os
import sys
import time

import jax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import machine  # pylint: disable=g-import-not-at-top,wrong-import-position
import peers  # pylint: disable=g-import-not-at-top,wrong-import-position
from attn_jax.analysis import gradients, loo  # pylint: disable=wrong-import-position
from attn_jax.data import batching  # pylint: disable=wrong-import-position
from attn_jax.data.dataset import load_dataset  # pylint: disable=wrong-import-position
from attn_jax.workdirs.restore import restore  # pylint: disable=wrong-import-position
from attn_jax.stages import adversarial  # pylint: disable=wrong-import-position


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--workdir', required=True)
  parser.add_argument('--sample', type=int, default=None)
  parser.add_argument('--batch-sizes', default='32,64,128')
  parser.add_argument('--chunks', default='1,4,16,32')
  parser.add_argument('--adversarial-batch-sizes', default='32,128,512')
  args = parser.parse_args()
  run = restore(args.workdir)
  model, params = run.model, run.params
  test = load_dataset(run.config.data).splits['test']
  docs = machine.length_blocks(test.lengths, args.sample, 32)
  sequences = [test.sequences[i] for i in docs]
  buckets = batching.bucket_lengths(max(len(s) for s in sequences), run.config.analysis.bucket_growth)

  def rate(batch_size, fn):
    batches = list(batching.eval_batches(sequences, test.labels[docs], batch_size, buckets))
    for b in peers.first_of_each_width(batches):
      jax.block_until_ready(fn(b))
    started = time.perf_counter()
    for b in batches:
      jax.block_until_ready(fn(b))
    return round(len(docs) / (time.perf_counter() - started), 1)

  result = {'workdir': args.workdir, 'documents': len(docs), 'gradient_by_batch_size': {},
            'loo_by_docs_per_chunk_at_batch_32': {}, 'adversarial_by_batch_size': {}}
  grad = jax.jit(lambda p, t, l: gradients.gradient_importance(model, p, t, l))
  for size in [int(x) for x in args.batch_sizes.split(',') if x]:
    result['gradient_by_batch_size'][size] = rate(size, lambda b: grad(params, b.tokens, b.lengths))
  for chunk in [int(x) for x in args.chunks.split(',') if x]:
    fn = jax.jit(lambda p, t, l, c=chunk: loo.leave_one_out(model, p, t, l, docs_per_chunk=c).importance)
    result['loo_by_docs_per_chunk_at_batch_32'][chunk] = rate(32, lambda b: fn(params, b.tokens, b.lengths))
  search = jax.jit(adversarial._adversarial_fn(model, run.config.analysis.adversarial))  # pylint: disable=protected-access
  key = jax.random.PRNGKey(0)
  for size in [int(x) for x in args.adversarial_batch_sizes.split(',') if x]:
    keys = jax.random.split(key, size)
    result['adversarial_by_batch_size'][size] = rate(
        size, lambda b, k=keys: search(params, b.tokens, b.lengths, k))
  print(json.dumps(result, indent=1))


if __name__ == '__main__':
  main()
