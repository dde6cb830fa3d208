"""How fast the in-domain word vectors train, by gensim worker threads.

    python benchmarks/vector_build.py --dataset=sst [--workers=1,2] [--epochs=1]
        [--out=results/benchmarks/vector_build_sst.json]
    python benchmarks/vector_build.py --dataset=sst --save-corpus=sst.corpus   # for another host
    python benchmarks/vector_build.py --corpus=sst.corpus --workers=1,4,8,16 --out=...

Trains the dataset's vectors recipe (`config.vectors`, the configs' default:
fastText CBOW, 300-d, n-grams 3-6) for `--epochs` epochs once per worker
count, each in the same pinned-BLAS child process a real build uses
(`attn_jax/vectors/fasttext.py`), on the corpus a real build writes
(`attn_jax/vectors/corpus.py`: every source's text, the target's held-out
text left out). Records per worker count the wall time (child start,
vocabulary scan, training), the training seconds per epoch and the corpus
tokens trained per second — the rate a first run's estimate is made from.
`--save-corpus` writes that corpus and stops, so a host without the datasets
(a lent GPU machine) can be measured on the same text with `--corpus`.
"""

import argparse
import os
import platform
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from attn_jax import config as config_lib  # pylint: disable=wrong-import-position
from attn_jax.core import atomic_io, estimates  # pylint: disable=wrong-import-position
from attn_jax.vectors import build, fasttext  # pylint: disable=wrong-import-position


def write_corpus(dataset: str, path: str) -> dict:
  """Writes `dataset`'s default vectors corpus to `path`; returns its counts."""
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  cfg = config_lib.default_config(dataset, 'bilstm')
  with open(path, 'w', encoding='utf-8') as f:
    counts = build.write_corpus(cfg, load_dataset(cfg.data).vocab, f)
  return {'corpus': counts, 'corpus_tokens': sum(c['tokens'] for c in counts.values())}


def corpus_tokens(path: str) -> int:
  with open(path, encoding='utf-8') as f:
    return sum(len(line.split()) for line in f)


def measure(path: str, tokens: int, recipe: dict, dim: int, workers: int) -> dict:
  """One child build of `recipe` on `path` with `workers` threads."""
  epochs = []
  started = time.perf_counter()
  _, environment = fasttext.train(path, dim, recipe, lambda done, s: epochs.append(s), words=[],
                                  workers=workers)
  wall = time.perf_counter() - started
  per_epoch = [b - a for a, b in zip([0.0] + epochs[:-1], epochs)]
  training = epochs[-1] if epochs else float('nan')
  row = {'workers': workers, 'wall_seconds': round(wall, 2), 'training_seconds': round(training, 2),
         'other_seconds': round(wall - training, 2),  # child start, imports, vocabulary scan
         'epoch_seconds': [round(s, 2) for s in per_epoch],
         'tokens_per_second': round(tokens * len(epochs) / training), 'environment': environment}
  print(f'{workers:>3} workers: {training:7.1f} s for {len(epochs)} epoch(s) '
        f'({row["tokens_per_second"]:,} tokens/s), {row["other_seconds"]:.1f} s besides', flush=True)
  return row


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--dataset', default='sst', choices=['sst', 'imdb', '20news'],
                      help='whose vectors recipe (and corpus, unless --corpus) to train')
  parser.add_argument('--corpus', help='a corpus written by --save-corpus')
  parser.add_argument('--save-corpus', help='write the corpus here and stop')
  parser.add_argument('--workers', default='1,2', help='comma-separated worker counts')
  parser.add_argument('--epochs', type=int, default=1, help='epochs per measurement')
  parser.add_argument('--out', help='JSON file for the measurements')
  args = parser.parse_args(argv)
  if args.save_corpus:
    counts = write_corpus(args.dataset, args.save_corpus)
    print(f'{args.save_corpus}: {counts["corpus_tokens"]:,} tokens')
    return
  cfg = config_lib.default_config(args.dataset, 'bilstm')
  recipe = dict(build.recipe(cfg), epochs=args.epochs)
  with tempfile.TemporaryDirectory() as folder:
    path = args.corpus or os.path.join(folder, 'vectors.corpus')
    counts = {} if args.corpus else write_corpus(args.dataset, path)
    tokens = counts.get('corpus_tokens') or corpus_tokens(path)
    print(f'{args.dataset} vectors recipe, {tokens:,} corpus tokens, {args.epochs} epoch(s), '
          f'{os.cpu_count()} CPUs', flush=True)
    rows = []
    for workers in (int(w) for w in args.workers.split(',')):
      rows.append(measure(path, tokens, recipe, cfg.model.embed_dim, workers))
      if args.out:  # each measurement kept as it lands: a host's time may run out
        atomic_io.write_json(args.out, result(args, recipe, tokens, rows))
  base = rows[0]['tokens_per_second']
  for row in rows[1:]:
    print(f'{row["workers"]} workers: {row["tokens_per_second"] / base:.2f}x '
          f'{rows[0]["workers"]} worker(s)')


def result(args, recipe: dict, tokens: int, rows: list) -> dict:
  return {'command': 'python benchmarks/vector_build.py ' + ' '.join(sys.argv[1:]),
          'dataset': args.dataset, 'recipe': recipe, 'corpus_tokens': tokens,
          'cpus': os.cpu_count(), 'processor': platform.processor() or platform.machine(),
          'rows': rows, 'rates': rates(recipe, rows, estimates.machine())}


def rates(recipe: dict, rows: list, host: str) -> dict:
  """Each row's tokens per second under the key a build of `recipe` with
  that many threads looks up (`build.rate_key`), for `host` (`estimates.machine()`)."""
  return {host: {build.rate_key({**recipe, 'workers': row['workers']}):
                 {'rate': row['tokens_per_second'], 'unit': 'corpus tokens/s'} for row in rows}}


if __name__ == '__main__':
  main()
