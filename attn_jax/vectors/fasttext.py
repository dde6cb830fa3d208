"""fastText-style vectors (CBOW or skip-gram with character n-grams) by gensim,
or word2vec's (no n-grams; S&S's 200-d vectors) with `method='word2vec'`.

gensim is an optional dependency (`pip install 'attn-jax[vectors]'`). With one
worker thread and a fixed seed its training is deterministic: the same corpus
gives the same vectors, bit for bit.
"""

import time
from typing import Callable

from attn_jax.core.errors import ConfigError

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
  """Trains on a one-document-per-line file; returns gensim's KeyedVectors.

  Args:
    corpus_path: space-separated tokens, one document a line.
    dim: vector size.
    recipe: the `RECIPE_KEYS` values.
    on_epoch: called after each epoch with (epochs done, seconds so far).
  """
  fasttext, callback_base = _gensim()

  class EpochCallback(callback_base):
    def __init__(self):
      self.done, self.started = 0, time.time()

    def on_epoch_end(self, model):
      self.done += 1
      on_epoch(self.done, time.time() - self.started)

  if recipe.get('method', 'fasttext') == 'word2vec':
    from gensim.models import Word2Vec  # pylint: disable=g-import-not-at-top
    model = Word2Vec(vector_size=dim, workers=1,
                     **{k: recipe[k] for k in RECIPE_KEYS if k not in ('min_n', 'max_n')})
  else:
    model = fasttext(vector_size=dim, workers=1, **{k: recipe[k] for k in RECIPE_KEYS})
  model.build_vocab(corpus_file=corpus_path)
  model.train(corpus_file=corpus_path, total_words=model.corpus_total_words,
              total_examples=model.corpus_count, epochs=model.epochs, callbacks=[EpochCallback()])
  return model.wv
