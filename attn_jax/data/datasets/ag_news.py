"""AG News (Zhang et al. 2015), World vs Business, as J&W prepare it (`preprocess/ag_news/AGNews.ipynb`).
Only test.csv is distributed beside the project: training needs train.csv."""

import os

from attn_jax.core.registry import DATASETS
from attn_jax.data import jain_wallace_protocol as jain_wallace, tokenize
from attn_jax.data.builders.ag_news import AgNewsCsv
from attn_jax.data.datasets.dataset_spec import DatasetSpec
from attn_jax.data.sources import KnownFile, Source

# The CSVs as torchtext fetches them (Zhang et al.'s own copy sits behind a
# Google Drive confirmation page).
URL = 'https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/{}.csv'


def _builder(files, data_dir):
  config = 'test_only' if files is not None and 'train' not in files else 'train_test'
  return AgNewsCsv(files=files, data_dir=data_dir, file_format='array_record', config=config)


AG_NEWS = DATASETS.register(DatasetSpec(
    name='agnews', paper='jw', order=40, title='AG News CSV',
    prepare=jain_wallace.ag_news, tokenizer=tokenize.spacy_like,
    source=Source('AG News CSV', 'ag_news', {s: (f'{s}.csv.gz', f'{s}.csv') for s in ('train', 'test')},
                  frozenset({'train'}), URL.format('{train,test}'),
                  lambda dl: {s: os.fspath(dl.download(URL.format(s))) for s in ('train', 'test')}),
    reference={  # ../shared/data/ag_news/SOURCE.md; no copy of train.csv was available to checksum
        'test': (KnownFile('test.csv.gz', 748824,
                           '3c277beb6ce3dd635407635cb90a7c5ceaf87168fabb3be218e39aa2b097f706'),
                 KnownFile('test.csv', 1857427,
                           '521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699')),
    },
    builder=_builder, held_out_raw=('test',),
    corpus_text=lambda r: f'{r["title"]}\n{r["description"]}'))
