"""Jain & Wallace's binary classification data protocol (J&W's code,
`successar/AttentionExplanation`: `preprocess/*/*.ipynb`, `preprocess/vectorizer.py`,
`Trainers/DatasetBC.py`).

Each function maps the raw records of `builders.load_raw` to tokenised,
labelled splits exactly as J&W's preprocessing notebooks and
`filterbylength` do, plus the documents J&W fit the vocabulary on (the train
split *before* the length filter). Random splits use numpy's legacy
`RandomState`, whose streams are frozen across numpy versions, with J&W's
seeds and scikit-learn's rounding of split sizes; the members differ from
what `train_test_split` (not a dependency) picks, the sizes do not.
"""

import dataclasses
import math
from typing import Callable, Optional, Sequence

import numpy as np

from attn_jax.data import newsgroups_text, tokenize
from attn_jax.data.builders.newsgroups import GROUPS
from attn_jax.core.errors import DataError


@dataclasses.dataclass(frozen=True)
class TokenizedSplit:
  docs: list[list[str]]
  labels: np.ndarray  # [N] int32: 0 or 1 (J&W), 0 .. C - 1 (multi-class protocols)
  ids: list[str]      # provenance of each document in the original files
  # Hierarchical protocols (S&S's HAN): the words of each sentence of each
  # document, in order, summing to len(docs[i]); None: no sentences.
  sentence_lengths: Optional[list[list[int]]] = None
  # Paired protocols (QA, NLI): each document's query (a question, a
  # hypothesis) as words; None: single texts.
  queries: Optional[list[list[str]]] = None
  # Known evidence (bAbI's supporting facts): the positions, in docs[i], of
  # the words that support the label; None: not known.
  evidence: Optional[list[list[int]]] = None

  def __len__(self):
    return len(self.docs)

  def subset(self, index: Sequence[int]) -> 'TokenizedSplit':
    def pick(values):
      return None if values is None else [values[i] for i in index]
    return TokenizedSplit([self.docs[i] for i in index],
                          self.labels[np.asarray(index, dtype=np.int64)],
                          [self.ids[i] for i in index], pick(self.sentence_lengths),
                          pick(self.queries), pick(self.evidence))


@dataclasses.dataclass(frozen=True)
class Prepared:
  splits: dict[str, TokenizedSplit]
  vocab_docs: Optional[list[list[str]]]  # None when no train split was asked for
  min_df: int                             # J&W's vocabulary document frequency
  # The class names, by label; binary protocols are (negative, positive).
  classes: tuple[str, ...] = ('neg', 'pos')
  # Count occurrences, not documents, for the vocabulary's threshold (S&S's
  # word2vec vocabulary: words seen `min_df` times).
  count_tokens: bool = False


def length_filter(split: TokenizedSplit, min_n: Optional[int], max_n: Optional[int]) -> TokenizedSplit:
  """Keeps documents with `min_n < n < max_n` real tokens (J&W `filterbylength`).

  Both bounds are strict; a bound of None is the split's own min / max, so
  the shortest and the longest documents are dropped.
  """
  n = np.array([len(d) for d in split.docs], dtype=np.int64)
  if not len(n):
    return split
  lo = n.min() if min_n is None else min_n
  hi = n.max() if max_n is None else max_n
  return split.subset(np.flatnonzero((n > lo) & (n < hi)))


def _part_size(n: int, fraction: float, rounding: str) -> int:
  """scikit-learn's `train_test_split` sizes: a `test_size` fraction is
  rounded up, a `train_size` fraction down."""
  return int(math.ceil(fraction * n) if rounding == 'up' else math.floor(fraction * n))


def split_indices(n: int, fraction: float, rounding: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
  """A seeded shuffle of range(n) cut into a `fraction` part and the rest."""
  order = np.random.RandomState(seed).permutation(n)
  cut = _part_size(n, fraction, rounding)
  return np.sort(order[:cut]), np.sort(order[cut:])


def _stratified_split(labels: np.ndarray, fraction: float, seed: int):
  """A `fraction` part (size rounded up, as a `test_size`) whose class counts
  are proportional to the classes' (largest remainders get the leftovers),
  and the rest."""
  classes, counts = np.unique(labels, return_counts=True)
  total = _part_size(len(labels), fraction, 'up')
  exact = counts * total / len(labels)
  take = np.floor(exact).astype(int)
  for i in np.argsort(-(exact - take), kind='stable')[:total - take.sum()]:
    take[i] += 1
  rng = np.random.RandomState(seed)
  first, rest = [], []
  for label, k in zip(classes, take):
    members = np.flatnonzero(labels == label)
    members = members[rng.permutation(len(members))]
    first.append(members[:k])
    rest.append(members[k:])
  return np.sort(np.concatenate(first)), np.sort(np.concatenate(rest))


def _tokenized(records: list[dict], tokenizer: Callable, text_key: str, label_fn: Callable,
               id_fn: Callable) -> TokenizedSplit:
  return TokenizedSplit([tokenizer(r[text_key]) for r in records],
                        np.array([label_fn(r) for r in records], dtype=np.int32),
                        [id_fn(r) for r in records])


def _finish(splits: dict[str, TokenizedSplit], wanted: Sequence[str], min_n, max_n, min_df):
  vocab_docs = splits['train'].docs if 'train' in wanted else None
  return Prepared({s: length_filter(splits[s], min_n, max_n) for s in wanted}, vocab_docs, min_df)


def sst(raw: dict[str, list[dict]], wanted: Sequence[str]) -> Prepared:
  """Binary SST: neutral (2) dropped, 3-4 positive; keep 5 < n < split max."""
  splits = {}
  for split in ('train', 'dev', 'test'):
    records = [r for r in raw[split] if r['label'] != 2]
    splits[split] = _tokenized(records, tokenize.sst, 'text', lambda r: int(r['label'] >= 3),
                               lambda r: r['id'])
  return _finish(splits, wanted, 5, None, min_df=1)


def imdb(raw: dict[str, list[dict]], wanted: Sequence[str], seed: int = 1378) -> Prepared:
  """IMDB: reviews of < 400 words; train 80/20 into train/dev; test = a 20 %
  sample of the < 400-word test reviews; keep 6 < n < split max."""
  def short_reviews(split):
    docs = _tokenized(raw[split], tokenize.keras_words, 'text', lambda r: r['label'], lambda r: r['id'])
    return docs.subset([i for i, d in enumerate(docs.docs) if len(d) < 400])

  train_all = short_reviews('train')
  train_idx, dev_idx = split_indices(len(train_all), 0.8, 'down', seed)  # train_size=0.8
  test_all = short_reviews('test')
  test_idx, _ = split_indices(len(test_all), 0.2, 'down', seed)  # train_size=0.2
  splits = {'train': train_all.subset(train_idx), 'dev': train_all.subset(dev_idx),
            'test': test_all.subset(test_idx)}
  return _finish(splits, wanted, 6, None, min_df=10)


def newsgroups(raw: dict[str, list[dict]], wanted: Sequence[str], seed: int = 13478) -> Prepared:
  """20 Newsgroups baseball (0) vs hockey (1): headers, footers and quotes
  removed, J&W cleaning, empty posts dropped; stratified 80/20 train/test,
  then 80/20 train/dev; keep 6 < n < 500."""
  classes = {'rec.sport.baseball': 0, 'rec.sport.hockey': 1}
  records = [r for split in ('train', 'test') for r in raw[split]]
  records = [r for r in records if GROUPS[r['group']] in classes]
  docs = _tokenized(records, newsgroups_words, 'text',
                    lambda r: classes[GROUPS[r['group']]], lambda r: r['id'])
  docs = docs.subset([i for i, d in enumerate(docs.docs) if d])
  if len(set(docs.labels.tolist())) < 2:
    raise DataError('20 Newsgroups: the archive has no non-empty posts of rec.sport.baseball '
                    'and rec.sport.hockey; is it the 20news-bydate archive?')
  test_idx, train_idx = _stratified_split(docs.labels, 0.2, seed)
  train_all = docs.subset(train_idx)
  dev_idx, train_idx = _stratified_split(train_all.labels, 0.2, seed)
  splits = {'train': train_all.subset(train_idx), 'dev': train_all.subset(dev_idx),
            'test': docs.subset(test_idx)}
  return _finish(splits, wanted, 6, 500, min_df=2)


def ag_news(raw: dict[str, list[dict]], wanted: Sequence[str], seed: int = 16377) -> Prepared:
  """AG News World (0) vs Business (1), the description column, J&W cleaning;
  dev = 15 % of train; drops each split's shortest and longest documents."""
  classes = {0: 0, 2: 1}  # ClassLabel indices of World and Business

  def select(split):
    records = [r for r in raw[split] if r['label'] in classes]
    return _tokenized(records, tokenize.spacy_like, 'description', lambda r: classes[r['label']],
                      lambda r: r['id'])

  if 'train' not in raw and set(wanted) - {'test'}:
    raise DataError(
        'AG News: only the test split is available (test.csv; train.csv was not '
        f'found), but the splits {sorted(wanted)} were asked for. Training, the dev '
        'split and the vocabulary all need train.csv: put it beside test.csv '
        '(from https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/'
        "data/ag_news_csv/train.csv) or ask for the 'test' split only.")
  splits = {'test': select('test')}
  if 'train' in raw:
    train_all = select('train')
    dev_idx, train_idx = split_indices(len(train_all), 0.15, 'up', seed)  # test_size=0.15
    splits.update(train=train_all.subset(train_idx), dev=train_all.subset(dev_idx))
  return _finish(splits, wanted, None, None, min_df=5)


def newsgroups_words(text: str) -> list[str]:
  """A post's words as J&W's 20 Newsgroups protocol reads them: headers,
  signatures and quotes removed, then J&W's cleaning."""
  return tokenize.newsgroups(newsgroups_text.strip_all(text))
