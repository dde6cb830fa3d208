"""A synthetic task that needs no files: the label is set by planted words.

Documents are random filler words; each carries one to three words of its
class (`good*` for 1, `bad*` for 0) at random positions, so a model can reach
~100 % accuracy and its attention ought to find the planted words (each
document's known evidence, which the `evidence` stage scores measures by).
"""

from typing import Sequence

import ml_collections
import numpy as np

from attn_jax.data.jain_wallace_protocol import Prepared, TokenizedSplit


def generate(cfg: ml_collections.ConfigDict, wanted: Sequence[str]) -> Prepared:
  """Splits of sizes `cfg.train_size` / `dev_size` / `test_size`.

  Args:
    cfg: `config.data.synthetic`: seed, sizes, vocab_size (filler words),
      planted_words (per class), min_length, max_length.
    wanted: split names to return.
  """
  filler = np.array([f'w{i:04d}' for i in range(cfg.vocab_size)])
  planted = {1: [f'good{i}' for i in range(cfg.planted_words)],
             0: [f'bad{i}' for i in range(cfg.planted_words)]}
  splits = {}
  for offset, split in enumerate(('train', 'dev', 'test')):
    rng = np.random.default_rng([cfg.seed, offset])
    n = cfg[f'{split}_size']
    labels = rng.integers(0, 2, size=n).astype(np.int32)
    docs, evidence = [], []
    for y in labels:
      doc = list(rng.choice(filler, size=rng.integers(cfg.min_length, cfg.max_length + 1)))
      positions = rng.choice(len(doc), size=rng.integers(1, 4), replace=False)
      for position in positions:
        doc[position] = planted[int(y)][rng.integers(len(planted[int(y)]))]
      docs.append([str(w) for w in doc])
      evidence.append(sorted(int(p) for p in positions))  # the planted words: known evidence
    splits[split] = TokenizedSplit(docs, labels, [f'{split}/{i}' for i in range(n)], evidence=evidence)
  return Prepared({s: splits[s] for s in wanted},
                  splits['train'].docs if 'train' in wanted else None, min_df=1)
