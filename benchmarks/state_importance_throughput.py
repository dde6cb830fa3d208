"""Throughput of g_{h_p}(x) (Meister et al. eq. 5), the costliest measure here.

    python benchmarks/state_importance_throughput.py --dataset=sst --docs=1725 --workdir=runs/wp_sst --out=results/benchmarks/state_importance_sst.json
    python benchmarks/state_importance_throughput.py --dataset=imdb --docs=256 --workdir=runs/wp_imdb \\
        --out=results/benchmarks/state_importance_imdb.json

`state_gradient_entropy` (what the `state_importance` stage runs) over the
first `--docs` test documents in the stage's length-bucketed batches: one
backward pass per word position p of every document, `--chunk` at a time.
Prints documents/s (compilation excluded: every batch shape is compiled
first, and that time is reported apart), the process's peak RSS and XLA's
peak temporary buffer per batch, the BiLSTM's FLOPs per document (counted
from its shapes: XLA's cost analysis counts the body of a loop — the
recurrence, the map over chunks of positions — once, so its figure is shown
only for reference), this CPU's f32 matmul rate measured in the same run, and
the fraction of it reached. Weights do not change the cost: without
`--workdir` the config's fresh parameters are used.
"""

import argparse
import json
import os
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import machine  # pylint: disable=g-import-not-at-top,wrong-import-position
from attn_jax import config as config_lib
from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
from attn_jax.analysis.importance_measures import state_gradient_entropy
from attn_jax.data.batching import bucket_lengths, eval_batches
from attn_jax.data.dataset import load_dataset
from attn_jax.models import build_model
from attn_jax.workdirs.restore import restore


def bilstm_flops(width: int, positions: int, embed: int, hidden: int) -> float:
  """Multiply-adds ×2 of the BiLSTM for one document padded to `width`: its
  forward pass (input and recurrent projections, both directions) once, and
  a backward pass (≈ twice the forward) per position p of `positions`."""
  forward = width * 2 * 2 * 4 * hidden * (embed + hidden)
  return forward * (1 + 2 * positions)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--dataset', default='sst', choices=['sst', 'imdb', '20news'])
  parser.add_argument('--encoder', default='bilstm', choices=['bilstm', 'transformer'])
  parser.add_argument('--workdir', help='a trained run (default: fresh parameters of the config)')
  parser.add_argument('--docs', type=int, default=512, help='first N test documents')
  parser.add_argument('--batch_size', type=int, default=32)
  parser.add_argument('--chunk', type=int, default=16)
  parser.add_argument('--out', help='write the result JSON here')
  args = parser.parse_args(argv)

  cfg = config_lib.default_config(args.dataset, args.encoder)
  dataset = load_dataset(cfg.data)
  if args.workdir:
    restored = restore(args.workdir)
    model, params = restored.model, restored.params
  else:
    model = build_model(cfg.model, len(dataset.vocab))
    params = model.init(jax.random.PRNGKey(0))
  test = dataset.splits['test']
  sequences, labels = test.sequences[:args.docs], test.labels[:args.docs]
  width = max(len(s) for s in sequences)
  batches = list(eval_batches(sequences, labels, args.batch_size,
                              bucket_lengths(width, cfg.analysis.bucket_growth)))
  fn = jax.jit(lambda p, t, l: state_gradient_entropy(model, p, t, l, chunk=args.chunk))

  started = time.perf_counter()
  compiled, flops, xla_flops, temp = {}, 0.0, 0.0, 0
  m = cfg.model
  for batch in batches:
    shape = batch.tokens.shape
    if shape not in compiled:
      compiled[shape] = fn.lower(params, batch.tokens, batch.lengths).compile()
      memory = compiled[shape].memory_analysis()
      temp = max(temp, getattr(memory, 'temp_size_in_bytes', 0) or 0)
    cost = compiled[shape].cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    xla_flops += float(cost.get('flops', 0.0))
    real = int(np.sum(batch.index >= 0))
    chunks = -(-shape[1] // args.chunk) * args.chunk  # positions computed, padding included
    flops += real * bilstm_flops(shape[1], chunks, m.embed_dim, m.hidden_dim)
  compile_seconds = time.perf_counter() - started

  started = time.perf_counter()
  for batch in batches:
    compiled[batch.tokens.shape](params, batch.tokens, batch.lengths).block_until_ready()
  seconds = time.perf_counter() - started
  docs = len(sequences)
  peak = machine.matmul_peak()
  words = np.array([len(s) - 2 for s in sequences])
  result = {
      'dataset': args.dataset, 'encoder': args.encoder, 'documents': docs,
      'mean_words': float(words.mean()), 'max_length': int(width), 'batch_size': args.batch_size,
      'chunk': args.chunk, 'trained_weights': bool(args.workdir), 'seconds': round(seconds, 2),
      'compile_seconds': round(compile_seconds, 2), 'docs_per_second': round(docs / seconds, 2),
      'flops_per_document': flops / docs if args.encoder == 'bilstm' else None,
      'xla_cost_analysis_flops_per_document': xla_flops / docs,
      'achieved_gflops': flops / seconds / 1e9 if args.encoder == 'bilstm' else None,
      'matmul_peak_gflops': peak / 1e9,
      'fraction_of_peak': flops / seconds / peak if args.encoder == 'bilstm' else None,
      'peak_rss_mb': round(machine.rss_mb(peak=True), 1),
      'peak_temp_buffer_mb': round(temp / 2 ** 20, 1), 'jax': jax.__version__,
      'device': jax.devices()[0].device_kind}
  print(json.dumps(result, indent=1))
  if args.out:
    atomic_io.write_json(args.out, result)


if __name__ == '__main__':
  main()
