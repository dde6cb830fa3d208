"""The test documents a reproduction report shows word by word, and why.

J&W's claims are about distributions over documents; a reader checks them
against single documents. The report shows the documents at the ends of
those distributions: the highest and the lowest τ(α, gradient) (the `kendall`
stage) and the largest adversarial max JSD (the `adversarial` stage), each
with its words coloured by α, gradient importance and leave-one-out (and, for
the adversarial one, by the adversary's α).

Stage arrays are indexed by document row of the analysed split, per position
with SOS at 0 and EOS at `lengths - 1`. The words are that split as the
pipeline loads it (`load_dataset(config.data)`, the run's own vocabulary, so
a word the vocabulary lacks reads `<UNK>`, as the model read it), checked
against the data fingerprint the results were keyed by.
"""

import dataclasses
import os
from typing import Optional

import numpy as np

from attn_jax.workdirs import workdir as workdir_lib
from attn_jax.data.dataset import load_dataset
from attn_jax.stages.stage_runner import limit_split
from attn_jax.core.errors import AttnJaxError
from attn_jax.stages import stage_store as store

# The heatmap rows, named as `Explanation` names them.
ALPHA, GRADIENT, LOO = 'α', 'gradient', 'leave-one-out'


@dataclasses.dataclass(frozen=True)
class Document:
  """One document of the analysed split and its per-word scores."""
  title: str                  # why it is shown, with its row, label and ŷ
  row: int                    # its row in the split (and in every stage's arrays)
  words: list[str]
  scores: dict[str, np.ndarray]  # measure -> [n words]


def _arrays(found: store.Found) -> Optional[dict]:
  """The stage's results.npz, or None for a saved summary without arrays."""
  if not os.path.exists(os.path.join(found.directory, store.RESULTS)):
    return None
  return store.load_arrays(found.directory, found.summary)


def _matching(run: str, stage: str, like: store.Found, key_hash: Optional[str]) -> Optional[store.Found]:
  """The intact results of `stage` that `like` read (by its key's inputs),
  else those of the same model, data and split covering as many documents."""
  key = like.summary.get('key', {})
  found = [f for f in store.find(run, stage) if f.intact]
  for f in found:
    if f.key_hash == key_hash:
      return f
  for f in found:
    other = f.summary.get('key', {})
    if all(other.get(k) == key.get(k) for k in ('params', 'data', 'split')) and f.documents >= like.documents:
      return f
  return None


def _rows(kendall: Optional[dict], adversarial: Optional[dict]) -> list[tuple[int, str]]:
  """(row, why) of each chosen document, a row chosen twice once."""
  chosen = {}
  if kendall is not None:
    tau = kendall['tau_attention_gradient']
    if np.isfinite(tau).any():
      high, low = int(np.nanargmax(tau)), int(np.nanargmin(tau))
      chosen.setdefault(high, []).append(f'highest τ(α, gradient) = {tau[high]:.3f}')
      chosen.setdefault(low, []).append(f'lowest τ(α, gradient) = {tau[low]:.3f}')
  if adversarial is not None and len(adversarial['max_jsd']):
    top = int(np.argmax(adversarial['max_jsd']))
    chosen.setdefault(top, []).append(f'largest adversarial max JSD = {adversarial["max_jsd"][top]:.3f}')
  return [(row, '; '.join(why)) for row, why in chosen.items()]


def _adversary(adversarial: dict, row: int, epsilon: float) -> tuple[int, float]:
  """(index, JSD) of the row's adversary that `max_jsd` counts: the largest
  JSD among those that move ŷ by at most ε."""
  allowed = adversarial['output_change'][row] <= epsilon
  jsd = np.where(allowed, adversarial['jsd'][row], -np.inf)
  k = int(np.argmax(jsd))
  return k, float(adversarial['jsd'][row, k])


def _split(run: str, key: dict):
  """The analysed split as the pipeline loads it; raises AttnJaxError or
  OSError when the data cannot be loaded or are not those of the results."""
  cfg = workdir_lib.load_config(run)
  dataset = load_dataset(cfg.data, vocab=workdir_lib.load_vocab(run))
  if dataset.fingerprint != key.get('data'):
    raise AttnJaxError(f'the {dataset.name} data loaded today (fingerprint {dataset.fingerprint}) are not '
                       f'those the results were computed on ({key.get("data")})')
  split = dataset.splits[key['split']]
  if 'sample' in key:  # row i of the results is document i of the sample
    split = limit_split(split, None, key['sample']['docs'], key['sample']['seed'])
  return dataset.vocab, split


def choose(run: str) -> tuple[list[Document], list[str]]:
  """(documents, notes): the chosen documents of the run folder `run`, and a
  line for each thing that kept some from being shown."""
  kendall_found = store.most_complete(run, 'kendall')
  adversarial_found = store.most_complete(run, 'adversarial')
  if kendall_found is None and adversarial_found is None:
    return [], [f'{run} holds no kendall or adversarial results: no documents to show']
  notes = []
  kendall = _arrays(kendall_found) if kendall_found else None
  adversarial = _arrays(adversarial_found) if adversarial_found else None
  for name, found, arrays in (('kendall', kendall_found, kendall), ('adversarial', adversarial_found, adversarial)):
    if found is not None and arrays is None:
      notes.append(f'{found.directory} holds the {name} summary only (no results.npz): its documents are not shown')
  anchor = kendall_found if kendall is not None else adversarial_found if adversarial is not None else None
  if anchor is None:
    return [], notes
  inputs = anchor.summary.get('key', {}).get('inputs', {})
  gradient_found = _matching(run, 'gradient', anchor, inputs.get('gradient'))
  loo_found = _matching(run, 'loo', anchor, inputs.get('loo'))
  gradient = _arrays(gradient_found) if gradient_found else None
  loo = _arrays(loo_found) if loo_found else None
  if gradient is None:
    return [], notes + [f'{run} holds no gradient results with per-document arrays for these documents: '
                        'no heatmaps']
  if loo is None:
    notes.append(f'{run} holds no loo results for these documents: heatmaps without leave-one-out')
  key = anchor.summary['key']
  try:
    vocab, split = _split(run, key)
  except (AttnJaxError, OSError) as e:
    return [], notes + [f'heatmaps missing: the {key.get("split", "?")} split of {run} could not be loaded '
                        f'({e})']
  epsilon = (adversarial_found.summary.get('report_epsilon') if adversarial_found else None)
  documents = []
  for row, why in _rows(kendall, adversarial):
    n = int(gradient['lengths'][row])
    sequence = split.sequences[row]
    if len(sequence) != n:
      notes.append(f'document {row} has {len(sequence)} tokens in the data but {n} in the results: not shown')
      continue
    words = vocab.decode(sequence[1:n - 1])
    scores = {ALPHA: gradient['alpha'][row, 1:n - 1], GRADIENT: gradient['gradient'][row, 1:n - 1]}
    if loo is not None:
      scores[LOO] = loo['loo'][row, 1:n - 1]
    if adversarial is not None and 'adversarial max JSD' in why and epsilon is not None:
      k, jsd = _adversary(adversarial, row, epsilon)
      scores[f'adversarial α (JSD {jsd:.3f})'] = adversarial['adversarial_alpha'][row, k, 1:n - 1]
    title = (f'{key["split"]} document {row} (label {int(split.labels[row])}, '
             f'ŷ = {float(gradient["probs"][row]):.3f}): {why}')
    documents.append(Document(title, row, words, scores))
  return documents, notes
