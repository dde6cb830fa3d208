"""The tfds builders on small archives made here: content, errors, caching."""

import os

import pytest

from attn_jax.data import builders, jain_wallace_protocol as jain_wallace, sources
from attn_jax.data.builders.builder import NonstandardDataWarning
from attn_jax.data.builders.imdb import AclImdb
from attn_jax.core.errors import DataError
import archives


def imdb_reviews(n=30):
  reviews = {}
  for i in range(n):
    for split in ('train', 'test'):
      reviews[(split, 'pos', i, 8)] = f'A great film number {i}. Loved it!<br />Really.'
      reviews[(split, 'neg', i, 2)] = f"Awful film {i}, didn't like it at all."
  return reviews


def test_sst_builder_reads_trees(tmp_path):
  archives.write_sst(tmp_path / 'data')
  raw = builders.load_raw('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert [len(raw[s]) for s in ('train', 'dev', 'test')] == [4, 2, 3]
  first = raw['train'][0]
  assert first['label'] == 3 and first['text'] == 'It is good fun' and first['id'] == 'train/1'
  assert raw['train'][1]['text'] == 'A bad , -LRB- very -RRB- dull'


def test_imdb_builder_reads_both_splits_in_a_fixed_order(tmp_path):
  archives.write_imdb(tmp_path / 'data', imdb_reviews(5))
  raw = builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert len(raw['train']) == 10 and len(raw['test']) == 10
  ids = [r['id'] for r in raw['train']]
  assert ids[:2] == ['train/neg/0_2.txt', 'train/neg/1_2.txt'] and ids[5] == 'train/pos/0_8.txt'
  assert raw['train'][5]['label'] == 1 and raw['train'][5]['rating'] == 8
  assert '<br />' in raw['train'][5]['text']


def test_20news_builder_decodes_latin1_and_labels_groups(tmp_path):
  posts = {('train', 'rec.sport.hockey', '10'): b'From: a@b\n\nGo Leafs caf\xe9!',
           ('test', 'rec.sport.baseball', '7'): b'Subject: x\n\nHome run.'}
  archives.write_20news(tmp_path / 'data', posts)
  raw = builders.load_raw('20news', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert raw['train'][0]['text'].endswith('café!') and raw['test'][0]['id'] == 'test/rec.sport.baseball/7'


def test_ag_news_test_only_and_a_clear_error_for_train(tmp_path):
  archives.write_ag_news(tmp_path / 'data', {'test': [(1, 'T1', 'World news here'), (3, 'T2', 'Stocks rose 5 %')]})
  raw = builders.load_raw('agnews', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  assert list(raw) == ['test'] and raw['test'][1]['label'] == 2
  with pytest.raises(DataError, match='only the test split is available.*train.csv'):
    jain_wallace.ag_news(raw, ('train', 'dev', 'test'))
  assert len(jain_wallace.ag_news(raw, ('test',)).splits['test']) == 0  # min and max dropped


def test_missing_files_name_every_place_looked(tmp_path):
  (tmp_path / 'data').mkdir()
  with pytest.raises(DataError) as error:
    builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))
  message = str(error.value)
  assert 'aclImdb_train_test.tar.gz' in message and 'aclImdb_v1.tar.gz' in message
  assert str(tmp_path / 'data' / 'imdb') in message and sources.ENV_VAR in message
  assert not (tmp_path / 'tfds').exists()  # failed before any preparation


def test_data_dir_from_the_environment(tmp_path, monkeypatch):
  archives.write_sst(tmp_path / 'data')
  monkeypatch.setenv(sources.ENV_VAR, str(tmp_path / 'data'))
  assert len(builders.load_raw('sst', None, str(tmp_path / 'tfds'))['dev']) == 2


def test_truncated_archive_is_reported_as_such(tmp_path):
  path = archives.write_imdb(tmp_path / 'data', imdb_reviews(200))
  archives.truncate(path)
  with pytest.raises(DataError, match='truncated or corrupt'):
    builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_malformed_tree_names_file_and_line(tmp_path):
  trees = dict(archives.SST_TREES, dev=['(1 (1 Weak) (2 plot))', '(3 (3 Nice) (2 cast)'])
  archives.write_sst(tmp_path / 'data', trees)
  with pytest.raises(DataError, match=r'dev.txt is malformed: line 2'):
    builders.load_raw('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_archive_without_reviews_is_malformed(tmp_path):
  archives.write_20news(tmp_path / 'data', {('train', 'rec.sport.hockey', '1'): 'x'})
  os.rename(tmp_path / 'data' / '20news' / '20news-bydate_train_test.tar.gz',
            tmp_path / 'data' / '20news' / 'aclImdb_v1.tar.gz')
  (tmp_path / 'data' / 'imdb').mkdir()
  os.rename(tmp_path / 'data' / '20news' / 'aclImdb_v1.tar.gz', tmp_path / 'data' / 'imdb' / 'aclImdb_v1.tar.gz')
  with pytest.raises(DataError, match='no aclImdb/train'):
    builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_prepared_data_is_reused(tmp_path, monkeypatch):
  archives.write_imdb(tmp_path / 'data', imdb_reviews(3))
  first = builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))

  def fail(*_):
    raise AssertionError('prepared twice')

  monkeypatch.setattr(AclImdb, '_read', fail)
  assert builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds')) == first


def test_empty_source_file_is_malformed(tmp_path):
  archives.write_sst(tmp_path / 'data', dict(archives.SST_TREES, test=[]))
  (tmp_path / 'data' / 'sst' / 'test.txt').write_text('')
  with pytest.raises(DataError, match='test.txt is malformed: no trees'):
    builders.load_raw('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_csv_cut_inside_a_row_is_reported(tmp_path):
  folder = archives.write_ag_news(tmp_path / 'data', {'test': [(1, 'a', 'b')]})
  import gzip  # pylint: disable=g-import-not-at-top
  with gzip.open(os.path.join(folder, 'test.csv.gz'), 'wt') as f:
    f.write('"1","title","a description cut o')
  with pytest.raises(DataError, match='test.csv.gz is malformed'):
    builders.load_raw('agnews', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_a_file_of_unofficial_size_warns(tmp_path):
  archives.write_sst(tmp_path / 'data')
  with pytest.warns(NonstandardDataWarning, match='train.txt: 4 trees, the official release has 8544'):
    builders.load_raw('sst', str(tmp_path / 'data'), str(tmp_path / 'tfds'))


def test_changed_source_files_are_prepared_again(tmp_path):
  archives.write_imdb(tmp_path / 'data', imdb_reviews(3))
  assert len(builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))['train']) == 6
  archives.write_imdb(tmp_path / 'data', imdb_reviews(5))
  assert len(builders.load_raw('imdb', str(tmp_path / 'data'), str(tmp_path / 'tfds'))['train']) == 10


def test_a_preparation_says_what_it_prepares_and_tfds_says_nothing(tmp_path, monkeypatch, capsys, caplog):
  """One line of ours (with a time estimate once a rate is measured) in place
  of tfds's "Downloading and preparing dataset Unknown size", its split and
  shuffle bars and "Variant folder … has no dataset_info.json"."""
  from attn_jax.core import estimates  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv('ATTN_JAX_RATES', str(tmp_path / 'rates.json'))
  monkeypatch.setattr(estimates, 'benchmarks_directory', lambda: str(tmp_path / 'results' / 'benchmarks'))
  archives.write_sst(tmp_path / 'data')
  said = []
  files = sources.locate('sst', str(tmp_path / 'data'))
  builders.prepare('sst', files, str(tmp_path / 'tfds'), log=said.append)
  assert len(said) == 1 and said[0].startswith('preparing sst for tfds from 0.0 MB of source files')
  assert 'no earlier preparation measured on a machine like this one' in said[0]
  said.clear()
  builders.prepare('sst', files, str(tmp_path / 'tfds'), log=said.append)
  assert not said  # prepared: nothing to say
  builders.prepare('sst', files, str(tmp_path / 'tfds2'), log=said.append)
  assert 'at the rate an earlier preparation measured here' in said[0]
  printed = capsys.readouterr()
  for noise in ('Downloading and preparing', 'Generating', 'Shuffling', 'Subsequent calls'):
    assert noise not in printed.out + printed.err
  assert not [r for r in caplog.records if 'Variant folder' in r.getMessage()]


def test_a_first_preparation_reads_a_committed_benchmarks_rate(tmp_path, monkeypatch):
  """With no rate measured here, a benchmark's of a machine with as many cores."""
  from attn_jax.core import estimates, atomic_io  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv('ATTN_JAX_RATES', str(tmp_path / 'rates.json'))
  folder = tmp_path / 'results' / 'benchmarks'
  monkeypatch.setattr(estimates, 'benchmarks_directory', lambda: str(folder))
  key = builders._rate_key('sst')  # pylint: disable=protected-access
  atomic_io.write_json(str(folder / 'first_run_sst.json'), {'rates': {
      f'{estimates.available_cores() + 1} cores, x86_64': {key: {'rate': 1.0}},  # another machine: not read
      f'{estimates.available_cores()} cores, x86_64': {key: {'rate': 1000.0, 'unit': 'source bytes/s'}}}})
  archives.write_sst(tmp_path / 'data')
  said = []
  builders.prepare('sst', sources.locate('sst', str(tmp_path / 'data')), str(tmp_path / 'tfds'), log=said.append)
  assert f'at the rate measured on a {estimates.available_cores()}-core machine: ' in said[0]
  assert said[0].endswith('results/benchmarks/first_run_sst.json)')
