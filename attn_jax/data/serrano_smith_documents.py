"""Serrano & Smith's multi-class document data, as close as this machine allows (S&S §3, Table 1).

S&S's four datasets (Yahoo Answers, Diao et al.'s 10-class IMDB, Amazon,
Yelp) cannot be had offline. The closest here:

* `imdb_ratings` — aclImdb's star ratings (in the file names) as eight
  classes: 1, 2, 3, 4, 7, 8, 9, 10 stars (aclImdb has no 5s or 6s). A
  rating task over movie reviews, as S&S's IMDB (10 classes).
* `20news_topics` — 20 Newsgroups "bydate", all 20 groups: a topic task,
  as Yahoo Answers (10 topics). Headers, signatures and quoted replies are
  removed (scikit-learn's `remove=`), so the group is not in the text.

Both: lower-cased words (S&S App. A.1), sentences by `sentences`; the dev
split is a stratified 10 % of train (seed 5, S&S's test seed), test is the
original test split. The vocabulary is every word seen at least 5 times in
train and dev — S&S's word2vec vocabulary (min count 5 on train + dev).
Documents with fewer than two words are dropped (a single item has no
ranking), and so are the longest 0.5 % of 20 Newsgroups' posts by words
(uuencoded files and FAQ dumps of up to 40,000 words, which S&S's datasets
do not have); aclImdb keeps every review.
"""

from typing import Sequence

import numpy as np

from attn_jax.data import newsgroups_text, sentences, tokenize
from attn_jax.data.builders.newsgroups import GROUPS
from attn_jax.data.jain_wallace_protocol import Prepared, TokenizedSplit, _stratified_split
from attn_jax.core.errors import DataError

STARS = (1, 2, 3, 4, 7, 8, 9, 10)
STAR_CLASSES = tuple(f'{s} star' + ('s' if s > 1 else '') for s in STARS)
DEV_FRACTION, DEV_SEED = 0.1, 5
MIN_COUNT = 5
LONGEST_DROPPED = 0.005  # 20 Newsgroups: the longest 0.5 % of posts


def sentence_words(text: str) -> list[list[str]]:
  """A text's sentences, each as lower-cased words (punctuation kept as tokens)."""
  out = []
  for sentence in sentences.split_sentences(text):
    words = tokenize.lowercase_words(sentence)
    if words:
      out.append(words)
  return out


def _tokenized(records: list[dict], text, label, ids) -> TokenizedSplit:
  docs, lengths, labels, names = [], [], [], []
  for r in records:
    sents = sentence_words(text(r))
    words = [w for s in sents for w in s]
    if len(words) < 2:
      continue
    docs.append(words)
    lengths.append([len(s) for s in sents])
    labels.append(label(r))
    names.append(ids(r))
  return TokenizedSplit(docs, np.asarray(labels, dtype=np.int32), names, lengths)


def _with_dev(train_all: TokenizedSplit, test: TokenizedSplit, wanted: Sequence[str],
              classes: tuple[str, ...]) -> Prepared:
  dev_idx, train_idx = _stratified_split(train_all.labels, DEV_FRACTION, DEV_SEED)
  splits = {'train': train_all.subset(train_idx), 'dev': train_all.subset(dev_idx), 'test': test}
  vocab_docs = None
  if 'train' in wanted:
    vocab_docs = splits['train'].docs + splits['dev'].docs  # S&S: train + dev
  return Prepared({s: splits[s] for s in wanted}, vocab_docs, MIN_COUNT, classes, count_tokens=True)


def imdb_ratings(raw: dict[str, list[dict]], wanted: Sequence[str]) -> Prepared:
  """aclImdb reviews labelled by their star rating (8 classes, 0 = 1 star)."""
  label = {stars: i for i, stars in enumerate(STARS)}
  for split in ('train', 'test'):
    odd = sorted({r['rating'] for r in raw[split]} - set(STARS))
    if odd:
      raise DataError(f'aclImdb {split}: ratings {odd} are not among {STARS}; '
                      'is it the aclImdb v1.0 archive?')
  read = lambda split: _tokenized(raw[split], lambda r: r['text'], lambda r: label[r['rating']],
                                  lambda r: r['id'])
  return _with_dev(read('train'), read('test'), wanted, STAR_CLASSES)


def _without_longest(split: TokenizedSplit, limit: int) -> TokenizedSplit:
  return split.subset([i for i, d in enumerate(split.docs) if len(d) <= limit])


def newsgroups_topics(raw: dict[str, list[dict]], wanted: Sequence[str]) -> Prepared:
  """20 Newsgroups posts labelled by group (20 classes, `GROUPS` order)."""
  read = lambda split: _tokenized(raw[split], lambda r: newsgroups_text.strip_all(r['text']),
                                  lambda r: r['group'], lambda r: r['id'])
  train_all, test = read('train'), read('test')
  if len(set(train_all.labels.tolist())) < len(GROUPS):
    raise DataError('20 Newsgroups: the archive does not have posts of all 20 groups; '
                    'is it the 20news-bydate archive?')
  # The cut is the train split's own quantile, applied to both splits.
  limit = int(np.quantile([len(d) for d in train_all.docs], 1 - LONGEST_DROPPED))
  return _with_dev(_without_longest(train_all, limit), _without_longest(test, limit), wanted,
                   tuple(GROUPS))


def statistics(split_docs: Sequence[TokenizedSplit]) -> dict:
  """S&S Table 1's columns over the given splits: words and sentences per
  document (mean, s.d.) and the number of documents."""
  words = np.array([len(d) for s in split_docs for d in s.docs], dtype=np.float64)
  sents = np.array([len(x) for s in split_docs for x in s.sentence_lengths], dtype=np.float64)
  return {'documents': int(len(words)), 'words_mean': float(words.mean()),
          'words_sd': float(words.std()), 'sentences_mean': float(sents.mean()),
          'sentences_sd': float(sents.std())}
