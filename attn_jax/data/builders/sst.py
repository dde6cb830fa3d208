"""Stanford Sentiment Treebank, sentence level, from the PTB tree files."""

import tensorflow_datasets as tfds

from attn_jax.data import ptb_tree
from attn_jax.data.builders import builder as base


class SstTrees(base.ArchiveBuilder, skip_registration=True):
  """SST `trees/{train,dev,test}.txt` (Socher et al. 2013): one tree a line.

  Each example keeps the tree, its leaves joined by spaces and the root
  label (0 very negative ... 4 very positive).
  """
  DATASET = 'sst'

  def _info(self):
    return self.dataset_info_from_configs(
        features=tfds.features.FeaturesDict({
            'tree': tfds.features.Text(),
            'text': tfds.features.Text(),
            'label': tfds.features.ClassLabel(num_classes=5),
            'id': tfds.features.Text(),
        }),
        homepage='https://nlp.stanford.edu/sentiment/',
        disable_shuffling=True,
    )

  OFFICIAL_TREES = {'train': 8544, 'dev': 1101, 'test': 2210}

  def _read(self, files):
    splits = {}
    for split in ('train', 'dev', 'test'):
      splits[split] = list(self._read_split(split, files[split]))
      if not splits[split]:
        raise base.malformed(files[split], 'no trees')
      base.check_official_count(self.count_notes, files[split], 'trees', len(splits[split]),
                                self.OFFICIAL_TREES[split])
    return splits

  def _read_split(self, split, path):
    lines = base.read_text(path).splitlines()
    for number, line in enumerate(lines, 1):
      if not line.strip():
        continue
      try:
        label, leaves = ptb_tree.parse_tree(line)
      except ValueError as e:
        raise base.malformed(path, f'line {number}: {e}') from e
      yield number, {'tree': line, 'text': ' '.join(leaves), 'label': label,
                     'id': f'{split}/{number}'}
