"""S&S Table 1 for the data attn-jax has: words and sentences per document.

    python -m attn_jax.report ss-data --save results/ss_data     # measure, keep
    python -m attn_jax.report ss-data results/ss_data --readme docs/serrano_smith.md

Measures `imdb_ratings` and `20news_topics` as their protocols prepare them
(`attn_jax.data.serrano_smith_documents`; the files under $ATTN_JAX_DATA) and prints
them beside S&S's Table 1. With `--save` the numbers go to
`<save>/statistics.json`; given a folder, its saved numbers are shown
instead of measured, and the README block is made from that file.
"""

import os

from attn_jax.core import atomic_io
from attn_jax.core.registry import DATASETS
from attn_jax.data import builders, serrano_smith_documents as serrano_smith
from attn_jax.tables.common import plain, read_saved, root_of, with_notes, write_blocks
from attn_jax.tables.report_registry import COMMANDS, Command

# S&S Table 1: words (s.d.), sentences (s.d.), train + dev, test, classes.
PUBLISHED = {
    'Yahoo Answers': (104, 114, 6.2, 5.9, 1_400_000, 50_000, 10),
    'IMDB (Diao et al.)': (395, 259, 16.2, 10.7, 122_121, 13_548, 10),
    'Amazon': (73, 48, 4.3, 2.6, 3_000_000, 650_000, 5),
    'Yelp 2017': (125, 109, 7.0, 5.6, 650_000, 50_000, 5),
}


def measure(manual_dir=None, tfds_data_dir=None) -> dict:
  """{dataset: {'train_dev': statistics, 'test': statistics, 'classes': C}}."""
  out = {}
  for spec in DATASETS.of_paper('ss'):
    prepared = spec.prepare(builders.load_raw(spec.raw_name, manual_dir, tfds_data_dir),
                            ('train', 'dev', 'test'))
    out[spec.name] = {'train_dev': serrano_smith.statistics([prepared.splits['train'], prepared.splits['dev']]),
                 'test': serrano_smith.statistics([prepared.splits['test']]),
                 'classes': len(prepared.classes)}
  return out


def rows(stats: dict) -> list[list[str]]:
  table = [['dataset', 'words / doc (s.d.)', 'sentences / doc (s.d.)', 'train + dev', 'test', 'classes']]
  for name, s in stats.items():
    every = s['train_dev']
    table.append([f'{name} (measured, train + dev)', f'{every["words_mean"]:.0f} ({every["words_sd"]:.0f})',
                  f'{every["sentences_mean"]:.1f} ({every["sentences_sd"]:.1f})',
                  f'{every["documents"]:,}', f'{s["test"]["documents"]:,}', str(s['classes'])])
  for name, (w, wsd, n, nsd, train, test, classes) in PUBLISHED.items():
    table.append([f'S&S {name} (published)', f'{w} ({wsd})', f'{n} ({nsd})', f'{train:,}', f'{test:,}',
                  str(classes)])
  return table


def _command(parser, args, argv) -> None:
  del argv
  if len(args.runs) > 1:
    parser.error('ss-data takes one folder of saved statistics (or none: measure)')
  folder = args.runs[0] if args.runs else args.save
  if args.runs:
    stats = read_saved(os.path.join(folder, 'statistics.json'),
                       'a folder holding the statistics.json that `report ss-data --save DIR` wrote',
                       'or no folder, to measure S&S\'s data')
  else:
    stats = measure()
    if folder:
      atomic_io.write_json(os.path.join(folder, 'statistics.json'), stats)
  table = rows(stats)
  print(plain(table))
  if args.readme:
    if not folder:
      parser.error('--readme writes the table of saved statistics: give their folder (or --save)')
    source = os.path.relpath(folder, root_of(args.readme))
    write_blocks(args.readme, 'ss-table1', with_notes(table, []),
                 f'python -m attn_jax.report ss-data {source}', [f'{source}/statistics.json'])


COMMANDS.register(Command('ss-data', 46, '[--save results/ss_data]',
                          "S&S Table 1 (words, sentences per document) for aclImdb ratings and 20 Newsgroups",
                          _command))
