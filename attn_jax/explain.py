"""Explanations of your own text by a trained model: per word, the attention
weight α, J&W's gradient importance and leave-one-out, beside ŷ.

    import attn_jax as aj
    for e in aj.explain('workdirs/sst_bilstm_tanh_softmax', ['a gripping , funny film .']):
      print(e.prob, e.table())
    aj.explain(my_model, ['a text'], params=my_params, vocab={'a': 4, 'text': 5})

A run's text is tokenized as its dataset's protocol tokenizes (its `tokenizer`) and
encoded with its own vocabulary; a model of one's own takes a tokenizer
(default `str.split`) and a vocabulary. Words the vocabulary lacks are read
as UNK, and `known` says which. The batch layout: `pad_texts`.

Odd texts: one without words is skipped (`Explanation.skipped`), one of
only unknown words is flagged (`only_unknown`), both with a `TextWarning`;
an id outside the model's embedding table is refused (`TextError`), and so
is a text whose analyses cannot fit in memory however they are chunked
(`TooLongForMemory`, naming a length that fits).
"""

import dataclasses
import html as html_lib
import os
import warnings
from typing import Callable, Mapping, Optional, Sequence, Union

import jax
import numpy as np

from attn_jax.analysis import contract
from attn_jax.core import memory_budget
from attn_jax.core.errors import AttnJaxError
from attn_jax.core.registry import DATASETS
from attn_jax.data.batching import pad_texts
from attn_jax.data.vocabulary import UNK, Vocabulary
from attn_jax.models.interface import AttentionModel, require
from attn_jax.plots import heatmaps
from attn_jax.stages import text_chunks
from attn_jax.stages.text_chunks import TooLongForMemory
from attn_jax.workdirs.restore import Restored, restore

# TooLongForMemory is raised here (from `text_chunks`): callers catch it from this module.
__all__ = ['Explanation', 'GRADIENT_ATTACHED', 'GRADIENT_DETACHED', 'MAX_WORDS', 'TextError', 'TextWarning',
           'TooLongForMemory', 'explain']

GRADIENT_DETACHED = 'gradient (α detached)'     # J&W's gradient_mem
GRADIENT_ATTACHED = 'gradient (attention attached)'  # a read-only α: the mean over heads, the rollout


@dataclasses.dataclass(frozen=True)
class Explanation:
  """One text as the model reads it; every array is [n], one entry per word.

  A notebook shows it as its heatmap (`heatmap_html`).

  Attributes:
    text: the text as given.
    words: its n words, as the tokenizer split them.
    known: [n] bool: the word is in the model's vocabulary (else read as UNK).
    prob: ŷ: the model's probability of the positive class.
    alpha: [n] attention weights (sum to 1 over the words).
    gradient: [n] J&W `gradient_mem`: |∂ŷ/∂e_t · e_t|, α detached; where
      α cannot be imposed (the mean over heads, the rollout: no one value
      holds every head's weights), the same with the attention attached.
      `gradient_label` says which.
    loo: [n] J&W `remove_and_run`: |ŷ − ŷ with the word deleted|.
    skipped: why the text was not computed ('no words once tokenized'; then
      every array is empty and ŷ NaN), or '' where it was.
    only_unknown: every word is unknown to the vocabulary (all read as UNK):
      the scores say how the model reads UNK, not the words.
    gradient_label: which gradient `gradient` is: `GRADIENT_DETACHED` or
      `GRADIENT_ATTACHED`.
  """
  text: str
  words: list[str]
  known: np.ndarray     # bool: the word is in the model's vocabulary (else read as UNK)
  prob: float           # ŷ: the model's probability of the positive class
  alpha: np.ndarray     # attention weights (sum to 1 over the words)
  gradient: np.ndarray  # J&W `gradient_mem`: |∂ŷ/∂e_t · e_t|, α detached
  loo: np.ndarray       # J&W `remove_and_run`: |ŷ − ŷ with the word deleted|
  skipped: str = ''     # why the text was not computed ('' where it was)
  only_unknown: bool = False  # every word read as UNK
  gradient_label: str = GRADIENT_DETACHED  # or GRADIENT_ATTACHED

  def table(self) -> str:
    """The words and their scores, one line each.

    Returns:
      A header line, then per word its text (with ' (UNK)' where unknown,
      cut to 20 characters), α, gradient and LOO; where the gradient is
      taken with the attention attached, a last line says so. A skipped
      text's one line says why.
    """
    if self.skipped:
      return f'(skipped: {self.skipped})'
    lines = [f'{"word":20} {"alpha":>8} {"gradient":>9} {"loo":>8}']
    for w, k, a, g, l in zip(self.words, self.known, self.alpha, self.gradient, self.loo):
      lines.append(f'{(w if k else w + " (UNK)")[:20]:20} {a:8.4f} {g:9.4f} {l:8.4f}')
    if self.gradient_label != GRADIENT_DETACHED:
      lines.append('(gradient: taken with the attention attached; this α cannot be imposed)')
    return '\n'.join(lines)

  def measures(self) -> dict[str, np.ndarray]:
    """The rows of the heatmap.

    Returns:
      measure name -> [n] scores: 'α', the gradient (named by
      `gradient_label`: 'gradient (α detached)' or 'gradient (attention
      attached)') and 'leave-one-out'.
    """
    return {'α': self.alpha, self.gradient_label: self.gradient, 'leave-one-out': self.loo}

  def _title(self) -> str:
    if self.skipped:
      return f'skipped: {self.skipped}'
    if self.only_unknown:
      return f'ŷ = {self.prob:.3f}; every word read as UNK'
    unknown = int(np.sum(~self.known))
    return f'ŷ = {self.prob:.3f}' + (f'; {unknown} word(s) read as UNK' if unknown else '')

  def heatmap_html(self) -> str:
    """The words coloured by α, gradient and LOO (`attn_jax.plots.heatmaps.html`).

    Returns:
      The heatmap as HTML, titled with ŷ and (where any) the count of words
      read as UNK; a skipped text's title says why, over no words.
    """
    if self.skipped:
      return f'<div style="font-family:sans-serif;font-weight:bold">{html_lib.escape(self._title())}</div>'
    return heatmaps.html(self.words, self.measures(), self._title())

  def heatmap_png(self, stem: str) -> list[str]:
    """Writes `<stem>.png` and `<stem>.svg` of the heatmap; returns their paths.

    Args:
      stem: the path of the files without the extension.

    Returns:
      The paths of the files written; none for a skipped text.
    """
    if self.skipped:
      return []
    return heatmaps.png(self.words, self.measures(), stem, self._title())

  def _repr_html_(self) -> str:  # a notebook shows an explanation as its heatmap
    return self.heatmap_html()


class TextError(AttnJaxError, ValueError):
  """A text `explain` cannot read as it is: more words than `max_words`, or a
  word whose id is outside the model's embedding table. Also a `ValueError`."""


class TextWarning(UserWarning):
  """A text explained, or skipped, with a caveat (no words; only unknown words)."""


# Leave-one-out re-reads a text once per word: its time grows with the square
# of the length (its memory is chunked to fit: `attn_jax.stages.text_chunks`).
MAX_WORDS = 5000


def _texts(texts) -> list[str]:
  texts = [texts] if isinstance(texts, str) else list(texts) if isinstance(texts, (list, tuple)) else texts
  if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
    kind = type(texts).__name__ if not isinstance(texts, list) else 'a list holding ' + next(
        type(t).__name__ for t in texts if not isinstance(t, str))
    raise TypeError(f'explain(run, texts): texts is a string or a list of strings, not {kind}')
  return texts


VOCAB_KINDS = ('an attn_jax Vocabulary, a mapping word -> id (e.g. a dict) or a function word -> id '
               '(e.g. my_dict.get); an unknown word: absent from the mapping, or None from the function')


def _encoder(vocab) -> Callable[[list[str]], np.ndarray]:
  """words -> [n] ids (UNK for unknown words), from a `Vocabulary`, a mapping or a per-word function."""
  if isinstance(vocab, Vocabulary):
    return lambda words: vocab.encode(words)[1:-1].astype(np.int64)
  if isinstance(vocab, Mapping):
    lookup = vocab.get
  elif callable(vocab):
    lookup = vocab
  else:
    raise TypeError(f'explain(model, texts, vocab=...): vocab is {VOCAB_KINDS}; not {type(vocab).__name__}')

  def encode(words):
    ids = []
    for word in words:
      got = lookup(word)
      if got is not None and (isinstance(got, bool) or not isinstance(got, (int, np.integer))):
        raise TypeError(f'vocab= gave {type(got).__name__} {str(got)[:40]!r} for the word {word!r}; an id is an '
                        f'int: vocab is {VOCAB_KINDS}')
      ids.append(UNK if got is None else int(got))
    return np.asarray(ids, np.int64)
  return encode


def _embedding_rows(params) -> Optional[int]:
  """The rows of the word-embedding table: the largest first axis of the 2-D
  params named like one ('embed', 'table'; not a position table); None if none is.
  The largest, so that no id inside the real table is ever refused."""
  rows = [np.shape(leaf)[0] for path, leaf in jax.tree_util.tree_leaves_with_path(params)
          if np.ndim(leaf) == 2 and any(k in jax.tree_util.keystr(path).lower() for k in ('embed', 'table'))
          and 'pos' not in jax.tree_util.keystr(path).lower()]
  return max(rows) if rows else None


def _check_ids(model, params, words: list[list[str]], ids: list[np.ndarray]) -> None:
  """Refuses (`TextError`, naming the text, word, id and table) an id outside
  the embedding table: negative or past its end (`_embedding_rows`); where
  no table is found among the params, one that embeds to NaN (flax's `take`
  fills rows past the end with NaN, which would print as scores)."""
  rows = _embedding_rows(params)
  limit = rows if rows is not None else np.iinfo(np.int32).max  # the batch holds int32 ids
  table = f'the model\'s embedding table of {rows:,} rows (ids 0 .. {rows - 1:,})' if rows else 'int32'
  bad = set()
  if rows is None and any(len(seq) for seq in ids):
    distinct = np.unique(np.clip(np.concatenate(ids), 0, limit - 1))
    embedded = np.asarray(model.embed(params, distinct[None].astype(np.int32)))[0]
    bad = set(distinct[~np.isfinite(embedded.reshape(len(distinct), -1)).all(axis=1)].tolist())
    table = 'the model\'s embedding table (it embeds to NaN)'
  for i, (w, seq) in enumerate(zip(words, ids)):
    outside = np.flatnonzero((seq < 0) | (seq >= limit) | np.isin(seq, list(bad)))
    if len(outside):
      k = outside[0]
      raise TextError(f'text {i}: the word {w[k]!r} has id {seq[k]:,}, outside {table}: give vocab= ids '
                      + (f'0 .. {rows - 1:,}' if rows else 'inside the table'))


def explain(run: Union[str, Restored, AttentionModel], texts: Union[str, Sequence[str]],
            batch_size: int = 32, *, params=None, tokenizer: Optional[Callable[[str], list[str]]] = None,
            vocab=None, max_words: int = MAX_WORDS, memory_bytes: Optional[int] = None) -> list[Explanation]:
  """Explains each text (a string or a list of them) with a trained model.

  A run's text is tokenized as its dataset's protocol tokenizes and encoded
  with its own vocabulary; words the vocabulary lacks are read as UNK, and
  `Explanation.known` says which. The batch layout: `pad_texts`.

  Before anything runs, XLA's memory analysis of the compiled programs is
  compared with `memory_bytes`: texts of similar length are computed
  together, fewer of them (and fewer leave-one-out variants) per call where
  they would not fit; the scores are the same either way.

  Args:
    run: a workdir written by `run.py` (a str or os.PathLike), what
      `restore` returned for it, or any model in the analyses' interface
      (`attn_jax.models.interface`; then `params` and `vocab` are needed).
    texts: raw strings: one string or a list (or tuple) of them.
    batch_size: texts computed together at most; default 32.
    params: the model's params (a model in the interface only).
    tokenizer: str -> words; default: the run's dataset's tokenizer, or
      `str.split` for a model of one's own.
    vocab: words -> ids, one of: an attn_jax `Vocabulary`; a mapping
      word -> id (a dict; a word it lacks is unknown); a function of one
      word returning its id, or None for an unknown word (e.g.
      `my_dict.get`). Unknown words are read as UNK = 1; ids 0-3 are PAD,
      UNK, SOS, EOS, and every id must be a row of the model's embedding
      table. Default: the run's vocabulary.
    max_words: the longest text explained, in words; default `MAX_WORDS`
      (5000: leave-one-out re-reads a text once per word, so its time
      grows with the square of the length).
    memory_bytes: the bytes one compiled program may hold beside its
      arguments; default `attn_jax.core.memory_budget.budget()`: 75 % of
      what the device (a GPU's allocator) or this host has free.

  Returns:
    One `Explanation` per text, in order: ŷ and, per word, α, gradient and
    LOO ([n] arrays); the gradient holds α constant where the model can
    impose it, and is taken with the attention attached where it cannot
    (a `mean_over_heads` or `rollout` view), as `gradient_label` says. A text with no words once tokenized is not computed:
    its `skipped` says so (arrays empty, ŷ NaN). A text of only unknown
    words has `only_unknown` set. Each of those also warns (`TextWarning`).

  Raises:
    TypeError: `run`, `texts` or `vocab` is of another kind (e.g. None), a
      vocab gives a word an id that is not an int, or a model of one's own
      comes without `params` or `vocab`.
    TextError (a ValueError): a text has more than `max_words` words, or a
      word's id is outside the model's embedding table.
    TooLongForMemory (a ValueError too): a text's analyses do not fit in
      `memory_bytes` however they are chunked; the message names a length
      that fits.
    ValueError: the run is a QA/NLI, hierarchical (S&S's HAN) or
      multi-class model, or its dataset has no tokenizer and none is passed.
    InterfaceError: the model is not a two-class model over words (e.g. it
      attends with several heads: pick a view with `attn_jax.models.heads`:
      a head, the mean over heads or the rollout).
    CheckpointError: `run` is a workdir `restore` cannot load.

  Example:
    for e in explain('workdirs/sst_bilstm_tanh_softmax', ['a gripping , funny film .']):
      print(e.prob, e.table())
    explain(my_model, ['a text'], params=my_params, vocab={'a': 4, 'text': 5})
  """
  if isinstance(run, os.PathLike):
    run = os.fspath(run)
  texts = _texts(texts)
  if isinstance(run, AttentionModel) or (callable(getattr(run, 'attend', None)) and not isinstance(run, Restored)):
    if params is None or vocab is None:
      raise TypeError('explain(model, texts, params=..., vocab=...): a model of one\'s own needs its params '
                      'and its vocabulary (or a function word -> id)')
    model, dataset = run, 'this model'
    # Its programs are cached by this object (kept alive by the cache): there is no config to name them by.
    key = {'own model': f'{type(model).__module__}.{type(model).__qualname__}', 'id': id(model)}
    tokenizer = tokenizer or str.split
  elif isinstance(run, (str, Restored)):
    restored = restore(run) if isinstance(run, str) else run
    dataset = restored.config.data.dataset
    model_cfg = restored.config.model
    if model_cfg.get('query', False):
      raise ValueError(f'explain takes single texts; {dataset}\'s QA/NLI model reads a passage and a query: '
                       'its analyses run with run.py, over the passage with the query fixed '
                       '(docs/jain_wallace.md, "Question answering and NLI")')
    if model_cfg.get('hierarchical', False) or model_cfg.get('classes', 2) > 2:
      raise ValueError(f'explain shows J&W\'s measures of binary models over words; {dataset} with '
                       'this model (S&S\'s HAN or a multi-class model) has the erasure stage instead: '
                       'python run.py --config=... --config.analyses=erasure')
    model, params, vocab, key = restored.model, restored.params, vocab or restored.vocab, model_cfg.to_dict()
    spec = DATASETS.get(dataset)
    tokenizer = tokenizer or (spec.tokenizer if spec is not None else None)
    if tokenizer is None:
      raise ValueError(f'no tokenizer for dataset {dataset!r}; pass tokenizer=... (a function str -> words)')
  else:
    raise TypeError(f'explain(run, texts): run is a workdir path, what attn_jax.restore returned or a model '
                    f'in the analyses\' interface (attn_jax.models.interface), not {type(run).__name__}')
  require(model, 'explain', binary=True)
  to_ids = _encoder(vocab)
  words = [list(tokenizer(t)) for t in texts]
  for i, w in enumerate(words):
    if len(w) > max_words:
      raise TextError(f'text {i} has {len(w):,} words, more than max_words={max_words:,}: split it into texts of '
                      f'at most {max_words:,} words (leave-one-out re-reads a text once per word: its time grows '
                      'with the square of the length)')
  ids = [to_ids(w) for w in words]
  _check_ids(model, params, words, ids)
  if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
    raise TypeError(f'explain(..., batch_size=...): a number of texts above 0, not {batch_size!r}')
  if memory_bytes is not None and not (isinstance(memory_bytes, (int, np.integer)) and memory_bytes > 0):
    raise TypeError(f'explain(..., memory_bytes=...): a number of bytes above 0 (or None), not {memory_bytes!r}')
  worded = [seq for seq in ids if len(seq)]
  if worded:  # the model's pieces against the interface, once per (model, shape); read only
    contract.check(model, params, *pad_texts(worded[:batch_size]))
  budget, where = ((int(memory_bytes), f'memory_bytes={memory_bytes:,}') if memory_bytes is not None
                   else memory_budget.budget())
  ctx = text_chunks.context(model, params, key, budget)
  # Texts of similar length together: a batch is as wide as its longest text, and leave-one-out
  # re-reads every row once per position.
  order = sorted((i for i, seq in enumerate(ids) if len(seq)), key=lambda i: len(ids[i]))
  got = text_chunks.explain_texts(
      ctx, [[(i, ids[i]) for i in order[start:start + batch_size]] for start in range(0, len(order), batch_size)],
      where)
  label = GRADIENT_DETACHED if text_chunks.gradient_detached(model) else GRADIENT_ATTACHED
  return [_explanation(i, texts[i], words[i], ids[i], got.get(i), dataset, label) for i in range(len(texts))]


def _explanation(i: int, text: str, words: list[str], seq: np.ndarray, got: Optional[dict],
                 dataset: str, label: str) -> Explanation:
  """The `Explanation` of text `i` from its padded row of scores (None: skipped), warning of what it lacks."""
  if got is None:
    warnings.warn(f'text {i} ({text[:40]!r}) has no words once tokenized for {dataset}: skipped '
                  '(its Explanation has `skipped` set and no scores)', TextWarning, stacklevel=3)
    empty = np.zeros(0, np.float32)
    return Explanation(text, words, np.zeros(0, bool), float('nan'), empty, empty, empty,
                       skipped='no words once tokenized', gradient_label=label)
  n, known = len(seq), seq != UNK
  if not known.any():
    warnings.warn(f'text {i} ({text[:40]!r}): all its {n} word(s) are unknown to the vocabulary (read as UNK): '
                  'its scores say how the model reads UNK, not these words', TextWarning, stacklevel=3)
  return Explanation(text, words, known, float(got['prob']), got['alpha'][1:n + 1], got['gradient'][1:n + 1],
                     got['loo'][1:n + 1], only_unknown=not known.any(), gradient_label=label)
