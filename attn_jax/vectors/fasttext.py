"""fastText-style vectors (CBOW or skip-gram with character n-grams) by gensim,
or word2vec's (no n-grams; S&S's 200-d vectors) with `method='word2vec'`.

gensim is an optional dependency (`pip install 'attn-jax[vectors]'`). With one
worker thread (`workers=1`, the default) and a fixed seed its training is
deterministic for a given
OpenBLAS kernel, so `train` runs it in a child process (`worker`) with the
kernel pinned (`blas`): the same corpus then gives the same vectors, bit for
bit, on any x86-64 machine with AVX2. More workers train faster, but their
threads update shared weights in no fixed order: not bit-reproducible.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, Optional, Sequence

import numpy as np

from attn_jax.core import errors
from attn_jax.core.errors import ConfigError
from attn_jax.vectors import blas

# gensim options a recipe sets; anything else is gensim's default.
RECIPE_KEYS = ('epochs', 'window', 'min_count', 'sg', 'negative', 'min_n', 'max_n', 'seed')


def _gensim():
  try:
    from gensim.models import FastText  # pylint: disable=g-import-not-at-top
    from gensim.models.callbacks import CallbackAny2Vec  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise ConfigError(
        'building in-domain word vectors needs gensim: pip install "attn-jax[vectors]" '
        '(or pip install gensim). Alternatively set --config.model.embeddings_file to a '
        'word2vec/fastText text file, or to None to train embeddings from scratch.') from e
  return FastText, CallbackAny2Vec


def train_vectors(corpus_path: str, dim: int, recipe: dict,
                  on_epoch: Callable[[int, float], None] = lambda epoch, seconds: None):
  """Trains on a one-document-per-line file under the pinned BLAS kernel;
  returns gensim's KeyedVectors of the corpus vocabulary (see `train`)."""
  return train(corpus_path, dim, recipe, on_epoch)[0]


def train(corpus_path: str, dim: int, recipe: dict,
          on_epoch: Callable[[int, float], None] = lambda epoch, seconds: None,
          words: Optional[Sequence[str]] = None, log: Callable[[str], None] = print,
          workers: int = 1):
  """Trains in a child process whose OpenBLAS kernel is pinned (`blas`).

  Args:
    corpus_path: space-separated tokens, one document a line.
    dim: vector size.
    recipe: the `RECIPE_KEYS` values.
    on_epoch: called after each epoch with (epochs done, seconds so far).
    words: if given, only these words' vectors come back (those the corpus
      vocabulary has, in this order), not the whole vocabulary's.
    log: gets one line if this CPU cannot run the pinned kernel.
    workers: gensim's training threads (1: bit-reproducible).

  Returns:
    (KeyedVectors, environment): plain gensim KeyedVectors of the in-vocabulary
    words (the fastText n-gram table stays in the child: their vectors are the
    same bytes `wv[word]` gives there), and the child's BLAS kernel and library
    versions (`blas.in_use`).

  Raises:
    ConfigError (or another AttnJaxError) raised in the child, e.g. gensim is
    not installed; TrainingError if the child fails otherwise.
  """
  folder = os.path.dirname(os.path.abspath(corpus_path))
  with tempfile.TemporaryDirectory(prefix='vectors-job-', dir=folder) as job:
    with open(os.path.join(job, 'job.json'), 'w', encoding='utf-8') as f:
      json.dump({'corpus_path': os.path.abspath(corpus_path), 'dim': dim, 'recipe': recipe,
                 'words': None if words is None else list(words), 'workers': workers}, f)
    status, result, stderr = _run_worker(job, on_epoch, blas.child_environment(log))
    if 'error' in result:
      error = getattr(errors, result['error'], None)
      if not (isinstance(error, type) and issubclass(error, errors.AttnJaxError)):
        error = ConfigError
      raise error(result['message'])
    if status != 0 or 'keys' not in result:
      raise errors.TrainingError(f'training the word vectors failed in their child process '
                                 f'({_exit_reason(status)}): {_last_line(stderr)}')
    vectors = np.load(os.path.join(job, 'vectors.npy'))
  from gensim.models import KeyedVectors  # pylint: disable=g-import-not-at-top
  wv = KeyedVectors(dim)
  wv.add_vectors(result['keys'], vectors)
  return wv, result['environment']


def _run_worker(job: str, on_epoch: Callable[[int, float], None], env: dict):
  """Runs `worker` on `job`, passing its `epoch N SECONDS` lines to `on_epoch`;
  returns its exit status, result.json ({} if none) and stderr."""
  # A checkout run as `python /path/run.py` from elsewhere: let the child import it too
  # (an installed package's site-packages is on its path already).
  package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  if os.path.basename(package_root) not in ('site-packages', 'dist-packages'):
    env['PYTHONPATH'] = os.pathsep.join(p for p in (package_root, env.get('PYTHONPATH')) if p)
  with tempfile.TemporaryFile('w+', encoding='utf-8', errors='replace') as stderr:
    child = subprocess.Popen([sys.executable, '-m', 'attn_jax.vectors.worker', job], env=env,
                             stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
      for line in child.stdout:
        parts = line.split()
        if len(parts) == 3 and parts[0] == 'epoch':
          on_epoch(int(parts[1]), float(parts[2]))
      status = child.wait()
    finally:  # an interrupted or failed parent leaves no child training
      if child.poll() is None:
        child.kill()
        child.wait()
      child.stdout.close()
    stderr.seek(0)
    message = stderr.read()
  try:
    with open(os.path.join(job, 'result.json'), encoding='utf-8') as f:
      result = json.load(f)
  except (OSError, ValueError):
    result = {}
  return status, result, message


def _exit_reason(status: int) -> str:
  if status == -getattr(signal, 'SIGKILL', 9):
    return 'killed by SIGKILL: out of memory?'
  return f'killed by signal {-status}' if status < 0 else f'exit status {status}'


def _last_line(text: str) -> str:
  lines = text.strip().splitlines()
  return lines[-1] if lines else 'it wrote no message'


def train_here(corpus_path: str, dim: int, recipe: dict,
               on_epoch: Callable[[int, float], None] = lambda epoch, seconds: None,
               workers: int = 1):
  """Trains in this process, under whatever BLAS kernel it loaded (the
  child's `worker` calls this); returns gensim's KeyedVectors."""
  fasttext, callback_base = _gensim()

  class EpochCallback(callback_base):
    def __init__(self):
      self.done, self.started = 0, time.time()

    def on_epoch_end(self, model):
      self.done += 1
      on_epoch(self.done, time.time() - self.started)

  if recipe.get('method', 'fasttext') == 'word2vec':
    from gensim.models import Word2Vec  # pylint: disable=g-import-not-at-top
    model = Word2Vec(vector_size=dim, workers=workers,
                     **{k: recipe[k] for k in RECIPE_KEYS if k not in ('min_n', 'max_n')})
  else:
    model = fasttext(vector_size=dim, workers=workers, **{k: recipe[k] for k in RECIPE_KEYS})
  model.build_vocab(corpus_file=corpus_path)
  model.train(corpus_file=corpus_path, total_words=model.corpus_total_words,
              total_examples=model.corpus_count, epochs=model.epochs, callbacks=[EpochCallback()])
  return model.wv
