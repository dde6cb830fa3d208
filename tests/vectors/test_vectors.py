"""In-domain word vectors: the corpus holds out the target's dev and test
text, training is deterministic (across processes and the parent's OpenBLAS
kernel: the child's is pinned), a build says whether it matches the committed
record, and a config naming them builds, caches and loads them."""

import importlib.util
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from attn_jax.workdirs import initial_params as initial_params_lib
from attn_jax import config as config_lib
from attn_jax.data.dataset import load_dataset
from attn_jax.core.errors import ConfigError
from attn_jax.models import build_model
from attn_jax.vectors import blas, build, corpus, fasttext
from conftest import requires_real_data
import helpers

pytestmark = pytest.mark.slow  # a minute or more: scheduled first (conftest)

gensim = pytest.importorskip('gensim')


def sst_record(split, number, text, label=4):
  return {'id': f'{split}/{number}', 'text': text, 'label': label, 'tree': ''}


FAKE = {
    'sst': {'train': [sst_record('train', i, f'a good film number {i} indeed') for i in range(6)]
                     + [sst_record('train', 9, 'the very same words as a test one', 0)],
            'dev': [sst_record('dev', i, f'dev sentence {i} with enough words here', i % 2 * 4)
                    for i in range(7)],
            'test': [sst_record('test', 0, 'the very same words as a test one', 0)]
                    + [sst_record('test', i, f'test sentence {i} with many words in it' + ' too' * i,
                                  i % 2 * 4) for i in range(1, 8)]},
    'imdb': {'train': [{'id': 'train/pos/1', 'text': 'A great movie<br />I loved it', 'label': 1}],
             'test': [{'id': 'test/neg/2', 'text': 'Dev words? No: the very same words as a test one',
                       'label': 0}]},
}


def test_the_corpus_holds_out_the_targets_dev_and_test_text():
  out = io.StringIO()
  stats = corpus.write_corpus('sst', ('sst', 'imdb'), FAKE.__getitem__, out)
  lines = out.getvalue().splitlines()
  # SST dev and test are held out whole; the train sentence equal to a test
  # sentence is held out too; other datasets' text is tokenised as SST's.
  assert stats['sst'] == {'documents': 6, 'tokens': 36, 'held_out': 16}
  assert 'test/0' in corpus.held_out('sst', FAKE['sst'])[0]
  assert not any('dev sentence' in l or 'test sentence' in l for l in lines)
  assert 'the very same words as a test one' not in lines
  assert 'a great movie br i loved it' in lines
  assert stats['imdb']['held_out'] == 0  # a document of another dataset is kept unless identical
  assert 'dev words no the very same words as a test one' in lines
  stats = corpus.write_corpus('sst', ('imdb',), lambda name: {
      **FAKE, 'imdb': {'test': [{'id': 'test/x', 'text': 'The very SAME words, as a test one!'}]}}[name],
      io.StringIO())
  assert stats['imdb'] == {'documents': 0, 'tokens': 0, 'held_out': 1}


RECIPE = {'epochs': 2, 'window': 3, 'min_count': 1, 'sg': 0, 'negative': 3, 'min_n': 2,
          'max_n': 3, 'seed': 5}


def tiny_corpus(tmp_path):
  text = tmp_path / 'corpus.txt'
  rng = np.random.default_rng(0)
  words = [f'w{i}' for i in range(60)]
  text.write_text('\n'.join(' '.join(rng.choice(words, 12)) for _ in range(300)) + '\n')
  return str(text)


@pytest.mark.heavy
def test_training_is_deterministic_given_the_seed(tmp_path):
  text = tiny_corpus(tmp_path)
  a = fasttext.train_vectors(text, 8, RECIPE)
  b = fasttext.train_vectors(text, 8, RECIPE)
  c = fasttext.train_vectors(text, 8, {**RECIPE, 'seed': 6})
  np.testing.assert_array_equal(a.vectors, b.vectors)
  assert not np.array_equal(a.vectors, c.vectors)


@pytest.mark.heavy
def test_training_is_deterministic_across_processes(tmp_path):
  """Python's string hashing changes per process; the vectors must not."""
  text = tiny_corpus(tmp_path)
  script = ('import sys, hashlib; from attn_jax.vectors import fasttext; '
            f'wv = fasttext.train_vectors({text!r}, 8, {RECIPE!r}); '
            'print(hashlib.sha256(wv.vectors.tobytes() + " ".join(wv.index_to_key).encode()).hexdigest())')
  digests = {subprocess.run([sys.executable, '-c', script], env={**os.environ, 'PYTHONHASHSEED': seed},
                            capture_output=True, text=True, check=True).stdout.strip() for seed in ('1', '2')}
  assert len(digests) == 1


# dim 50: on this tiny corpus the Haswell, SkylakeX and Prescott kernels give
# three different sets of vectors when not pinned (smaller dims can agree).
SKIPGRAM = {**RECIPE, 'sg': 1}
requires_avx2 = pytest.mark.skipif(
    not blas.has_avx2(), reason=f'the pinned {blas.PINNED_BLAS_KERNEL} kernel needs x86-64 with AVX2')


def vectors_digest(text, code, kernel):
  """sha256 of the vectors `code` makes from `text` in a fresh process whose
  OPENBLAS_CORETYPE is `kernel` (None: unset), and that process's own kernel."""
  script = ('import hashlib, scipy.linalg; from attn_jax.vectors import blas, fasttext; '
            f'text, dim, recipe = {text!r}, 50, {SKIPGRAM!r}; wv = {code}; '
            'print(hashlib.sha256(wv.vectors.tobytes() + " ".join(wv.index_to_key).encode()).hexdigest(), '
            'blas.in_use()["kernel"])')
  env = {k: v for k, v in os.environ.items() if k != blas.ENV_VAR}
  if kernel:
    env[blas.ENV_VAR] = kernel
  out = subprocess.run([sys.executable, '-c', script], env=env, capture_output=True, text=True)
  assert out.returncode == 0, out.stderr
  return out.stdout.split()


@pytest.mark.heavy
@requires_avx2
def test_the_pinned_kernel_gives_the_same_bytes_whatever_the_parents_kernel(tmp_path):
  text = tiny_corpus(tmp_path)
  found = [vectors_digest(text, 'fasttext.train_vectors(text, dim, recipe)', kernel)
           for kernel in ('SkylakeX', 'Prescott', None)]
  assert len({digest for digest, _ in found}) == 1
  assert len({parent_kernel for _, parent_kernel in found}) > 1  # the parents did differ
  # ... and the bytes are those of training in a process running the pinned kernel itself.
  assert found[0][0] == vectors_digest(text, 'fasttext.train_here(text, dim, recipe)',
                                       blas.PINNED_BLAS_KERNEL)[0]


@pytest.mark.heavy
@requires_avx2
def test_unpinned_training_differs_between_kernels(tmp_path):
  """The control: without the pin this corpus does tell the kernels apart, so
  the test above can fail."""
  text = tiny_corpus(tmp_path)
  haswell, prescott = (vectors_digest(text, 'fasttext.train_here(text, dim, recipe)', kernel)
                       for kernel in ('Haswell', 'Prescott'))
  assert haswell[1] == 'Haswell' and prescott[1] != 'Haswell'
  assert haswell[0] != prescott[0]


def test_without_avx2_the_machines_own_kernel_is_used_and_said_so(tmp_path, monkeypatch):
  monkeypatch.setattr(blas, 'has_avx2', lambda: False)
  monkeypatch.delenv(blas.ENV_VAR, raising=False)
  logs, epochs = [], []
  wv, environment = fasttext.train(tiny_corpus(tmp_path), 8, RECIPE, lambda *a: epochs.append(a),
                                   words=['w3', 'not-in-corpus', 'w1'], log=logs.append)
  assert len(logs) == 1 and 'not be byte-identical' in logs[0]
  assert not environment['pinned'] and environment['gensim'] == gensim.__version__
  assert wv.index_to_key == ['w3', 'w1'] and [done for done, _ in epochs] == [1, 2]
  monkeypatch.setattr(blas.platform, 'machine', lambda: 'aarch64')
  assert blas.has_avx2() is False


def test_an_error_in_the_training_child_is_the_same_config_error(tmp_path, monkeypatch):
  fake = tmp_path / 'site' / 'gensim'
  fake.mkdir(parents=True)
  (fake / '__init__.py').write_text('raise ImportError("no gensim here")\n')
  monkeypatch.setenv('PYTHONPATH', str(tmp_path / 'site'))
  with pytest.raises(ConfigError, match='needs gensim: pip install'):
    fasttext.train_vectors(tiny_corpus(tmp_path), 8, RECIPE)


def test_a_build_says_whether_it_matches_the_committed_record(tmp_path, monkeypatch):
  monkeypatch.setattr(build, 'records_directory', lambda: str(tmp_path))
  recipe = {'target': 'sst', 'sg': 1, 'dim': 300}
  info = {'recipe': recipe, 'corpus_tokens': 1000, 'sha256': 'a' * 64,
          'environment': {'kernel': 'SkylakeX', 'gensim': '4.4.0'}}
  logs = []
  build.check_against_record('sst', info, logs.append)
  assert not logs  # no record: nothing to say
  (tmp_path / 'sst_skipgram.json').write_text(json.dumps(
      {'recipe': recipe, 'corpus_tokens': 1000, 'sha256': 'a' * 64}))
  (tmp_path / 'sst.json').write_text(json.dumps(
      {'recipe': {**recipe, 'sg': 0}, 'corpus_tokens': 1000, 'sha256': 'b' * 64}))
  build.check_against_record('sst', info, logs.append)
  assert logs == [f'vectors match the committed record results/vectors/sst_skipgram.json '
                  f'(sha256 {"a" * 12})']
  logs.clear()
  build.check_against_record('sst', {**info, 'recipe': {**recipe, 'sg': 0}}, logs.append)
  assert len(logs) == 1 and 'differ from the committed record results/vectors/sst.json' in logs[0]
  assert 'a' * 12 in logs[0] and 'b' * 12 in logs[0] and 'SkylakeX' in logs[0]
  assert 'gensim 4.4.0' in logs[0] and 'may differ' in logs[0]
  logs.clear()
  for other in ({**info, 'corpus_tokens': 999}, {**info, 'recipe': {**recipe, 'dim': 200}}):
    build.check_against_record('sst', other, logs.append)
  assert not logs  # another corpus or recipe: the record says nothing about it


def test_the_records_folder_is_the_checkouts():
  assert build.records_directory() == os.path.join(
      helpers.ROOT, 'results', 'vectors')


def test_bad_corpora_are_refused():
  cfg = config_lib.default_config('sst', 'bilstm')
  cfg.vectors.corpora = 'sst,wikipedia'
  with pytest.raises(ConfigError, match='vectors.corpora'):
    build.corpora(cfg)


@pytest.mark.heavy
@requires_real_data
def test_a_config_naming_in_domain_vectors_builds_caches_and_loads_them(tfds_dir, tmp_path):
  cfg = config_lib.default_config('sst', 'bilstm', 'smoke')
  cfg.data.tfds_data_dir = tfds_dir
  cfg.data.max_docs_per_split = None  # the vocabulary of the real train split
  cfg.model.embeddings_file = build.IN_DOMAIN
  cfg.vectors.update(corpora='sst', epochs=1, directory=str(tmp_path))
  cfg.train.progress = False
  data = load_dataset(cfg.data)
  logs = []
  path = build.ensure_vectors(cfg, data.vocab, logs.append)
  info = build.describe(path)
  assert info['corpus']['sst'] == {'documents': 8544, 'tokens': info['corpus_tokens'], 'held_out': 3311}
  assert 0.1 < info['coverage'] < 1 and info['recipe']['dim'] == 16
  assert info['environment']['gensim'] == gensim.__version__ and info['environment']['kernel']
  assert build.ensure_vectors(cfg, data.vocab, logs.append) == path  # cached: not built again
  assert sum('building' in line for line in logs) == 1
  model = build_model(cfg.model, len(data.vocab))
  table = np.asarray(initial_params_lib.initial_params(model, cfg, data, lambda _: None)['embedding']['table'])
  assert np.count_nonzero(np.any(table != 0, axis=1)) == info['words_with_vectors']
  assert info['workers'] == 1 and info['bit_reproducible']
  assert any(line.startswith('vectors: ') for line in logs)  # the build's time estimate
  cfg.vectors.workers = 2  # not bit-reproducible: a file of its own, and runs say so
  logs.clear()
  threaded = build.ensure_vectors(cfg, data.vocab, logs.append)
  assert threaded != path and build.describe(threaded)['workers'] == 2
  assert '2 threads: faster, not bit-for-bit reproducible' in logs[0]
  initial_params_lib.initial_params(model, cfg, data, logs.append, str(tmp_path))
  assert 'built with 2 threads: not bit-for-bit reproducible' in logs[-1]
  record = json.loads((tmp_path / 'embeddings.json').read_text())
  assert record['in_domain'] == {'workers': 2, 'bit_reproducible': False,
                                 'sha256': build.describe(threaded)['sha256']}
  with open(path, 'a') as f:
    f.write('tampered 1\n')
  assert build.describe(path) is None  # a changed file is not trusted: it is built again


def test_ss_corpus_has_one_sentence_a_line_and_unk_for_words_outside_the_vocabulary():
  """S&S's word2vec preparation: sentences as lines, out-of-vocabulary words
  as one `<UNK>` word (so UNK gets a vector); the test split is held out."""
  reviews = lambda split, n: [{'id': f'{split}/{i}', 'rating': 1 + 9 * (i % 2),
                               'text': f'Good film {split}{i}. Rare{i} words here!<br />The end'}
                              for i in range(n)]
  raw = {'imdb': {'train': reviews('train', 20), 'test': reviews('test', 3)}}
  out = io.StringIO()
  stats = corpus.write_corpus('imdb_ratings', ('imdb',), raw.__getitem__, out, 'sentences',
                              frozenset({'good', 'film', 'words', 'here', '!', '.', 'the', 'end'}))
  lines = out.getvalue().splitlines()
  assert stats['imdb']['documents'] == 20 and stats['imdb']['held_out'] == 3
  assert lines[:3] == ['good film <UNK> .', '<UNK> words here !', 'the end']
  assert len(lines) == 60
  documents = io.StringIO()
  corpus.write_corpus('imdb_ratings', ('imdb',), raw.__getitem__, documents)
  assert documents.getvalue().splitlines()[0] == 'good film train0 . rare0 words here ! the end'
  with pytest.raises(ConfigError, match='vectors.lines=sentences'):
    corpus.write_corpus('sst', ('sst',), FAKE.__getitem__, io.StringIO(), 'sentences')


def test_ss_recipe_keys_enter_the_vectors_key_only_when_set():
  """Old caches keep their keys; S&S's preparation makes its own file."""
  cfg = config_lib.default_config('imdb_ratings', 'bigru')
  before = build.recipe(cfg)
  assert 'lines' not in before and 'oov_as_unk' not in before
  cfg.vectors.lines, cfg.vectors.oov_as_unk = 'sentences', True
  assert build.recipe(cfg) == {**before, 'lines': 'sentences', 'oov_as_unk': True}


def test_the_thread_count_enters_the_vectors_key_only_away_from_one(monkeypatch):
  """vectors.workers=1 keeps every cached file's key; more threads (not
  bit-reproducible) build a file of their own; 'auto' is this machine's cores."""
  cfg = config_lib.default_config('sst', 'bilstm')
  before = build.recipe(cfg)
  assert 'workers' not in before and build.workers(cfg) == 1
  cfg.vectors.workers = 2
  assert build.recipe(cfg) == {**before, 'workers': 2}
  monkeypatch.setattr(build.estimates, 'available_cores', lambda: 16)
  cfg.vectors.workers = 'auto'
  assert build.workers(cfg) == 16 and build.recipe(cfg)['workers'] == 16
  config_lib.validate(cfg)
  for bad in (0, -1, '2', 'all', 1.5):
    cfg.vectors.workers = bad
    with pytest.raises(ConfigError, match='vectors.workers'):
      config_lib.validate(cfg)


def test_a_build_says_how_long_it_will_take_from_a_measured_rate(tmp_path, monkeypatch):
  """The rate comes from an earlier build here, else from the `rates` that
  benchmarks/vector_build.py commits (read by the one reader of committed
  rates, `estimates.committed_rate`), for the same trainer and threads."""
  monkeypatch.setenv('ATTN_JAX_RATES', str(tmp_path / 'rates.json'))
  monkeypatch.setattr(build.estimates, 'benchmarks_directory', lambda: str(tmp_path / 'results' / 'benchmarks'))
  monkeypatch.setattr(build.estimates, 'available_cores', lambda: 2)
  r = {**build.recipe(config_lib.default_config('sst', 'bilstm')), 'workers': 2}
  assert 'no rate measured on a machine like this one yet' in build.estimate_line(r, 1_000_000)
  (tmp_path / 'results' / 'benchmarks').mkdir(parents=True)
  spec = importlib.util.spec_from_file_location('vector_build', os.path.join(helpers.ROOT, 'benchmarks', 'vector_build.py'))
  benchmark = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(benchmark)
  rows = [{'workers': 1, 'tokens_per_second': 50_000}, {'workers': 2, 'tokens_per_second': 100_000}]
  bench = {'cpus': 2, 'recipe': {**r, 'epochs': 1}, 'rows': rows,
           'rates': benchmark.rates({**r, 'epochs': 1}, rows, build.estimates.machine())}
  (tmp_path / 'results' / 'benchmarks' / 'vector_build_sst.json').write_text(json.dumps(bench))
  line = build.estimate_line(r, 1_200_000)  # 5 epochs: 6 M tokens at 100 k/s
  assert line == ('about 60 s (6,000,000 tokens at 100,000 tokens/s, measured on a 2-core machine: '
                  'results/benchmarks/vector_build_sst.json)')
  assert 'at 50,000 tokens/s' in build.estimate_line({**r, 'workers': 1}, 1_200_000)
  assert 'no rate measured' in build.estimate_line({**r, 'sg': 0}, 1_200_000)  # CBOW: another trainer
  monkeypatch.setattr(build.estimates, 'available_cores', lambda: 16)  # measured on 2 cores only
  assert 'no rate measured' in build.estimate_line({**r, 'workers': 16}, 1_200_000)
  monkeypatch.setattr(build.estimates, 'available_cores', lambda: 2)
  build.estimates.MeasuredRates().put(build.rate_key(r), 200_000, 'corpus tokens/s')
  assert build.estimate_line(r, 1_200_000) == (
      'about 30 s (6,000,000 tokens at 200,000 tokens/s, measured by an earlier build on this machine)')


def test_the_committed_vector_build_benchmarks_keep_every_row_under_its_build_key():
  """Their `rates` are keyed as a build of the default recipe looks them up."""
  r = build.recipe(config_lib.default_config('sst', 'bilstm'))
  folder = os.path.join(helpers.ROOT, 'results', 'benchmarks')
  for name in ('vector_build_sst.json', 'vector_build_sst_h200.json'):
    with open(os.path.join(folder, name), encoding='utf-8') as f:
      found = json.load(f)
    host = f'{found["cpus"]} cores, {found["processor"]}'
    for row in found['rows']:
      key = build.rate_key({**r, 'workers': row['workers']})
      assert found['rates'][host][key]['rate'] == row['tokens_per_second'], (name, row['workers'])


def test_the_vectors_command_builds_all_three_datasets_with_the_threads_asked(monkeypatch, capsys):
  from attn_jax.vectors import __main__ as command  # pylint: disable=g-import-not-at-top
  built = []

  class Vocab:
    vocab = None

  monkeypatch.setattr(command, 'load_dataset', lambda data: Vocab())
  monkeypatch.setattr(command.build, 'ensure_vectors', lambda cfg, vocab: built.append(
      (cfg.data.dataset, cfg.vectors.workers)) or 'path')
  monkeypatch.setattr(command.build, 'describe', lambda path: {
      'words_with_vectors': 1, 'vocabulary_words': 2, 'coverage': 0.5, 'corpus_tokens': 3, 'corpus': {}})
  command.main(['all', '--workers=auto'])
  assert built == [('sst', 'auto'), ('imdb', 'auto'), ('20news', 'auto')]
  built.clear()
  command.main(['imdb', 'sst', 'imdb', '--workers=2'])
  assert built == [('imdb', 2), ('sst', 2)]
  with pytest.raises(SystemExit, match="--workers='two': give a number of threads or 'auto'"):
    command.main(['sst', '--workers=two'])
  with pytest.raises(SystemExit):  # a count below one is the config's error, named
    command.main(['sst', '--workers=0'])
  assert 'vectors.workers=0' in capsys.readouterr().err


def test_two_runs_that_need_the_same_vectors_build_them_once(tmp_path, monkeypatch):
  """The second waits for the first's build (naming it) and reads its file."""
  import threading  # pylint: disable=g-import-not-at-top
  path = str(tmp_path / 'vectors' / 'sst_0123456789abcdef.vec')
  monkeypatch.setattr(build, 'vectors_path', lambda cfg, vocab: path)
  monkeypatch.setattr(build, 'check_against_record', lambda *args: None)
  builds = []

  def slow_build(cfg, vocab, target, log):
    builds.append(target)
    started.set()
    import time  # pylint: disable=g-import-not-at-top
    time.sleep(1.5)
    from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
    atomic_io.write_bytes(target, b'1 2\nw 0.5 0.5\n')
    info = {'sha256': atomic_io.sha256_file(target)}
    atomic_io.write_json(target[:-len('.vec')] + '.json', info)
    return info

  monkeypatch.setattr(build, '_build', slow_build)
  started, logs, results = threading.Event(), [], []
  cfg = config_lib.default_config('sst', 'bilstm')
  first = threading.Thread(target=lambda: results.append(build.ensure_vectors(cfg, None, log=lambda _: None)))
  first.start()
  assert started.wait(30)
  results.append(build.ensure_vectors(cfg, None, log=logs.append))  # while the first builds
  first.join()
  assert builds == [path] and results == [path, path]
  assert any('waiting for' in line and 'vectors sst_0123456789abcdef.vec' in line for line in logs)
  assert not os.path.exists(path[:-len('.vec')] + '.lease')


class _Vocab:
  """A vocabulary of 1,000 words (and the 4 specials) for the space checks."""
  tokens = ['<pad>', '<unk>', '<sos>', '<eos>'] + [f'w{i}' for i in range(1000)]

  def __len__(self):
    return len(self.tokens)


def _vectors_command(monkeypatch, directory):
  """`python -m attn_jax.vectors sst --directory=DIRECTORY`, without loading SST."""
  from attn_jax.vectors import __main__ as command  # pylint: disable=g-import-not-at-top

  class Loaded:
    vocab = _Vocab()

  monkeypatch.setattr(command, 'load_dataset', lambda data: Loaded())
  monkeypatch.setattr(build, 'vectors_path', lambda cfg, vocab: os.path.join(
      build.cache_directory(cfg.vectors.directory), 'sst_0123456789abcdef.vec'))
  return lambda: command.main(['sst', f'--directory={directory}'])


def _one_line(capsys, run) -> str:
  with pytest.raises(SystemExit) as raised:
    run()
  assert raised.value.code not in (0, None)
  err = capsys.readouterr().err.strip()
  assert err.startswith('error: ') and '\n' not in err, err
  return err


def test_a_full_disk_while_writing_the_training_text_is_one_line(tmp_path, monkeypatch, capsys):
  """Issue 76: the build's temporary text filled the disk: a traceback from
  tempfile's close, now one line naming the folder and how much it held."""
  import errno  # pylint: disable=g-import-not-at-top

  def fills_up(cfg, vocab, f):
    f.write('word ' * 20_000)
    f.flush()
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

  monkeypatch.setattr(build, 'write_corpus', fills_up)
  monkeypatch.setattr(build.output_folders, 'free_bytes', lambda path: 0)
  directory = tmp_path / 'vectors'
  err = _one_line(capsys, _vectors_command(monkeypatch, directory))
  assert err == (f'error: cannot write {directory}: the disk is full (errno 28; 0 bytes free; the training '
                 'text alone needs more than the 100 KB it held); free space there or give another folder '
                 'with --directory')
  assert os.listdir(directory) == []  # the temporary text is gone


def test_a_folder_without_room_for_the_vectors_is_refused_before_training(tmp_path, monkeypatch, capsys):
  monkeypatch.setattr(build, 'write_corpus', lambda cfg, vocab, f: {})
  monkeypatch.setattr(build.output_folders, 'free_bytes', lambda path: 3_000_000)
  monkeypatch.setattr(build.fasttext, 'train', lambda *a, **k: pytest.fail('trained without room to keep it'))
  directory = tmp_path / 'vectors'
  err = _one_line(capsys, _vectors_command(monkeypatch, directory))
  # 1,000 words × 300 floats: 1.2 MB from the training child, 3.0 MB of .vec text.
  assert err == (f'error: cannot write {directory}: too little free space for the vectors (errno 28; 3.0 MB free; '
                 'about 4.2 MB more needed for the vectors); free space there or give another folder with --directory')


def test_a_read_only_vectors_directory_is_one_line(tmp_path, monkeypatch, capsys):
  if os.geteuid() != 0:
    pytest.skip('a read-only mount needs root (CI runs as root)')
  (tmp_path / 'ro').mkdir()
  subprocess.run(['mount', '--bind', str(tmp_path / 'ro'), str(tmp_path / 'ro')], check=True)
  try:
    subprocess.run(['mount', '-o', 'remount,ro,bind', str(tmp_path / 'ro')], check=True)
    for directory in (tmp_path / 'ro', tmp_path / 'ro' / 'vectors'):
      assert _one_line(capsys, _vectors_command(monkeypatch, directory)) == (
          f'error: cannot write {directory}: the file system is read-only (errno 30); give another folder '
          'with --directory')
  finally:
    subprocess.run(['umount', str(tmp_path / 'ro')], check=True)
