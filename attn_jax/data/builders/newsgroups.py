"""20 Newsgroups, "bydate" version, from the 20news-bydate archive."""

import tensorflow_datasets as tfds

from attn_jax.data.builders import builder as base

GROUPS = (
    'alt.atheism', 'comp.graphics', 'comp.os.ms-windows.misc',
    'comp.sys.ibm.pc.hardware', 'comp.sys.mac.hardware', 'comp.windows.x',
    'misc.forsale', 'rec.autos', 'rec.motorcycles', 'rec.sport.baseball',
    'rec.sport.hockey', 'sci.crypt', 'sci.electronics', 'sci.med', 'sci.space',
    'soc.religion.christian', 'talk.politics.guns', 'talk.politics.mideast',
    'talk.politics.misc', 'talk.religion.misc')
_SPLIT_DIRS = {'20news-bydate-train': 'train', '20news-bydate-test': 'test'}


class Newsgroups20Bydate(base.ArchiveBuilder, skip_registration=True):
  """20news-bydate (Lang 1995; Rennie's split): the raw posts of 20 groups.

  Posts are raw bytes read as latin-1, as scikit-learn does; headers, quotes
  and footers are kept (the J&W protocol strips them).
  """
  DATASET = '20news'

  def _info(self):
    return self.dataset_info_from_configs(
        features=tfds.features.FeaturesDict({
            'text': tfds.features.Text(),
            'group': tfds.features.ClassLabel(names=list(GROUPS)),
            'id': tfds.features.Text(),
        }),
        homepage='http://qwone.com/~jason/20Newsgroups/',
        disable_shuffling=True,
    )

  def _read(self, files):
    path = files['archive']
    splits = {'train': [], 'test': []}
    for name, data in base.tar_members(path):
      parts = base.member_parts(name)
      if len(parts) < 3 or parts[-3] not in _SPLIT_DIRS:
        continue
      group, post = parts[-2], parts[-1]
      if group not in GROUPS or not post.isdigit():
        raise base.malformed(path, f'unexpected member {name!r}')
      split = _SPLIT_DIRS[parts[-3]]
      splits[split].append(((group, int(post)), {
          'text': data.decode('latin-1'), 'group': group, 'id': f'{split}/{group}/{post}'}))
    return base.in_key_order(path, splits, '20news-bydate-{split}/<group>/<id> posts',
                             {'train': 11314, 'test': 7532}, self.count_notes)
