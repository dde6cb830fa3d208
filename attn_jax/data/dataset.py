"""The data a run trains and analyses on: encoded splits, vocabulary, fingerprint."""

import collections
import copy
import dataclasses
import functools
import hashlib
import json
from typing import Optional, Sequence

import ml_collections
import numpy as np

from attn_jax.data import builders, jain_wallace_protocol as jain_wallace, source_record
from attn_jax.data.vocabulary import Vocabulary
from attn_jax.core.errors import DataError
from attn_jax.core.registry import DATASETS

MIN_REAL_TOKENS = 2


@dataclasses.dataclass(frozen=True)
class EncodedSplit:
  sequences: list[np.ndarray]  # each int32 [n + 2]: SOS, n word ids, EOS
  labels: np.ndarray           # [N] int32
  ids: list[str]
  # Hierarchical datasets: each document's words per sentence (int32 [S],
  # summing to n); the words of sentence s follow those of s - 1. None: flat.
  sentence_lengths: Optional[list[np.ndarray]] = None
  # Paired datasets (QA, NLI): each document's query, int32 [m + 2] (SOS, m
  # word ids, EOS). None: single texts.
  queries: Optional[list[np.ndarray]] = None
  # Known evidence: int32 positions in `sequences[i]` (SOS is 0) of the words
  # that support the label (bAbI's supporting facts). None: not known.
  evidence: Optional[list[np.ndarray]] = None

  def __len__(self) -> int:
    return len(self.sequences)

  def head(self, count: int) -> 'EncodedSplit':
    """The first `count` documents."""
    return self.take(range(min(count, len(self))))

  def take(self, indices: Sequence[int]) -> 'EncodedSplit':
    """The documents at `indices`, in that order."""
    indices = [int(i) for i in indices]

    def pick(values):
      return None if values is None else [values[i] for i in indices]
    return EncodedSplit(pick(self.sequences), self.labels[np.asarray(indices, int)], pick(self.ids),
                        pick(self.sentence_lengths), pick(self.queries), pick(self.evidence))

  @property
  def lengths(self) -> np.ndarray:
    """[N] each document's length (a paired document's passage's), SOS and EOS counted."""
    return np.array([len(s) for s in self.sequences], dtype=np.int32)

  @functools.cached_property
  def rows(self) -> list[np.ndarray]:
    """What a batch row holds: the document; a paired document's passage
    followed by its query (`attn_jax.models.qa`)."""
    if self.queries is None:
      return self.sequences
    return [np.concatenate([p, q]) for p, q in zip(self.sequences, self.queries)]


@dataclasses.dataclass(frozen=True)
class Dataset:
  name: str
  vocab: Vocabulary
  splits: dict[str, EncodedSplit]
  fingerprint: str  # changes whenever any token id, label or split member does
  # What the data was prepared from: {'standard': bool, 'files': {role: {'name', 'bytes',
  # 'sha256', 'matches_reference'}}, 'notes': [str]}; see `source_record`. Not part of
  # the fingerprint, which depends only on the encoded data.
  source: dict = dataclasses.field(default_factory=dict)
  classes: tuple[str, ...] = ('neg', 'pos')  # class names by label

  @property
  def num_classes(self) -> int:
    return len(self.classes)

  @property
  def hierarchical(self) -> bool:
    """Whether documents come with sentences (S&S's HAN can read them)."""
    return all(s.sentence_lengths is not None for s in self.splits.values())

  @property
  def pos_weight(self) -> float:
    """n_neg / n_pos of the train split: J&W's weight on positive examples
    (binary data); 1 for multi-class data, which S&S do not weight."""
    if self.num_classes > 2:
      return 1.0
    labels = self.splits['train'].labels
    return float((labels == 0).sum() / max((labels == 1).sum(), 1))

  def summary(self) -> dict:
    def counts(split):
      if self.num_classes == 2:
        return {'size': len(split), 'positive': int(split.labels.sum())}
      return {'size': len(split), 'per_class': np.bincount(split.labels, minlength=self.num_classes).tolist()}

    out = {'dataset': self.name, 'fingerprint': self.fingerprint, 'vocab_size': len(self.vocab),
           'splits': {s: counts(v) for s, v in self.splits.items()}, 'source': self.source}
    if self.num_classes > 2:
      out['classes'] = list(self.classes)
    return out


def encode_documents(docs: Sequence[Sequence[str]], vocab: Vocabulary,
                     ids: Sequence[str], where: str = 'input') -> list[np.ndarray]:
  """Encodes tokenised documents; each needs at least two real tokens.

  Raises:
    DataError: naming the first empty or one-token document.
  """
  for doc, doc_id in zip(docs, ids):
    if len(doc) < MIN_REAL_TOKENS:
      raise DataError(
          f'{where}: document {doc_id!r} has {len(doc)} token(s) after tokenisation; '
          f'at least {MIN_REAL_TOKENS} are needed (attention over one token is '
          'trivially 1, and rankings, Kendall tau and leave-one-out are undefined). '
          'Remove it, or keep the length filter of the J&W protocol.')
  return [vocab.encode(doc) for doc in docs]


def fingerprint(vocab: Vocabulary, splits: dict[str, EncodedSplit]) -> str:
  h = hashlib.sha256('\n'.join(vocab.tokens).encode())
  for name in sorted(splits):
    split = splits[name]
    h.update(name.encode())
    h.update(split.labels.astype(np.int32).tobytes())
    h.update(split.lengths.tobytes())
    for seq in split.sequences:
      h.update(seq.tobytes())
    # Single flat texts keep their earlier fingerprints.
    for part, values in (('sentences', split.sentence_lengths), ('queries', split.queries),
                         ('evidence', split.evidence)):
      if values is not None:
        h.update(part.encode())
        for v in values:
          h.update(np.asarray(v, np.int32).tobytes() + b'|')
  return h.hexdigest()[:16]


def _subsample(split: jain_wallace.TokenizedSplit, limit: Optional[int], seed: int):
  if limit is None or len(split) <= limit:
    return split
  keep = np.sort(np.random.RandomState(seed).choice(len(split), size=limit, replace=False))
  return split.subset(keep)


# The last protocols' outputs, by dataset, splits and the files they came
# from: tokenising (and sentence splitting) 50,000 reviews takes seconds, and
# a process often loads one dataset more than once (a rerun, a report, tests).
_PREPARED: collections.OrderedDict = collections.OrderedDict()
_PREPARED_MAX = 2


def _prepared(dataset: str, wanted: tuple, raw: dict, source: dict):
  files = json.dumps((source or {}).get('files'), sort_keys=True, default=str)
  key = (dataset, wanted, files)
  if not (source or {}).get('files') or key not in _PREPARED:
    prepared = DATASETS[dataset].prepare(raw, wanted)
    if not (source or {}).get('files'):
      return prepared  # nothing says which files these are: no reuse
    _PREPARED[key] = prepared
    while len(_PREPARED) > _PREPARED_MAX:
      _PREPARED.popitem(last=False)
  _PREPARED.move_to_end(key)
  return _PREPARED[key]


def _prepare(cfg: ml_collections.ConfigDict, wanted: Sequence[str]):
  """(the prepared splits before `max_docs_per_split`, the source record)."""
  spec = DATASETS[cfg.dataset]
  if spec.generate is not None:
    return spec.generate(cfg[cfg.dataset], wanted), source_record.SYNTHETIC
  raw, source = builders.load(spec.raw_name, cfg.manual_dir, cfg.tfds_data_dir)
  return _prepared(cfg.dataset, tuple(wanted), raw, source), source


def sample_size_with_two_classes(cfg: ml_collections.ConfigDict, split: str,
                                 wanted: Sequence[str] = ('train', 'dev', 'test')) -> Optional[int]:
  """The smallest `max_docs_per_split` whose seeded sample of `split` (as
  `load_dataset(cfg, wanted)` draws it) holds documents of two classes; any
  larger value does too (a sample is the first N of one seeded permutation).
  None where the whole split holds one class."""
  labels = np.asarray(_prepare(cfg, wanted)[0].splits[split].labels)
  order = np.random.RandomState(list(wanted).index(split)).permutation(len(labels))  # `_subsample`'s draw
  differs = np.flatnonzero(labels[order] != labels[order[0]]) if len(labels) else []
  return int(differs[0]) + 1 if len(differs) else None


def load_dataset(cfg: ml_collections.ConfigDict, wanted: Sequence[str] = ('train', 'dev', 'test'),
                 vocab: Optional[Vocabulary] = None) -> Dataset:
  """Prepares (once) and encodes the splits of `cfg.dataset`.

  The splits are prepared by the dataset's registered protocol, or
  generated for a synthetic dataset.

  Args:
    cfg: `config.data`: `dataset`, `manual_dir`, `tfds_data_dir`, `min_df`,
      `max_docs_per_split` (each split subsampled to at most this many
      documents; None: all).
    wanted: splits to return; default ('train', 'dev', 'test').
    vocab: an existing vocabulary (e.g. a restored model's); by default one is
      built from the train split with `cfg.min_df` (None: J&W's value).

  Returns:
    A `Dataset`: `name`, `vocab`, `splits` (split name -> `EncodedSplit`,
    whose `sequences` are each int32 [n + 2]: SOS, n word ids, EOS, and
    `labels` [N] int32), `fingerprint`, `source` (what the data was prepared
    from) and `classes`.

  Raises:
    KeyError: `cfg.dataset` is not a registered dataset.
    DataError: no `vocab` and no train split asked for; a split empty after
      the length filter; a document with fewer than two tokens; or the
      dataset's files missing, truncated or malformed.
    StorageError: the tfds data dir is full or not writable.
  """
  spec = DATASETS[cfg.dataset]
  prepared, source = _prepare(cfg, wanted)
  if vocab is None:
    if prepared.vocab_docs is None:
      raise DataError('a vocabulary is built from the train split: ask for it too, or pass vocab=')
    min_df = prepared.min_df if cfg.min_df is None else cfg.min_df
    vocab = Vocabulary.build(prepared.vocab_docs, min_df, prepared.count_tokens)
  splits = {}
  for offset, name in enumerate(wanted):
    tokenized = _subsample(prepared.splits[name], cfg.max_docs_per_split, offset)
    if len(tokenized) == 0:
      raise DataError(f'{cfg.dataset}: split {name!r} is empty after the length filter')
    def arrays(values):
      return None if values is None else [np.asarray(x, np.int32) for x in values]
    queries = None if tokenized.queries is None else [vocab.encode(q) for q in tokenized.queries]
    longest = 0 if queries is None else max(map(len, queries), default=0)
    if spec.max_query_tokens is not None and longest > spec.max_query_tokens:
      raise DataError(f'{cfg.dataset}/{name}: a query of {longest} tokens (SOS and EOS counted), longer than '
                      f'the {spec.max_query_tokens} its spec declares (max_query_tokens, what its QA model\'s '
                      'query encoder reads): are these the dataset\'s files? Else raise max_query_tokens')
    evidence = None if tokenized.evidence is None else [np.asarray(e, np.int32) + 1 for e in tokenized.evidence]
    splits[name] = EncodedSplit(
        encode_documents(tokenized.docs, vocab, tokenized.ids, f'{cfg.dataset}/{name}'),
        tokenized.labels, tokenized.ids, arrays(tokenized.sentence_lengths), queries, evidence)
  return Dataset(cfg.dataset, vocab, splits, fingerprint(vocab, splits), copy.deepcopy(source),
                 tuple(prepared.classes))
