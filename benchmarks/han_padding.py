"""How much of a HAN batch is padding: real words against padded word slots.

    python benchmarks/han_padding.py [--dataset=imdb_ratings] [--out=results/benchmarks/han_padding.json]

A HAN batch is documents × sentences × words (`attn_jax/data/hierarchical.py`):
every sentence of a document is padded to the batch's longest sentence
(bucketed), every document to the batch's most sentences. The word-level
encoder runs over every slot, so its cost scales with the slots, not with the
words. Prints, for one epoch of S&S's training batches (batch 64, at most
`data.max_batch_tokens` slots): real words, padded word slots and their ratio,
real sentences against sentence rows, and the same ratio for FLAN's flat
batches of the same documents (padded to the bucketed document length).
Host-side only: no model runs.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from attn_jax.config.serrano_smith_config import ss_config  # pylint: disable=wrong-import-position
from attn_jax.core import atomic_io  # pylint: disable=wrong-import-position
from attn_jax.data import split_batches  # pylint: disable=wrong-import-position
from attn_jax.data.dataset import load_dataset  # pylint: disable=wrong-import-position


def padding(dataset: str) -> dict:
  cfg = ss_config(dataset, 'han', 'rnn')
  data = load_dataset(cfg.data)
  splits = list(data.splits.values())
  train = data.splits['train']
  han = split_batches.bucketing(splits, cfg.data.bucket_growth, cfg.data.max_batch_tokens, True)
  batches = split_batches.train_batches(train, cfg.train.batch_size, han, 1.0, seed=0, epoch=0)
  real = lambda b: b.index >= 0
  words = sum(int(b.lengths[real(b)].sum()) for b in batches)
  slots = sum(int(b.tokens.size) for b in batches)
  sentences = sum(int((b.lengths[real(b)] > 0).sum()) for b in batches)
  rows = sum(int(b.tokens.shape[0] * b.tokens.shape[1]) for b in batches)
  flat = split_batches.bucketing(splits, cfg.data.bucket_growth, cfg.data.max_batch_tokens, False)
  flat_batches = split_batches.train_batches(train, cfg.train.batch_size, flat, 1.0, seed=0, epoch=0)
  flat_tokens = sum(int(b.lengths[real(b)].sum()) for b in flat_batches)
  flat_slots = sum(int(b.tokens.size) for b in flat_batches)
  return {'dataset': dataset, 'documents': len(train), 'han_batches': len(batches),
          'han_shapes': len({b.tokens.shape for b in batches}),
          'real_words': words, 'han_word_slots': slots, 'han_slots_per_word': round(slots / words, 3),
          'real_sentences': sentences, 'han_sentence_rows': rows,
          'han_rows_per_sentence': round(rows / sentences, 3),
          'flat_tokens': flat_tokens, 'flat_slots': flat_slots,
          'flat_slots_per_token': round(flat_slots / flat_tokens, 3)}


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--dataset', action='append', choices=['imdb_ratings', '20news_topics'])
  parser.add_argument('--out', default=None, help='write the rows to this JSON file')
  args = parser.parse_args()
  rows = [padding(d) for d in (args.dataset or ['imdb_ratings', '20news_topics'])]
  print(f'{"dataset":<15}{"words":>11}{"HAN slots":>12}{"×":>7}{"sentences":>11}{"rows":>9}{"×":>7}'
        f'{"flat slots":>12}{"×":>7}')
  for r in rows:
    print(f'{r["dataset"]:<15}{r["real_words"]:>11}{r["han_word_slots"]:>12}{r["han_slots_per_word"]:>7.2f}'
          f'{r["real_sentences"]:>11}{r["han_sentence_rows"]:>9}{r["han_rows_per_sentence"]:>7.2f}'
          f'{r["flat_slots"]:>12}{r["flat_slots_per_token"]:>7.2f}')
  if args.out:
    atomic_io.write_json(args.out, {'rows': rows, 'command': ' '.join(['python'] + sys.argv)})
    print(f'-> {args.out}')


if __name__ == '__main__':
  main()
