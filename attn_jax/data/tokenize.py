"""The tokenisers of Jain & Wallace's preprocessing (J&W's code,
`successar/AttentionExplanation`: `preprocess/*/*.ipynb`, `preprocess/vectorizer.py::cleaner`).

J&W used spaCy's English tokeniser; attn-jax does not depend on spaCy, so
`spacy_like` approximates it with a regular expression. On SST the result is
exact (same binary splits, same 13,826-word vocabulary); on the other
datasets small differences in punctuation handling remain.
"""

import re

_NON_WORD = re.compile(r'\W')
_SPACES = re.compile(r'\s+')
# Words (with numeric continuations such as 3.5, 10:30, 1,000 kept whole, as
# spaCy does), else any single non-space symbol.
_SPACY_LIKE = re.compile(r"\w+(?:[.,:/-]\d+)*|[^\w\s]")
_NON_WORD_RUN = re.compile(r'(\W)+')
# Keras `text_to_word_sequence` filters; the apostrophe is kept.
_KERAS_FILTERS = str.maketrans({c: ' ' for c in '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'})


def sst(text: str) -> list[str]:
  """SST leaves joined by spaces -> tokens: drop -LRB-, -RRB-, non-word chars."""
  text = text.replace('-LRB-', '').replace('-RRB-', ' ')
  text = _SPACES.sub(' ', _NON_WORD.sub(' ', text)).strip().lower()
  return text.split(' ') if text else []


def keras_words(text: str) -> list[str]:
  """IMDB: lower-case, Keras punctuation filter, split on whitespace.

  J&W used Keras's pre-tokenised IMDB (`imdb_full.pkl`), made this way; the
  `<br />` tags become the word `br`, as there.
  """
  return text.lower().translate(_KERAS_FILTERS).split()


def spacy_like(text: str) -> list[str]:
  """J&W `cleaner`: tokenise, lower-case, any token with a digit -> 'qqq'."""
  tokens = _SPACY_LIKE.findall(_SPACES.sub(' ', text.strip()))
  return ['qqq' if any(c.isdigit() for c in t) else t.lower() for t in tokens]


def lowercase_words(text: str) -> list[str]:
  """S&S (App. A.1): `spacy_like`'s tokens, lower-cased, numbers kept."""
  return [t.lower() for t in _SPACY_LIKE.findall(text)]


def newsgroups(text: str) -> list[str]:
  """J&W 20News cleaning: `spacy_like`, then each non-word run -> its last char."""
  text = _NON_WORD_RUN.sub(r' \1 ', ' '.join(spacy_like(text)))
  text = _SPACES.sub(' ', text).strip()
  return text.split(' ') if text else []
