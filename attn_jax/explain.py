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
"""

import dataclasses
import functools
import os
from typing import Callable, Mapping, Optional, Sequence, Union

import jax
import numpy as np

from attn_jax.analysis import gradient_importance, leave_one_out
from attn_jax.core.registry import DATASETS
from attn_jax.data.batching import pad_texts
from attn_jax.data.vocabulary import UNK, Vocabulary
from attn_jax.models.interface import AttentionModel, require
from attn_jax.plots import heatmaps
from attn_jax.workdirs.restore import Restored, restore


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
    gradient: [n] J&W `gradient_mem`: |∂ŷ/∂e_t · e_t|, α detached.
    loo: [n] J&W `remove_and_run`: |ŷ − ŷ with the word deleted|.
  """
  text: str
  words: list[str]
  known: np.ndarray     # bool: the word is in the model's vocabulary (else read as UNK)
  prob: float           # ŷ: the model's probability of the positive class
  alpha: np.ndarray     # attention weights (sum to 1 over the words)
  gradient: np.ndarray  # J&W `gradient_mem`: |∂ŷ/∂e_t · e_t|, α detached
  loo: np.ndarray       # J&W `remove_and_run`: |ŷ − ŷ with the word deleted|

  def table(self) -> str:
    """The words and their scores, one line each.

    Returns:
      A header line, then per word its text (with ' (UNK)' where unknown,
      cut to 20 characters), α, gradient and LOO.
    """
    lines = [f'{"word":20} {"alpha":>8} {"gradient":>9} {"loo":>8}']
    for w, k, a, g, l in zip(self.words, self.known, self.alpha, self.gradient, self.loo):
      lines.append(f'{(w if k else w + " (UNK)")[:20]:20} {a:8.4f} {g:9.4f} {l:8.4f}')
    return '\n'.join(lines)

  def measures(self) -> dict[str, np.ndarray]:
    """The rows of the heatmap.

    Returns:
      measure name -> [n] scores: 'α', 'gradient' and 'leave-one-out'.
    """
    return {'α': self.alpha, 'gradient': self.gradient, 'leave-one-out': self.loo}

  def _title(self) -> str:
    unknown = int(np.sum(~self.known))
    return f'ŷ = {self.prob:.3f}' + (f'; {unknown} word(s) read as UNK' if unknown else '')

  def heatmap_html(self) -> str:
    """The words coloured by α, gradient and LOO (`attn_jax.plots.heatmaps.html`).

    Returns:
      The heatmap as HTML, titled with ŷ and (where any) the count of words
      read as UNK.
    """
    return heatmaps.html(self.words, self.measures(), self._title())

  def heatmap_png(self, stem: str) -> list[str]:
    """Writes `<stem>.png` and `<stem>.svg` of the heatmap; returns their paths.

    Args:
      stem: the path of the files without the extension.

    Returns:
      The paths of the files written.
    """
    return heatmaps.png(self.words, self.measures(), stem, self._title())

  def _repr_html_(self) -> str:  # a notebook shows an explanation as its heatmap
    return self.heatmap_html()


@functools.partial(jax.jit, static_argnums=0)
def _measures(model, params, tokens, lengths):
  forward = model.forward(params, tokens, lengths)
  return {'prob': jax.nn.sigmoid(forward.logits), 'alpha': forward.alpha,
          'gradient': gradient_importance(model, params, tokens, lengths),
          'loo': leave_one_out(model, params, tokens, lengths).importance}


# Leave-one-out holds n variants of n words at once: past a few thousand words
# its memory grows beyond a host's (1e5 words asked for about 2 TB).
MAX_WORDS = 5000


def _texts(texts) -> list[str]:
  texts = [texts] if isinstance(texts, str) else list(texts) if isinstance(texts, (list, tuple)) else texts
  if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
    kind = type(texts).__name__ if not isinstance(texts, list) else 'a list holding ' + next(
        type(t).__name__ for t in texts if not isinstance(t, str))
    raise TypeError(f'explain(run, texts): texts is a string or a list of strings, not {kind}')
  return texts


def _encoder(vocab) -> Callable[[list[str]], np.ndarray]:
  """words -> ids (UNK for unknown words), from a `Vocabulary`, a mapping or a function."""
  if isinstance(vocab, Vocabulary):
    return lambda words: vocab.encode(words)[1:-1]
  if isinstance(vocab, Mapping):
    return lambda words: np.asarray([vocab.get(w, UNK) for w in words], np.int32)
  if callable(vocab):
    return lambda words: np.asarray(vocab(words), np.int32).reshape(-1)
  raise TypeError('explain(model, texts, vocab=...): vocab is an attn_jax Vocabulary, a mapping word -> id '
                  f'or a function words -> ids, not {type(vocab).__name__}')


def explain(run: Union[str, Restored, AttentionModel], texts: Union[str, Sequence[str]],
            batch_size: int = 32, *, params=None, tokenizer: Optional[Callable[[str], list[str]]] = None,
            vocab=None, max_words: int = MAX_WORDS) -> list[Explanation]:
  """Explains each text (a string or a list of them) with a trained model.

  A run's text is tokenized as its dataset's protocol tokenizes and encoded
  with its own vocabulary; words the vocabulary lacks are read as UNK, and
  `Explanation.known` says which. The batch layout: `pad_texts`.

  Args:
    run: a workdir written by `run.py` (a str or os.PathLike), what
      `restore` returned for it, or any model in the analyses' interface
      (`attn_jax.models.interface`; then `params` and `vocab` are needed).
    texts: raw strings: one string or a list (or tuple) of them.
    batch_size: texts computed together; default 32.
    params: the model's params (a model in the interface only).
    tokenizer: str -> words; default: the run's dataset's tokenizer, or
      `str.split` for a model of one's own.
    vocab: words -> ids: an attn_jax `Vocabulary`, a mapping word -> id
      (unknown words -> UNK = 1; ids 0-3 are PAD, UNK, SOS, EOS) or a
      function; default: the run's vocabulary.
    max_words: the longest text explained, in words; default `MAX_WORDS`
      (5000: leave-one-out's memory grows with its square).

  Returns:
    One `Explanation` per text, in order: ŷ and, per word, α, gradient and
    LOO ([n] arrays).

  Raises:
    TypeError: `run`, `texts` or `vocab` is of another kind (e.g. None), or
      a model of one's own comes without `params` or `vocab`.
    ValueError: a text has no words once tokenized, or more than
      `max_words`; or the run is a QA/NLI, hierarchical (S&S's HAN) or
      multi-class model, or its dataset has no tokenizer and none is passed.
    InterfaceError: the model is not a two-class model over words (e.g. it
      attends with several heads: pick one with `attn_jax.models.heads`).
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
                      'and its vocabulary (or a function words -> ids)')
    model, dataset = run, 'this model'
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
    model, params, vocab = restored.model, restored.params, vocab or restored.vocab
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
    if not w:
      raise ValueError(f'text {i} ({texts[i][:40]!r}) has no words once tokenized for {dataset}; '
                       'nothing to explain')
    if len(w) > max_words:
      raise ValueError(f'text {i} has {len(w):,} words, more than max_words={max_words:,} (leave-one-out\'s '
                       'memory grows with the square of the length): split it, or raise max_words')
  ids = [to_ids(w) for w in words]
  out = []
  for start in range(0, len(ids), batch_size):
    chunk = ids[start:start + batch_size]
    tokens, lengths = pad_texts(chunk)
    got = jax.tree.map(np.asarray, _measures(model, params, tokens, lengths))
    for row, seq in enumerate(chunk):
      i, n = start + row, len(seq)
      out.append(Explanation(texts[i], words[i], seq != UNK, float(got['prob'][row]),
                             got['alpha'][row, 1:n + 1], got['gradient'][row, 1:n + 1],
                             got['loo'][row, 1:n + 1]))
  return out
