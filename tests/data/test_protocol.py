"""The J&W data protocol on small inputs: filters, splits, labels."""

import numpy as np

from attn_jax.data import jain_wallace_protocol as jain_wallace
from attn_jax.data.jain_wallace_protocol import TokenizedSplit


def split_of(lengths):
  return TokenizedSplit([['w'] * n for n in lengths], np.zeros(len(lengths), np.int32),
                        [str(i) for i in range(len(lengths))])


def test_length_filter_is_strict_and_defaults_to_the_split_extremes():
  split = split_of([1, 5, 6, 7, 9, 9, 3])
  assert [len(d) for d in jain_wallace.length_filter(split, 5, None).docs] == [6, 7]
  assert [len(d) for d in jain_wallace.length_filter(split, None, None).docs] == [5, 6, 7, 3]
  assert [len(d) for d in jain_wallace.length_filter(split, 2, 7).docs] == [5, 6, 3]


def test_sst_protocol_drops_neutral_and_binarises():
  trees = {'train': [(0, 'a b c d e f'), (1, 'a b c d e f g'), (2, 'a b c d e f'),
                     (3, 'x y z w v u t'), (4, 'x ' * 20)],
           'dev': [(4, 'p q r s t u v'), (0, 'p q r s t u v w')],
           'test': [(3, 'a b c d e f'), (1, 'a b c d e f g h')]}
  raw = {s: [{'text': t, 'label': y, 'id': f'{s}/{i}'} for i, (y, t) in enumerate(rows)]
         for s, rows in trees.items()}
  out = jain_wallace.sst(raw, ('train', 'dev', 'test'))
  assert list(out.splits['train'].labels) == [0, 0, 1]  # n=6, 7, 7 kept; 20 is the max
  assert [len(d) for d in out.vocab_docs] == [6, 7, 7, 20]  # vocabulary before the filter
  assert len(out.splits['dev']) == 1 and len(out.splits['test']) == 1
  assert out.min_df == 1


def test_imdb_protocol_split_sizes():
  def review(i, n, label):
    return {'text': ' '.join(['w'] * n), 'label': label, 'id': str(i), 'rating': 1}
  lengths = [10 + i for i in range(50)] + [450, 500]
  raw = {s: [review(i, n, i % 2) for i, n in enumerate(lengths)] for s in ('train', 'test')}
  out = jain_wallace.imdb(raw, ('train', 'dev', 'test'))
  # 50 reviews < 400 words: train_size=0.8 -> 40 train, 10 dev; test: train_size=0.2 of
  # the 50 -> 10. The filter 6 < n < split max then drops each split's one longest review.
  assert len(out.vocab_docs) == 40
  assert [len(out.splits[s]) for s in ('train', 'dev', 'test')] == [39, 9, 9]
  again = jain_wallace.imdb(raw, ('train', 'dev', 'test'))
  assert out.splits['test'].ids == again.splits['test'].ids


def test_stratified_split_sizes_round_as_a_test_size():
  labels = np.array([0] * 57 + [1] * 44)  # 0.2 * 101 = 20.2 -> 21 (ceil, as sklearn's test_size)
  first, rest = jain_wallace._stratified_split(labels, 0.2, seed=13478)
  # proportional 11.85 / 9.15 -> 11 / 9, the leftover to the larger remainder (class 0)
  assert np.bincount(labels[first]).tolist() == [12, 9]
  assert len(set(first) | set(rest)) == 101 and not set(first) & set(rest)


def test_newsgroups_and_ag_news_split_sizes():
  posts = [{'text': f'Subject: s\n\n' + ' '.join(['word'] * (10 + i)), 'group': g, 'id': str(i)}
           for i, g in enumerate([9] * 30 + [10] * 21)]  # baseball, hockey
  out = jain_wallace.newsgroups({'train': posts, 'test': []}, ('train', 'dev', 'test'))
  # test = ceil(0.2 * 51) = 11; dev = ceil(0.2 * 40) = 8; train 32 (before the 6 < n < 500 filter)
  assert len(out.vocab_docs) == 32
  assert [len(out.splits[s]) for s in ('dev', 'test')] == [8, 11]
  rows = [{'description': ' '.join(['w'] * (5 + i)), 'title': 't', 'label': 0 if i % 2 else 2,
           'id': str(i)} for i in range(41)]
  out = jain_wallace.ag_news({'train': rows, 'test': rows}, ('train', 'dev', 'test'))
  # dev = ceil(0.15 * 41) = 7, train 34; each loses its shortest and longest document
  assert [len(out.splits[s]) for s in ('train', 'dev')] == [32, 5]
