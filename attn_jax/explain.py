"""Explanations of your own text by a trained model: per word, the attention
weight α, J&W's gradient importance and leave-one-out, beside ŷ.

    import attn_jax as aj
    for e in aj.explain('runs/sst_bilstm', ['a gripping , funny film .']):
      print(e.prob, e.table())

The text is tokenized as the model's dataset was (`jain_wallace.TOKENIZERS`)
and encoded with the model's own vocabulary; words it never saw are read as
UNK, and `known` says which.
"""

import dataclasses
import functools
import os
from typing import Sequence, Union

import jax
import numpy as np

from attn_jax.analysis import gradient_importance, leave_one_out
from attn_jax.data import jain_wallace
from attn_jax.data.batching import make_batch
from attn_jax.data.vocabulary import UNK
from attn_jax.plots import heatmaps
from attn_jax.workdirs.restore import Restored, restore


@dataclasses.dataclass(frozen=True)
class Explanation:
  """One text as the model reads it; every array is [n], one entry per word."""
  text: str
  words: list[str]
  known: np.ndarray     # bool: the word is in the model's vocabulary (else read as UNK)
  prob: float           # ŷ: the model's probability of the positive class
  alpha: np.ndarray     # attention weights (sum to 1 over the words)
  gradient: np.ndarray  # J&W §B.1: |∂ŷ/∂e_t · e_t|, α detached
  loo: np.ndarray       # J&W §B.2: |ŷ − ŷ with the word deleted|

  def table(self) -> str:
    """The words and their scores, one line each."""
    lines = [f'{"word":20} {"alpha":>8} {"gradient":>9} {"loo":>8}']
    for w, k, a, g, l in zip(self.words, self.known, self.alpha, self.gradient, self.loo):
      lines.append(f'{(w if k else w + " (UNK)")[:20]:20} {a:8.4f} {g:9.4f} {l:8.4f}')
    return '\n'.join(lines)

  def measures(self) -> dict[str, np.ndarray]:
    """measure name -> [n] scores, the rows of the heatmap."""
    return {'α': self.alpha, 'gradient': self.gradient, 'leave-one-out': self.loo}

  def _title(self) -> str:
    unknown = int(np.sum(~self.known))
    return f'ŷ = {self.prob:.3f}' + (f'; {unknown} word(s) read as UNK' if unknown else '')

  def heatmap_html(self) -> str:
    """The words coloured by α, gradient and LOO (`attn_jax.plots.heatmaps.html`)."""
    return heatmaps.html(self.words, self.measures(), self._title())

  def heatmap_png(self, stem: str) -> list[str]:
    """Writes `<stem>.png` and `<stem>.svg` of the heatmap; returns their paths."""
    return heatmaps.png(self.words, self.measures(), stem, self._title())

  def _repr_html_(self) -> str:  # a notebook shows an explanation as its heatmap
    return self.heatmap_html()


@functools.partial(jax.jit, static_argnums=0)
def _measures(model, params, tokens, lengths):
  forward = model.forward(params, tokens, lengths)
  return {'prob': jax.nn.sigmoid(forward.logits), 'alpha': forward.alpha,
          'gradient': gradient_importance(model, params, tokens, lengths),
          'loo': leave_one_out(model, params, tokens, lengths).importance}


def explain(run: Union[str, Restored], texts: Union[str, Sequence[str]],
            batch_size: int = 32) -> list[Explanation]:
  """Explains each text (a string or a list of them) with a trained run.

  Args:
    run: a workdir written by `run.py`, or what `restore` returned for it.
    texts: raw strings, tokenized like the run's dataset.
    batch_size: texts computed together.

  Raises:
    TypeError: `run` or `texts` is of another kind (e.g. None).
    ValueError: a text has no words once tokenized (it names which).
  """
  if isinstance(run, os.PathLike):
    run = os.fspath(run)
  if not isinstance(run, (str, Restored)):
    raise TypeError(f'explain(run, texts): run is a workdir path or what attn_jax.restore returned, '
                    f'not {type(run).__name__}')
  texts = [texts] if isinstance(texts, str) else list(texts) if isinstance(texts, (list, tuple)) else texts
  if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
    kind = type(texts).__name__ if not isinstance(texts, list) else 'a list holding ' + next(
        type(t).__name__ for t in texts if not isinstance(t, str))
    raise TypeError(f'explain(run, texts): texts is a string or a list of strings, not {kind}')
  restored = restore(run) if isinstance(run, str) else run
  dataset = restored.config.data.dataset
  model_cfg = restored.config.model
  if model_cfg.get('hierarchical', False) or model_cfg.get('classes', 2) > 2:
    raise ValueError(f'explain shows J&W\'s measures of binary models over words; {dataset} with '
                     'this model (S&S\'s HAN or a multi-class model) has the erasure stage instead: '
                     'python run.py --config=... --config.analyses=erasure')
  tokenizer = jain_wallace.TOKENIZERS.get(dataset)
  if tokenizer is None:
    raise ValueError(f'no tokenizer for dataset {dataset!r}; tokenize yourself and call the '
                     'analyses in attn_jax.analysis')
  words = [tokenizer(t) for t in texts]
  for i, w in enumerate(words):
    if not w:
      raise ValueError(f'text {i} ({texts[i][:40]!r}) has no words once tokenized for {dataset}; '
                       'nothing to explain')
  encoded = [restored.vocab.encode(w) for w in words]
  out = []
  for start in range(0, len(encoded), batch_size):
    chunk = encoded[start:start + batch_size]
    width = -(-max(len(s) for s in chunk) // 16) * 16  # fewer shapes to compile
    batch = make_batch(chunk, np.zeros(len(chunk), np.int32), np.arange(len(chunk)), batch_size,
                       [width])
    got = jax.tree.map(np.asarray, _measures(restored.model, restored.params, batch.tokens,
                                             batch.lengths))
    for row, seq in enumerate(chunk):
      i, n = start + row, len(seq)
      out.append(Explanation(texts[i], words[i], seq[1:n - 1] != UNK, float(got['prob'][row]),
                             got['alpha'][row, 1:n - 1], got['gradient'][row, 1:n - 1],
                             got['loo'][row, 1:n - 1]))
  return out
