"""Every dataset a config can name: which raw files it reads and how it
turns them into tokenised, labelled splits.

J&W's binary protocols read their own raw dataset (`jain_wallace`); S&S's
multi-class ones read another's raw files (`serrano_smith`): aclImdb's
ratings, 20 Newsgroups' 20 groups.
"""

import dataclasses
from typing import Callable

from attn_jax.data import jain_wallace, serrano_smith


@dataclasses.dataclass(frozen=True)
class Protocol:
  raw: str                 # the `builders` dataset whose files it reads
  prepare: Callable        # (raw records by split, wanted splits) -> jain_wallace.Prepared
  tokenizer: Callable      # text -> words, as the protocol tokenises a document
  hierarchical: bool = False  # documents come with sentences (S&S's HAN)
  # Splits whose text in-domain vectors never see: J&W's rule is dev and
  # test; S&S trained word2vec on train + dev.
  held_out: tuple[str, ...] = ('dev', 'test')


def _sentence_words(text: str) -> list[str]:
  return [w for s in serrano_smith.sentence_words(text) for w in s]


PROTOCOLS = {
    **{name: Protocol(name, prepare, jain_wallace.TOKENIZERS[name])
       for name, prepare in jain_wallace.PROTOCOLS.items()},
    'imdb_ratings': Protocol('imdb', serrano_smith.imdb_ratings, _sentence_words, True, ('test',)),
    '20news_topics': Protocol('20news', serrano_smith.newsgroups_topics, _sentence_words, True,
                              ('test',)),
}
TOKENIZERS = {**{n: p.tokenizer for n, p in PROTOCOLS.items()},
              'synthetic': jain_wallace.TOKENIZERS['synthetic']}
# Number of classes of each dataset (binary unless its protocol says otherwise).
NUM_CLASSES = {'imdb_ratings': len(serrano_smith.STARS), '20news_topics': 20}


def num_classes(dataset: str) -> int:
  return NUM_CLASSES.get(dataset, 2)
