"""IMDB (Maas et al. 2011, aclImdb) as J&W prepare it: reviews under 400
words, 80/20 train/dev, a 20 % sample of test (J&W's `preprocess/IMDB/IMDB.ipynb`)."""

import os

from attn_jax.core.registry import DATASETS
from attn_jax.data import jain_wallace_protocol as jain_wallace, tokenize
from attn_jax.data.builders.imdb import AclImdb
from attn_jax.data.datasets.dataset_spec import DatasetSpec
from attn_jax.data.sources import KnownFile, Source

URL = 'https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz'

IMDB = DATASETS.register(DatasetSpec(
    name='imdb', paper='jw', order=20, title='IMDB (aclImdb)',
    prepare=jain_wallace.imdb, tokenizer=tokenize.keras_words,
    source=Source('IMDB (aclImdb)', 'imdb',
                  {'archive': ('aclImdb_train_test.tar.gz', 'aclImdb_v1.tar.gz')}, frozenset(), URL,
                  lambda dl: {'archive': os.fspath(dl.download(URL))}),
    reference={  # ../shared/data/imdb/SOURCE.md; aclImdb_v1.tar.gz: tfds imdb_reviews/checksums.tsv
        'archive': (KnownFile('aclImdb_train_test.tar.gz', 28631016,
                              '3c27c84c5b647935a2b44ee9c5b3fc302d26b6d268caf4c6a360aa7cb1f5fce7'),
                    KnownFile('aclImdb_v1.tar.gz', 84125825,
                              'c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe')),
    },
    builder=lambda files, data_dir: AclImdb(files=files, data_dir=data_dir, file_format='array_record'),
    held_out_raw=('test',), corpus_text=lambda r: r['text'], pretrained=True, embed_init_std=1.0))
