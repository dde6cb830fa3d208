"""AG News topic classification (Zhang et al. 2015), from the CSV files."""

import csv
import io

import tensorflow_datasets as tfds

from attn_jax.data.builders import builder as base

CLASSES = ('World', 'Sports', 'Business', 'Sci/Tech')


class AgNewsCsv(base.ArchiveBuilder, skip_registration=True):
  """`{train,test}.csv` with rows "class","title","description" (class 1-4).

  Two configs, because the train file may be unobtainable (it is missing from
  `../shared/data`): `train_test` needs both files, `test_only` only test.csv.
  """
  DATASET = 'agnews'
  BUILDER_CONFIGS = [
      tfds.core.BuilderConfig(name='train_test', description='train.csv and test.csv'),
      tfds.core.BuilderConfig(name='test_only', description='test.csv only'),
  ]

  def _info(self):
    return self.dataset_info_from_configs(
        features=tfds.features.FeaturesDict({
            'title': tfds.features.Text(),
            'description': tfds.features.Text(),
            'label': tfds.features.ClassLabel(names=list(CLASSES)),
            'id': tfds.features.Text(),
        }),
        homepage='https://github.com/mhjabreel/CharCnn_Keras/tree/master/data/ag_news_csv',
        disable_shuffling=True,
    )

  OFFICIAL_ROWS = {'train': 120000, 'test': 7600}

  def _read(self, files):
    splits = {}
    for split in ('test',) if self.builder_config.name == 'test_only' else ('train', 'test'):
      splits[split] = list(self._read_csv(split, files[split]))
      if not splits[split]:
        raise base.malformed(files[split], 'no rows')
      base.check_official_count(self.count_notes, files[split], 'rows', len(splits[split]),
                                self.OFFICIAL_ROWS[split])
    return splits

  def _read_csv(self, split, path):
    text = base.read_text(path)
    try:
      rows = list(csv.reader(io.StringIO(text, newline=''), strict=True))
    except csv.Error as e:
      raise base.malformed(path, f'not CSV ({e})') from e
    for number, row in enumerate(rows, 1):
      if len(row) != 3 or row[0] not in ('1', '2', '3', '4'):
        raise base.malformed(path, f'row {number} is not "class(1-4)","title","description"')
      yield number, {'title': row[1], 'description': row[2], 'label': int(row[0]) - 1,
                     'id': f'{split}/{number}'}
