"""Sentence splitting for the hierarchical models (S&S §3, HAN).

A documented rule, not a trained splitter: attn-jax's core install has no
NLP library, and spaCy's or NLTK's models cannot be fetched offline. S&S
split with their data pipeline's splitter; what matters for their tests is
that sentences are the items the final attention weighs, which any sensible
splitter gives. The rule:

1. Hard breaks: an HTML line break (`<br />`, aclImdb's paragraph mark) or
   a blank line always ends a sentence. Other line breaks are spaces
   (newsgroup posts wrap lines inside sentences).
2. Soft breaks: a run of `.`, `!` or `?` (closing quotes or brackets may
   follow) ends a sentence when whitespace follows and the next character
   can start one (a letter, a digit, an opening quote or bracket) — except
   after a known abbreviation (`Mr.`, `Dr.`, `vs.`, `e.g.`, …) or a single
   capital letter (an initial: `J. R. R. Tolkien`), when `.` is the mark.
3. Sentences that hold no word character are dropped (a lone `...`).

Lower-case text splits too: rule 2 does not need a capital after the mark,
so reviews written without capitals still split at their full stops.
"""

import re

_HARD_BREAK = re.compile(r'<br\s*/?>|\n\s*\n', re.IGNORECASE)
_SPACES = re.compile(r'\s+')
# A mark run, optional closers, then whitespace and a sentence start.
_SOFT_BREAK = re.compile(r'([.!?]+["\')\]]*)\s+(?=["\'(\[]?[\w])')
_WORD = re.compile(r'\w')
ABBREVIATIONS = frozenset({
    'mr', 'mrs', 'ms', 'dr', 'prof', 'st', 'jr', 'sr', 'vs', 'v', 'etc', 'e.g', 'i.e', 'cf',
    'no', 'vol', 'mt', 'inc', 'ltd', 'co', 'corp', 'dept', 'approx', 'fig', 'gen', 'col', 'lt',
    'sgt', 'capt', 'rev', 'sen', 'rep', 'gov', 'pres', 'ft', 'u.s', 'u.k', 'a.k.a'})


def _ends_with_abbreviation(text: str) -> bool:
  """Whether `text` (which ends just before a '.') ends in an abbreviation or an initial."""
  last = text.rsplit(None, 1)[-1] if text.strip() else ''
  last = last.lstrip('("\'[')
  return last.lower() in ABBREVIATIONS or (len(last) == 1 and last.isupper())


def _split_paragraph(paragraph: str) -> list[str]:
  sentences, start = [], 0
  for match in _SOFT_BREAK.finditer(paragraph):
    mark = match.group(1)
    if mark.startswith('.') and len(mark.rstrip('"\')]')) == 1 and _ends_with_abbreviation(
        paragraph[start:match.start()]):
      continue
    sentences.append(paragraph[start:match.end(1)])
    start = match.end()
  sentences.append(paragraph[start:])
  return sentences


def split_sentences(text: str) -> list[str]:
  """A document's sentences, in order, each stripped; none without a word character."""
  out = []
  for paragraph in _HARD_BREAK.split(text):
    paragraph = _SPACES.sub(' ', paragraph).strip()
    if paragraph:
      out.extend(s.strip() for s in _split_paragraph(paragraph))
  return [s for s in out if _WORD.search(s)]
