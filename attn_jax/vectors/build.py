"""Building and caching the in-domain vectors a config asks for.

`--config.model.embeddings_file=in_domain` names the vectors made by
`ensure_vectors`: 300-d fastText-style vectors trained on the unlabelled
text of `config.vectors.corpora` (the target dataset's dev and test text held
out, see `corpus`), restricted to the target vocabulary's words and written
as a word2vec text file that `load_word_vectors` reads. Words the corpus
lacks (fewer than `min_count` occurrences) are not in the file and start at
zero, as J&W's missing fastText words did. The file is cached under a key of
everything it depends on — recipe, source files, vocabulary — so a second
run finds it, and a changed recipe or source builds a new one. Training runs
in a child process with OpenBLAS's kernel pinned (`blas`), so the same key
gives the same bytes on any x86-64 machine with AVX2; each build or cache hit
says in one line whether the file matches the committed record of its recipe
in results/vectors.

`vectors.workers` > 1 (or 'auto': every core) trains with that many gensim
threads: faster, but the threads update shared weights in no fixed order, so
such vectors are not bit-for-bit reproducible. The thread count is part of
the cache key and of the file's record, and the run's `embeddings.json` says
which vectors it started from. Before a build, one line says how long it will
take, from the tokens per second an earlier build measured on this machine
(`core.estimates.MeasuredRates`), else from the committed build benchmark's
`rates` (results/benchmarks/vector_build_*.json, read by
`core.estimates.committed_rate`) of a machine with as many cores.
"""

import contextlib
import errno
import hashlib
import json
import os
import tempfile
import time
from typing import Callable, Optional

import ml_collections
import numpy as np
import tqdm

from attn_jax.core import atomic_io, estimates, leases, output_folders
from attn_jax.core.registry import DATASETS
from attn_jax.data import builders, sources
from attn_jax.data.datasets.dataset_spec import corpus_sources
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.core.errors import ConfigError
from attn_jax.vectors import corpus, fasttext

IN_DOMAIN = 'in_domain'
ENV_VAR = 'ATTN_JAX_VECTORS'
VERSION = 1  # bumped when the corpus or the file format changes
DIRECTORY_OPTION = '--config.vectors.directory (python -m attn_jax.vectors: --directory)'


def cache_directory(configured: Optional[str]) -> str:
  return (configured or os.environ.get(ENV_VAR)
          or os.path.join(os.path.expanduser('~'), '.cache', 'attn_jax', 'vectors'))


def corpora(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  names = tuple(n.strip() for n in cfg.vectors.corpora.split(',') if n.strip())
  unknown = [n for n in names if n not in corpus_sources()]
  if unknown or not names:
    raise ConfigError(f'vectors.corpora={cfg.vectors.corpora!r}: choose one or more of '
                      f'{", ".join(corpus_sources())}, comma-separated')
  return names


def workers(cfg: ml_collections.ConfigDict) -> int:
  """The gensim threads `vectors.workers` asks for ('auto': this process's cores)."""
  value = cfg.vectors.get('workers', 1)
  return estimates.available_cores() if value == 'auto' else int(value)


def recipe(cfg: ml_collections.ConfigDict) -> dict:
  """Everything the vectors depend on besides the source files and vocabulary."""
  found = {'target': cfg.data.dataset, 'corpora': list(corpora(cfg)), 'dim': cfg.model.embed_dim,
           'version': VERSION, **{k: cfg.vectors[k] for k in fasttext.RECIPE_KEYS}}
  method = cfg.vectors.get('method', 'fasttext')
  if method != 'fasttext':  # fastText recipes keep the cache keys they had before `method`
    found['method'] = method
  # Keys added later enter only away from their old value (old caches stay found).
  if cfg.vectors.get('lines', 'documents') != 'documents':
    found['lines'] = cfg.vectors.lines
  if cfg.vectors.get('oov_as_unk', False):
    found['oov_as_unk'] = True
  if workers(cfg) != 1:  # not bit-reproducible: the count is part of what was built
    found['workers'] = workers(cfg)
  return found


def _source_signature(name: str, data: ml_collections.ConfigDict):
  data_dir = sources.archive_dir(data.manual_dir)
  return builders.source_signature(sources.locate(name, data_dir)) if data_dir else 'download'


def vectors_path(cfg: ml_collections.ConfigDict, vocab: Vocabulary) -> str:
  """Where the vectors for `cfg` and `vocab` are (or will be) cached."""
  names = set(corpora(cfg)) | {DATASETS[cfg.data.dataset].raw_name}
  key = {'recipe': recipe(cfg),
         'sources': {n: _source_signature(n, cfg.data) for n in sorted(names)},
         'vocab': hashlib.sha256('\n'.join(vocab.tokens).encode()).hexdigest()}
  digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
  return os.path.join(cache_directory(cfg.vectors.directory), f'{cfg.data.dataset}_{digest}.vec')


def describe(path: str) -> Optional[dict]:
  """The sidecar record of a finished vectors file, or None if there is none
  or the file does not match it."""
  try:
    info = atomic_io.read_json(path[:-len('.vec')] + '.json')
  except (OSError, ValueError):
    return None
  if not os.path.exists(path) or info.get('sha256') != atomic_io.sha256_file(path):
    return None
  return info


def _write_vec(f, words: list[str], vectors: np.ndarray) -> None:
  f.write(f'{len(words)} {vectors.shape[1]}\n')
  for word, row in zip(words, vectors):
    f.write(word + ' ' + ' '.join(f'{x:.6g}' for x in row) + '\n')


def write_corpus(cfg: ml_collections.ConfigDict, vocab: Vocabulary, f) -> dict:
  """Writes the text `cfg.vectors` trains on (`corpus.write_corpus`, for
  `vocab`) to the open file `f`; returns the counts per source."""
  r = recipe(cfg)
  load = lambda name: builders.load_raw(name, cfg.data.manual_dir, cfg.data.tfds_data_dir)
  known = frozenset(vocab.tokens[4:]) if r.get('oov_as_unk') else None
  return corpus.write_corpus(cfg.data.dataset, tuple(r['corpora']), load, f, r.get('lines', 'documents'),
                             known)


def ensure_vectors(cfg: ml_collections.ConfigDict, vocab: Vocabulary,
                   log: Callable[[str], None] = print) -> str:
  """The path of the in-domain vectors for `cfg`'s dataset, built if missing.

  Raises:
    ConfigError: gensim is not installed, or `vectors.corpora` is invalid.
    DataError: a source dataset's files are missing or damaged.
  """
  path = vectors_path(cfg, vocab)
  info = describe(path)
  if info is None:
    atomic_io.require_folder(os.path.dirname(path), 'the vectors directory',
                             'point --config.vectors.directory (vectors: --directory) at a folder')
    # A read-only or full folder: one line naming it (and, found by `_build`, the space needed).
    with output_folders.writing_into(os.path.dirname(path), DIRECTORY_OPTION):
      os.makedirs(os.path.dirname(path), exist_ok=True)
      # One build per vectors file: a second run that needs the same vectors
      # waits for the first (naming it) and reads its file.
      with leases.guarded(path[:-len('.vec')] + leases.SUFFIX, f'vectors {os.path.basename(path)}',
                          cfg.wait_for_lock, log):
        info = describe(path)
        if info is None:
          info = _build(cfg, vocab, path, log)
  check_against_record(cfg.data.dataset, info, log)
  return path


def _build(cfg: ml_collections.ConfigDict, vocab: Vocabulary, path: str, log: Callable[[str], None]) -> dict:
  """Trains the vectors of `cfg` for `vocab` and writes `path` and its record; returns the record.

  Raises:
    StorageError: the folder filled up writing the training text (saying
      how much it held), or has too little room left for the vectors,
      found before training (`_require_space`).
  """
  r = recipe(cfg)
  threads = r.get('workers', 1)
  log(f'building in-domain word vectors for {cfg.data.dataset} from {", ".join(r["corpora"])} '
      f'({r["epochs"]} epochs, {_threads(threads)}) -> {path}')
  started = time.time()
  with tempfile.NamedTemporaryFile('w', dir=os.path.dirname(path), suffix='.corpus',
                                   encoding='utf-8') as text:
    try:
      counts = write_corpus(cfg, vocab, text)
      text.flush()
    except OSError as e:
      if not atomic_io.is_storage_error(e):
        raise
      written, free = os.fstat(text.fileno()).st_size, output_folders.free_bytes(os.path.dirname(path))
      with contextlib.suppress(OSError):  # drops what is still buffered: closing cannot fail again
        text.close()
      raise output_folders.folder_error(
          os.path.dirname(path), e, DIRECTORY_OPTION,
          f'the training text alone needs more than the {output_folders.size(written)} it held', free) from e
    _require_space(os.path.dirname(path), len(vocab) - 4, r['dim'])
    tokens = sum(c['tokens'] for c in counts.values())
    log(f'corpus: {sum(c["documents"] for c in counts.values())} documents, {tokens} tokens '
        f'({sum(c["held_out"] for c in counts.values())} held-out documents left out)')
    log(f'vectors: {estimate_line(r, tokens)}')
    bar = tqdm.tqdm(total=r['epochs'], unit='epoch', desc='vectors', dynamic_ncols=True,
                    disable=not cfg.train.progress)
    trained = []
    with bar:
      wanted = list(vocab.tokens[4:]) + ([corpus.UNK_WORD] if r.get('oov_as_unk') else [])
      wv, environment = fasttext.train(
          text.name, r['dim'], r,
          lambda done, s: (bar.update(1), trained.append(s)), words=wanted, log=log,
          workers=threads)
  if trained:
    estimates.MeasuredRates().put(rate_key(r), tokens * len(trained) / max(trained[-1], 1e-9),
                                  'corpus tokens/s')
  words = [w for w in wanted if w in wv.key_to_index]
  matrix = np.stack([wv[w] for w in words]) if words else np.zeros((0, r['dim']), np.float32)
  atomic_io.atomic_write(path, lambda f: _write_vec(f, words, matrix))
  info = {'recipe': r, 'corpus': counts, 'corpus_tokens': tokens,
          'vocabulary_words': len(vocab) - 4, 'words_with_vectors': len(words),
          'coverage': len(words) / max(len(vocab) - 4, 1),
          'seconds': round(time.time() - started, 1), 'sha256': atomic_io.sha256_file(path),
          'environment': environment, 'workers': threads, 'bit_reproducible': threads == 1}
  atomic_io.write_json(path[:-len('.vec')] + '.json', info)
  log(f'vectors for {len(words)} of {len(vocab) - 4} vocabulary words '
      f'({info["coverage"]:.1%}) in {info["seconds"]:.0f} s')
  return info


def _require_space(directory: str, words: int, dim: int) -> None:
  """Refuses, before training, a folder without room for what the build
  writes next: the trained vectors from the child (float32) and the .vec
  text (about 10 bytes a value)."""
  more = words * dim * 4 + words * (dim * 10 + 20)
  free = output_folders.free_bytes(directory)
  if free is not None and free < more:
    raise output_folders.folder_error(directory, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
                                      DIRECTORY_OPTION, f'about {output_folders.size(more)} more needed for the '
                                      'vectors', free, 'too little free space for the vectors')


def _threads(count: int) -> str:
  return ('one thread: bit-reproducible' if count == 1 else
          f'{count} threads: faster, not bit-for-bit reproducible (vectors.workers=1 is)')


def rate_key(r: dict) -> str:
  """What a build's tokens per second depend on: the trainer, not the corpus."""
  return estimates.key(what='vectors', method=r.get('method', 'fasttext'), sg=r['sg'], dim=r['dim'],
                       window=r['window'], negative=r['negative'], min_n=r['min_n'],
                       max_n=r['max_n'], workers=r.get('workers', 1))


def estimate_line(r: dict, tokens: int) -> str:
  """How long `r`'s training on `tokens` corpus tokens will take here, and why we think so."""
  measured = estimates.MeasuredRates().get(rate_key(r))
  if measured:
    source = 'measured by an earlier build on this machine'
  else:
    found = estimates.committed_rate(rate_key(r))  # benchmarks/vector_build.py's `rates`
    if found is None:
      return (f'{tokens * r["epochs"]:,} tokens to train; no rate measured on a machine like this '
              'one yet (the bar says after the first epoch)')
    measured, source = found[0], f'measured on a {estimates.available_cores()}-core machine: {found[1]}'
  return (f'about {estimates.duration(tokens * r["epochs"] / measured)} '
          f'({tokens * r["epochs"]:,} tokens at {measured:,.0f} tokens/s, {source})')


def records_directory() -> str:
  """results/vectors of the checkout this package is in (absent in an installed wheel)."""
  package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  return os.path.join(os.path.dirname(package), 'results', 'vectors')


def _environment(info: dict) -> str:
  found = info.get('environment')
  if not found:
    return 'OpenBLAS kernel and gensim version not recorded'
  return f'OpenBLAS kernel {found.get("kernel")}, gensim {found.get("gensim")}'


def check_against_record(dataset: str, info: dict, log: Callable[[str], None]) -> None:
  """One line: do these vectors have the sha256 of the committed record of the
  same recipe and corpus (results/vectors/<dataset>[_skipgram].json)? Says
  nothing if there is no such record."""
  name = f'{dataset}_skipgram.json' if info['recipe'].get('sg') else f'{dataset}.json'
  record = atomic_io.read_json_object(os.path.join(records_directory(), name))
  if (record is None or record.get('recipe') != info['recipe']
      or record.get('corpus_tokens') != info.get('corpus_tokens')):
    return
  if record.get('sha256') == info['sha256']:
    log(f'vectors match the committed record results/vectors/{name} (sha256 {info["sha256"][:12]})')
  else:
    log(f'vectors differ from the committed record results/vectors/{name}: sha256 '
        f'{info["sha256"][:12]} here ({_environment(info)}), {str(record.get("sha256"))[:12]} '
        f'recorded ({_environment(record)}); results computed from these vectors may differ '
        'from the committed ones')
