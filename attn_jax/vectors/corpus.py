"""The unlabelled text in-domain vectors are trained on (issue: faithful models).

Every source dataset's documents, tokenised the way the *target* dataset's
protocol tokenises (so the vectors' words are the target vocabulary's words),
one document per line. The target's held-out text never enters: its dev and
test documents (by id), every raw split that only feeds its dev or test
splits (`HELD_OUT_RAW_SPLITS`), and any document whose tokens equal those of
one of its dev or test documents (aclImdb has duplicate reviews). S&S's
targets (`imdb_ratings`, `20news_topics`) hold out their test split only:
S&S trained word2vec on train + dev (`protocols.Protocol.held_out`).

S&S's preparation (`vectors.lines='sentences'`, `vectors.oov_as_unk`) writes
one sentence a line and every word outside the target vocabulary as `<UNK>`,
so the vocabulary's UNK row starts from a trained vector, not zero.
"""

import collections
import hashlib
from typing import Callable, IO, Iterator

from attn_jax.core.errors import ConfigError
from attn_jax.data import newsgroups_text, protocols, serrano_smith, tokenize
from attn_jax.data.vocabulary import SPECIALS, UNK

SOURCES = ('imdb', 'sst', '20news', 'agnews')
TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    'sst': tokenize.sst, 'imdb': tokenize.keras_words,
    '20news': tokenize.newsgroups, 'agnews': tokenize.spacy_like}
# Raw splits that feed only a dataset's dev or test split: all their text is
# held out when the dataset is the target (IMDB's test sample is 20 % of
# aclImdb test; the other 80 % is held out too).
# Targets whose documents have sentences: text -> sentences of words.
SENTENCES = {'imdb_ratings': serrano_smith.sentence_words, '20news_topics': serrano_smith.sentence_words}
UNK_WORD = SPECIALS[UNK]
HELD_OUT_RAW_SPLITS = {'sst': ('dev', 'test'), 'imdb': ('test',), '20news': (), 'agnews': ('test',),
                       'imdb_ratings': ('test',), '20news_topics': ()}


def raw_texts(dataset: str, raw: dict[str, list[dict]]) -> Iterator[tuple[str, str, str]]:
  """(raw split, document id, text) of every record, as the protocols read it."""
  for split, records in raw.items():
    for r in records:
      if dataset == '20news':
        yield split, r['id'], newsgroups_text.strip_all(r['text'])
      elif dataset == 'agnews':
        yield split, r['id'], f'{r["title"]}\n{r["description"]}'
      else:
        yield split, r['id'], r['text']


def _doc_hash(tokens: list[str]) -> bytes:
  return hashlib.sha1(' '.join(tokens).encode()).digest()


def held_out(target: str, raw: dict[str, list[dict]]) -> tuple[set[str], set[bytes]]:
  """(ids, token hashes): the ids of the target's dev and test documents and of
  every raw split in `HELD_OUT_RAW_SPLITS`; the token hashes of its dev and
  test documents (the ones models are selected and evaluated on)."""
  wanted = ('test',) if target == 'agnews' and 'train' not in raw else ('train', 'dev', 'test')
  protocol = protocols.PROTOCOLS[target]
  prepared = protocol.prepare(raw, wanted)
  ids, hashes = set(), set()
  for name in protocol.held_out:
    split = prepared.splits.get(name)
    if split is not None:
      ids.update(split.ids)
      hashes.update(_doc_hash(d) for d in split.docs)
  for split in HELD_OUT_RAW_SPLITS[target]:
    ids.update(r['id'] for r in raw.get(split, ()))
  return ids, hashes


def write_corpus(target: str, corpora: tuple[str, ...], load_raw: Callable[[str], dict],
                 out: IO[str], lines: str = 'documents',
                 vocabulary: frozenset[str] | None = None) -> dict:
  """Writes the corpus for `target` to `out`, one document per line.

  Args:
    target: the dataset the vectors are for (its tokeniser; its held-out text
      is excluded).
    corpora: source datasets, in order.
    load_raw: dataset -> raw records by split (`builders.load_raw`).
    lines: 'documents', or 'sentences' (one sentence a line; targets in
      `SENTENCES`).
    vocabulary: if given, every other word is written as `<UNK>`.

  Returns:
    {source: {'documents', 'tokens', 'held_out'}} counts.
  """
  raw_by_source = {name: load_raw(name) for name in corpora}
  target_source = protocols.PROTOCOLS[target].raw
  target_raw = raw_by_source[target_source] if target_source in raw_by_source else load_raw(target_source)
  ids, hashes = held_out(target, target_raw)
  if lines == 'sentences' and target not in SENTENCES:
    raise ConfigError(f'vectors.lines=sentences needs a dataset with sentences ({", ".join(SENTENCES)}), '
                      f'not {target!r}; use vectors.lines=documents')
  split = SENTENCES[target] if lines == 'sentences' else None
  tokenizer = TOKENIZERS.get(target) or protocols.TOKENIZERS[target]
  stats = collections.OrderedDict()
  for name in corpora:
    counts = {'documents': 0, 'tokens': 0, 'held_out': 0}
    for _, doc_id, text in raw_texts(name, raw_by_source[name]):
      pieces = split(text) if split else [tokenizer(text)]
      tokens = [w for piece in pieces for w in piece]
      if not tokens:
        continue
      if (name == target_source and doc_id in ids) or _doc_hash(tokens) in hashes:
        counts['held_out'] += 1
        continue
      for piece in pieces:
        if vocabulary is not None:
          piece = [w if w in vocabulary else UNK_WORD for w in piece]
        out.write(' '.join(piece) + '\n')
      counts['documents'] += 1
      counts['tokens'] += len(tokens)
    stats[name] = counts
  return dict(stats)
