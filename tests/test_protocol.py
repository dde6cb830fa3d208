"""The J&W data protocol on small inputs: filters, splits, labels."""

import numpy as np

from attn_jax.data import jain_wallace
from attn_jax.data.jain_wallace import TokenizedSplit


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
  # 50 reviews < 400 words: 40 train / 10 dev; test = floor(0.2 * 50) = 10 before the filter
  assert len(out.vocab_docs) == 40
  assert len(out.splits['train']) <= 40 and len(out.splits['dev']) <= 10
  assert len(out.splits['test']) <= 10
  assert all(len(d) < 400 for s in out.splits.values() for d in s.docs)
  again = jain_wallace.imdb(raw, ('train', 'dev', 'test'))
  assert out.splits['test'].ids == again.splits['test'].ids


def test_stratified_split_keeps_class_proportions():
  labels = np.array([0] * 80 + [1] * 20)
  first, rest = jain_wallace._stratified_split(labels, 0.2, seed=13478)
  assert np.bincount(labels[first]).tolist() == [16, 4]
  assert len(set(first) | set(rest)) == 100 and not set(first) & set(rest)
