"""The unlabelled text in-domain vectors are trained on (issue: faithful models).

Every source dataset's documents, tokenised the way the *target* dataset's
protocol tokenises (so the vectors' words are the target vocabulary's words),
one document per line. The target's held-out text never enters: its dev and
test documents (by id), every raw split that only feeds its dev or test
splits (its `held_out_raw`), and any document whose tokens equal those of
one of its dev or test documents (aclImdb has duplicate reviews). S&S's
targets (`imdb_ratings`, `20news_topics`) hold out their test split only:
S&S trained word2vec on train + dev (their `held_out`). What each dataset
gives and holds out is declared in its module (`attn_jax.data.datasets`).

S&S's preparation (`vectors.lines='sentences'`, `vectors.oov_as_unk`) writes
one sentence a line and every word outside the target vocabulary as `<UNK>`,
so the vocabulary's UNK row starts from a trained vector, not zero.
"""

import collections
import hashlib
from typing import Callable, IO, Iterator

from attn_jax.core.errors import ConfigError
from attn_jax.core.registry import DATASETS
from attn_jax.data.vocabulary import SPECIALS, UNK

UNK_WORD = SPECIALS[UNK]


def raw_texts(dataset: str, raw: dict[str, list[dict]]) -> Iterator[tuple[str, str, str]]:
  """(raw split, document id, text) of every record, as the dataset gives its corpus text."""
  text = DATASETS[dataset].corpus_text
  for split, records in raw.items():
    for r in records:
      yield split, r['id'], text(r)


def _doc_hash(tokens: list[str]) -> bytes:
  return hashlib.sha1(' '.join(tokens).encode()).digest()


def held_out(target: str, raw: dict[str, list[dict]]) -> tuple[set[str], set[bytes]]:
  """(ids, token hashes): the ids of the target's dev and test documents and of
  every raw split in its `held_out_raw`; the token hashes of its dev and
  test documents (the ones models are selected and evaluated on)."""
  wanted = ('train', 'dev', 'test') if 'train' in raw else ('test',)  # AG News: test.csv only
  spec = DATASETS[target]
  prepared = spec.prepare(raw, wanted)
  ids, hashes = set(), set()
  for name in spec.held_out:
    split = prepared.splits.get(name)
    if split is not None:
      ids.update(split.ids)
      hashes.update(_doc_hash(d) for d in split.docs)
  for split in spec.held_out_raw:
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
    lines: 'documents', or 'sentences' (one sentence a line; targets that
      declare `corpus_sentences`).
    vocabulary: if given, every other word is written as `<UNK>`.

  Returns:
    {source: {'documents', 'tokens', 'held_out'}} counts.
  """
  raw_by_source = {name: load_raw(name) for name in corpora}
  spec = DATASETS[target]
  target_source = spec.raw_name
  target_raw = raw_by_source[target_source] if target_source in raw_by_source else load_raw(target_source)
  ids, hashes = held_out(target, target_raw)
  if lines == 'sentences' and spec.corpus_sentences is None:
    with_sentences = ', '.join(d.name for d in DATASETS.values() if d.corpus_sentences is not None)
    raise ConfigError(f'vectors.lines=sentences needs a dataset with sentences ({with_sentences}), '
                      f'not {target!r}; use vectors.lines=documents')
  split = spec.corpus_sentences if lines == 'sentences' else None
  tokenizer = spec.corpus_tokenizer or spec.tokenizer
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
