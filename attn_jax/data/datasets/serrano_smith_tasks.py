"""S&S's multi-class document tasks on the files that are here
(`attn_jax.data.serrano_smith_documents`): aclImdb's star ratings and all 20 groups
of 20 Newsgroups, with sentences for the HAN; they read IMDB's and 20
Newsgroups' files."""

from attn_jax.core.registry import DATASETS
from attn_jax.data import serrano_smith_documents as serrano_smith
from attn_jax.data.datasets.dataset_spec import DatasetSpec
from attn_jax.data.builders.newsgroups import GROUPS


def _sentence_words(text: str) -> list[str]:
  return [w for s in serrano_smith.sentence_words(text) for w in s]


COMMON = dict(paper='ss', tokenizer=_sentence_words, hierarchical=True, held_out=('test',),
              corpus_sentences=serrano_smith.sentence_words)
IMDB_RATINGS = DATASETS.register(DatasetSpec(
    name='imdb_ratings', order=50, title='IMDB star ratings', raw='imdb',
    prepare=serrano_smith.imdb_ratings, classes=serrano_smith.STAR_CLASSES,
    held_out_raw=('test',), **COMMON))
NEWSGROUPS_TOPICS = DATASETS.register(DatasetSpec(
    name='20news_topics', order=60, title='20 Newsgroups topics', raw='20news',
    prepare=serrano_smith.newsgroups_topics, classes=GROUPS, **COMMON))
