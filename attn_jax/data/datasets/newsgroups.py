"""20 Newsgroups "bydate", baseball vs hockey, as J&W prepare it (`preprocess/20News/20News.ipynb`)."""

import os

from attn_jax.core.registry import DATASETS
from attn_jax.data import jain_wallace_protocol as jain_wallace, newsgroups_text, tokenize
from attn_jax.data.builders.newsgroups import Newsgroups20Bydate
from attn_jax.data.datasets.dataset_spec import DatasetSpec
from attn_jax.data.sources import KnownFile, Source

URL = 'http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz'

NEWSGROUPS = DATASETS.register(DatasetSpec(
    name='20news', paper='jw', order=30, title='20 Newsgroups (bydate)',
    prepare=jain_wallace.newsgroups, tokenizer=jain_wallace.newsgroups_words,
    source=Source('20 Newsgroups (bydate)', '20news',
                  {'archive': ('20news-bydate_train_test.tar.gz', '20news-bydate.tar.gz')},
                  frozenset(), URL, lambda dl: {'archive': os.fspath(dl.download(URL))}),
    reference={  # ../shared/data/20news/SOURCE.md
        'archive': (KnownFile('20news-bydate_train_test.tar.gz', 14387660,
                              '933dedc591812ba17499841c10ab324d60e093c42800008423b1148ec3474bf8'),),
    },
    builder=lambda files, data_dir: Newsgroups20Bydate(files=files, data_dir=data_dir,
                                                       file_format='array_record'),
    # Headers, signatures and quotes go before the corpus sees a post; the
    # corpus of a 20news target is tokenised without that stripping.
    corpus_text=lambda r: newsgroups_text.strip_all(r['text']), corpus_tokenizer=tokenize.newsgroups,
    pretrained=True, embed_init_std=0.1))
