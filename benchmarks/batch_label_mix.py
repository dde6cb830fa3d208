"""How mixed the labels of attn-jax's training batches are, with equal noisy
lengths in the split's order ('stable', attn-jax before 2026-11-26) or at
random ('random', as J&W's unstable sort leaves them): per dataset, the spread
(standard deviation) of the positive fraction over one epoch's batches and the
share of batches holding one class.

    python benchmarks/batch_label_mix.py --out=results/jw_reference/diagnostics/batch_label_mix.json
"""

import argparse
import json

import numpy as np

from attn_jax import config as config_lib
from attn_jax.data import batching
from attn_jax.data.dataset import load_dataset


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--out', default=None)
  args = parser.parse_args()
  found = {}
  for dataset in ('sst', '20news', 'imdb'):
    cfg = config_lib.default_config(dataset, 'bilstm')
    data = load_dataset(cfg.data)
    seqs, labels = data.splits['train'].sequences, data.splits['train'].labels
    buckets = batching.bucket_lengths(max(len(s) for s in seqs))
    for ties in batching.TIES:
      batches = batching.train_batches(seqs, labels, 32, buckets, data.pos_weight, 0, 0, ties=ties)
      fractions = np.array([b.labels[b.index >= 0].mean() for b in batches])
      found.setdefault(dataset, {})[ties] = {
          'batches': len(batches), 'positive_fraction_spread': round(float(fractions.std()), 3),
          'one_class_share': round(float(np.mean((fractions == 0) | (fractions == 1))), 3)}
      print(dataset, ties, found[dataset][ties])
  if args.out:
    with open(args.out, 'w') as f:
      json.dump(found, f, indent=1)


if __name__ == '__main__':
  main()
