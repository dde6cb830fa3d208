"""IMDB Large Movie Review Dataset, from the aclImdb archive."""

import re

import numpy as np
import tensorflow_datasets as tfds

from attn_jax.data.builders import builder as base

_REVIEW = re.compile(r'^(\d+)_(\d+)\.txt$')


class AclImdb(base.ArchiveBuilder, skip_registration=True):
  """aclImdb v1.0 (Maas et al. 2011): labelled train and test reviews.

  `train/unsup` is skipped. Reviews are ordered by (label, id) so the split
  order does not depend on the order of members in the archive.
  """
  DATASET = 'imdb'

  def _info(self):
    return self.dataset_info_from_configs(
        features=tfds.features.FeaturesDict({
            'text': tfds.features.Text(),
            'label': tfds.features.ClassLabel(names=['neg', 'pos']),
            'rating': tfds.features.Scalar(dtype=np.int32),
            'id': tfds.features.Text(),
        }),
        homepage='https://ai.stanford.edu/~amaas/data/sentiment/',
        disable_shuffling=True,
    )

  def _read(self, files):
    path = files['archive']
    splits = {'train': [], 'test': []}
    for name, data in base.tar_members(path):
      parts = base.member_parts(name)
      if len(parts) < 4 or parts[-4] != 'aclImdb' or parts[-3] not in splits or parts[-2] not in ('neg', 'pos'):
        continue
      match = _REVIEW.match(parts[-1])
      if not match:
        raise base.malformed(path, f'review file {name!r} is not named ID_RATING.txt')
      text = base.decode_utf8(data, f'{path}, member {name}')
      review_id, rating = int(match.group(1)), int(match.group(2))
      label = parts[-2]
      splits[parts[-3]].append(((label, review_id), {
          'text': text, 'label': label, 'rating': rating,
          'id': f'{parts[-3]}/{label}/{parts[-1]}'}))
    return base.in_key_order(path, splits, 'aclImdb/{split}/{{neg,pos}}/*.txt reviews',
                             {'train': 25000, 'test': 25000}, self.count_notes)
