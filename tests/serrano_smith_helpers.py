"""S&S's models on tiny random documents, for the tests of their models and erasure."""

import jax
import numpy as np

from attn_jax.config.serrano_smith_config import ss_config
from attn_jax.data.vocabulary import EOS, SOS
from attn_jax.models import build_model

VOCAB = 30


def model_of(family, encoder, classes_dataset='imdb_ratings'):
  cfg = ss_config(classes_dataset, family, f'{encoder},smoke').model
  model = build_model(cfg, VOCAB)
  return model, model.init(jax.random.PRNGKey(3))


def random_documents(seed, n=4):
  rng = np.random.default_rng(seed)
  docs = []
  for _ in range(n):
    sentences = [list(rng.integers(4, VOCAB, size=rng.integers(1, 7))) for _ in range(rng.integers(1, 5))]
    docs.append(sentences)
  return docs


def flat_and_lengths(docs):
  sequences = [np.array([SOS] + [w for s in d for w in s] + [EOS], np.int32) for d in docs]
  lengths = [np.array([len(s) for s in d], np.int32) for d in docs]
  return sequences, lengths
