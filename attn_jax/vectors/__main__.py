"""Builds (or finds) the in-domain word vectors of one or more datasets.

    python -m attn_jax.vectors sst imdb 20news [--corpora=imdb,sst,20news,agnews]
        [--epochs=5] [--seed=0] [--sg=0|1] [--workers=1|N|auto] [--directory=DIR]
    python -m attn_jax.vectors all --workers=auto   # every dataset's, ahead of a first run

Each dataset gets its own file: vectors trained on every corpus's text except
that dataset's dev and test documents, for that dataset's vocabulary. The
files go to --directory, else $ATTN_JAX_VECTORS, else ~/.cache/attn_jax/vectors,
which is where `--config.model.embeddings_file=in_domain` looks. `--sg=1` trains
skip-gram (J&W's wiki.simple.vec recipe), `--sg=0` CBOW; the default is the
configs' (`vectors.sg`). `--workers` is `vectors.workers`: 1 (the default) gives
the bit-reproducible files every committed result used, `auto` every core
(faster, not bit-reproducible; runs then need `--config.vectors.workers=auto`
to find them). Each build first says how long it will take. Data come from
$ATTN_JAX_DATA (or --manual_dir), as for run.py.
"""

import argparse

from attn_jax import config as config_lib
from attn_jax.data.dataset import load_dataset
from attn_jax.core import errors
from attn_jax.core.errors import AttnJaxError
from attn_jax.core.registry import DATASETS
from attn_jax.vectors import build
from attn_jax.core import console, output_folders


def _count(text: str) -> int:
  try:
    return int(text)
  except ValueError:
    raise SystemExit(f"--workers={text!r}: give a number of threads or 'auto'") from None


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  # The datasets whose configs start from in-domain vectors.
  pretrained = tuple(d.name for d in DATASETS.values() if d.pretrained)
  parser.add_argument('datasets', nargs='+', choices=pretrained + ('all',))
  defaults = config_lib.default_config('sst', 'bilstm').vectors
  parser.add_argument('--corpora', default=defaults.corpora)
  parser.add_argument('--epochs', type=int, default=defaults.epochs)
  parser.add_argument('--seed', type=int, default=defaults.seed)
  parser.add_argument('--sg', type=int, choices=[0, 1], default=defaults.sg)
  parser.add_argument('--workers', default='1', help="gensim threads: a number or 'auto'")
  parser.add_argument('--directory', default=None)
  parser.add_argument('--manual_dir', default=None)
  args = parser.parse_args(argv)
  datasets = pretrained if 'all' in args.datasets else tuple(dict.fromkeys(args.datasets))
  try:
    for dataset in datasets:
      cfg = config_lib.default_config(dataset, 'bilstm')
      cfg.vectors.update(corpora=args.corpora, epochs=args.epochs, seed=args.seed, sg=args.sg,
                         directory=args.directory,
                         workers=args.workers if args.workers == 'auto' else _count(args.workers))
      config_lib.validate(cfg)
      cfg.data.manual_dir = args.manual_dir
      vocab = load_dataset(cfg.data).vocab
      with output_folders.writing_into(build.cache_directory(args.directory), '--directory'):
        path = build.ensure_vectors(cfg, vocab)
      info = build.describe(path)
      print(f'{dataset}: {path}\n  {info["words_with_vectors"]} of {info["vocabulary_words"]} '
            f'vocabulary words ({info["coverage"]:.1%}); corpus {info["corpus_tokens"]} tokens: '
            + ', '.join(f'{k} {v["documents"]} docs' for k, v in info['corpus'].items()))
  except AttnJaxError as e:
    errors.exit_with(e)
  except KeyboardInterrupt:
    errors.exit_interrupted('vectors already built are kept (a build is written whole or not at all); '
                            'rerun the same command to build the rest')


if __name__ == '__main__':
  console.run(main)
