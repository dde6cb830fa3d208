"""Small copies of the four original distribution formats, made on the fly."""

import gzip
import io
import os
import tarfile

SST_TREES = {
    'train': ['(3 (2 It) (4 (3 (2 is) (4 good)) (2 fun)))',
              '(0 (1 (2 A) (1 bad)) (1 (2 , -LRB- very -RRB-) (1 dull)))',
              '(2 (2 Neutral) (2 one))',
              '(4 (4 Great) (3 (2 film) (2 !)))'],
    'dev': ['(1 (1 Weak) (2 plot))', '(3 (3 Nice) (2 cast))'],
    'test': ['(4 (4 Superb) (2 acting))', '(0 (0 Awful) (2 mess))', '(2 (2 So) (2 so))'],
}


def write_sst(root, trees=SST_TREES):
  folder = os.path.join(root, 'sst')
  os.makedirs(folder, exist_ok=True)
  for split, lines in trees.items():
    with open(os.path.join(folder, f'{split}.txt'), 'w') as f:
      f.write('\n'.join(lines) + '\n')
  return folder


def _tar(path, members):
  with tarfile.open(path, 'w:gz') as tar:
    for name, text in members.items():
      data = text.encode('utf-8') if isinstance(text, str) else text
      info = tarfile.TarInfo(name)
      info.size = len(data)
      tar.addfile(info, io.BytesIO(data))


def _tar_in(root, folder, name, members):
  os.makedirs(os.path.join(root, folder), exist_ok=True)
  path = os.path.join(root, folder, name)
  _tar(path, members)
  return path


def write_imdb(root, reviews):
  """reviews: {(split, label, id, rating): text}."""
  members = {f'aclImdb/{split}/{label}/{review_id}_{rating}.txt': text
             for (split, label, review_id, rating), text in reviews.items()}
  return _tar_in(root, 'imdb', 'aclImdb_train_test.tar.gz', {'aclImdb/README': 'readme', **members})


def write_20news(root, posts):
  """posts: {(split, group, id): text}."""
  members = {f'20news-bydate-{split}/{group}/{post}': text for (split, group, post), text in posts.items()}
  return _tar_in(root, '20news', '20news-bydate_train_test.tar.gz', members)


def write_ag_news(root, rows_by_split):
  """rows_by_split: {split: [(class 1-4, title, description)]}; gzip'd CSV."""
  folder = os.path.join(root, 'ag_news')
  os.makedirs(folder, exist_ok=True)
  for split, rows in rows_by_split.items():
    text = ''.join(f'"{c}","{t}","{d}"\n' for c, t, d in rows)
    with gzip.open(os.path.join(folder, f'{split}.csv.gz'), 'wt') as f:
      f.write(text)
  return folder


def truncate(path, keep_fraction=0.5):
  with open(path, 'rb') as f:
    data = f.read()
  with open(path, 'wb') as f:
    f.write(data[:int(len(data) * keep_fraction)])
