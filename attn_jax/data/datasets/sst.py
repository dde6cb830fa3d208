"""Binary SST (Socher et al. 2013) as J&W prepare it: PTB trees, neutral
sentences dropped, 5 < words (J&W's `preprocess/SST/SST.ipynb`)."""

import os

from attn_jax.core.registry import DATASETS
from attn_jax.data import jain_wallace_protocol as jain_wallace, tokenize
from attn_jax.data.builders.sst import SstTrees
from attn_jax.data.datasets.dataset_spec import DatasetSpec
from attn_jax.data.sources import KnownFile, Source

URL = 'https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip'
SPLITS = ('train', 'dev', 'test')


def _download(dl) -> dict[str, str]:
  root = dl.download_and_extract(URL)
  return {s: os.fspath(root / 'trees' / f'{s}.txt') for s in SPLITS}


SST = DATASETS.register(DatasetSpec(
    name='sst', paper='jw', order=10, title='SST PTB trees',
    prepare=jain_wallace.sst, tokenizer=tokenize.sst,
    source=Source('SST PTB trees', 'sst', {s: (f'{s}.txt',) for s in SPLITS}, frozenset(), URL,
                  _download),
    reference={  # ../shared/data/sst/SOURCE.md
        'train': (KnownFile('train.txt', 2160058,
                            'e2f3f41b0b1e6d4dddc0effe3bfc2d27ed8928079aa9a03d652311614fc5feb7'),),
        'dev': (KnownFile('dev.txt', 280825,
                          '0e9336aed6e4730e19f58d00a77b3f0297efdb755f7b5e598c98a05e3f97ea40'),),
        'test': (KnownFile('test.txt', 559614,
                           '6e54806dee95cf80cd918e7dfb3f6770f6df24bf826f289a4d1f709e1c8f6761'),),
    },
    builder=lambda files, data_dir: SstTrees(files=files, data_dir=data_dir, file_format='array_record'),
    held_out_raw=('dev', 'test'), corpus_text=lambda r: r['text'],
    pretrained=True, embed_init_std=0.1))
