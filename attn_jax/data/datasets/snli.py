"""SNLI 1.0 (Bowman et al. 2015) as J&W prepare it.

J&W's `preprocess/SNLI/SNLI.ipynb` (the steps, not their code): the
official train, dev and test files, pairs whose gold label is '-' dropped;
the premise is the passage attended over, the hypothesis the query; each
text whitespace-collapsed, tokenised as spaCy does, lower-cased, and every
token with a digit written 'qqq'; SOS and EOS around both. The vocabulary is
every word in at least 3 of the train premises and hypotheses (as 2N
documents); the classes are the sorted labels: contradiction, entailment,
neutral. J&W start from GloVe 840B vectors (words it lacks at zero):
`--config.model.embeddings_file=glove.840B.300d.txt` where a user has them.

Only dev and test are distributed beside the project: training needs the
train file, and asking for the train split without it is a one-line error
naming what is missing and where it can be had.
"""

import json
import os
import re

import numpy as np
import tensorflow_datasets as tfds

from attn_jax.core.errors import DataError
from attn_jax.core.registry import DATASETS
from attn_jax.data import jain_wallace_protocol as jain_wallace, tokenize
from attn_jax.data.builders import builder as base
from attn_jax.data.datasets.dataset_spec import DatasetSpec
from attn_jax.data.sources import KnownFile, Source

URL = 'https://nlp.stanford.edu/projects/snli/snli_1.0.zip'
SPLITS = ('train', 'dev', 'test')
CLASSES = ('contradiction', 'entailment', 'neutral')
OFFICIAL_PAIRS = {'train': 550152, 'dev': 10000, 'test': 10000}
MIN_DF = 3


def words(text: str) -> list[str]:
  """J&W's SNLI cleaning: spaCy-like tokens, lower case, any token with a digit -> 'qqq'."""
  tokens = tokenize.spacy_like(re.sub(r'\s+', ' ', text.strip()))
  return ['qqq' if any(c.isdigit() for c in t) else t.lower() for t in tokens]


class SnliJsonl(base.ArchiveBuilder, skip_registration=True):
  """`snli_1.0_{train,dev,test}.jsonl[.gz]`: every pair, '-' labels included."""

  DATASET = 'snli'
  BUILDER_CONFIGS = [tfds.core.BuilderConfig(name='train_dev_test'),
                     tfds.core.BuilderConfig(name='dev_test', description='no train file')]

  def _info(self):
    return self.dataset_info_from_configs(
        features=tfds.features.FeaturesDict({
            'id': tfds.features.Text(), 'premise': tfds.features.Text(),
            'hypothesis': tfds.features.Text(), 'gold_label': tfds.features.Text()}),
        homepage='https://nlp.stanford.edu/projects/snli/', disable_shuffling=True)

  def _read(self, files):
    splits = {}
    for split in SPLITS if self.builder_config.name == 'train_dev_test' else SPLITS[1:]:
      rows = []
      for number, line in enumerate(base.read_text(files[split]).splitlines(), 1):
        if not line.strip():
          continue
        try:
          row = json.loads(line)
          rows.append((number, {'id': str(row['pairID']), 'premise': row['sentence1'],
                                'hypothesis': row['sentence2'], 'gold_label': row['gold_label']}))
        except (ValueError, KeyError, TypeError) as e:
          raise base.malformed(files[split], f'line {number} is not an SNLI JSON object ({e})') from e
      base.check_official_count(self.count_notes, files[split], 'pairs', len(rows), OFFICIAL_PAIRS[split])
      splits[split] = rows
    return splits


def prepare(raw: dict, wanted) -> jain_wallace.Prepared:
  """J&W's SNLI protocol (see the module's docstring)."""
  if 'train' in wanted and 'train' not in raw:
    raise DataError(
        'SNLI: the train split is not here (snli_1.0_train.jsonl or .jsonl.gz, 550,152 pairs, was not '
        'found beside the dev and test files): training and the vocabulary need it. Put it in the '
        f'snli/ folder of $ATTN_JAX_DATA (official: {URL}), or ask for the dev and test splits only.')
  classes = {c: i for i, c in enumerate(CLASSES)}
  splits = {}
  for split in wanted:
    rows = [r for r in raw[split] if r['gold_label'] != '-']
    unknown = {r['gold_label'] for r in rows} - set(classes)
    if unknown:
      raise DataError(f'SNLI {split}: gold labels {sorted(unknown)} are not SNLI\'s {CLASSES} or "-"')
    splits[split] = jain_wallace.TokenizedSplit(
        [words(r['premise']) for r in rows], np.asarray([classes[r['gold_label']] for r in rows], np.int32),
        [r['id'] for r in rows], queries=[words(r['hypothesis']) for r in rows])
  vocab_docs = splits['train'].docs + splits['train'].queries if 'train' in splits else None
  return jain_wallace.Prepared(splits, vocab_docs, min_df=MIN_DF, classes=CLASSES)


def recipe(cfg, encoder: str) -> None:
  """J&W's SNLI settings: 300-d embeddings (J&W: GloVe), hidden size 128,
  batches of 128, 25 epochs, cross-entropy, the model of the best dev accuracy."""
  del encoder
  cfg.model.embed_dim, cfg.model.hidden_dim = 300, 128
  cfg.train.update(batch_size=128, epochs=25, loss='cross_entropy', select_by='accuracy')


def _builder(files, data_dir):
  config = 'dev_test' if files is not None and 'train' not in files else 'train_dev_test'
  return SnliJsonl(files=files, data_dir=data_dir, file_format='array_record', config=config)


def _download(dl) -> dict[str, str]:
  root = dl.download_and_extract(URL)
  return {s: os.fspath(root / 'snli_1.0' / f'snli_1.0_{s}.jsonl') for s in SPLITS}


SNLI = DATASETS.register(DatasetSpec(
    name='snli', paper='jw', order=80, title='SNLI 1.0', prepare=prepare, tokenizer=words,
    classes=CLASSES, texts=('premise', 'hypothesis'),
    source=Source('SNLI 1.0', 'snli', {s: (f'snli_1.0_{s}.jsonl.gz', f'snli_1.0_{s}.jsonl') for s in SPLITS},
                  frozenset({'train'}), URL, _download),
    reference={  # ../shared/data/snli/SOURCE.md (no copy of train could be checksummed)
        'dev': (KnownFile('snli_1.0_dev.jsonl.gz', 1004730,
                          'e5cfcc71b4846c40e06bae364a13312adeb434884e9a7cedf67037bdd212e39d'),
                KnownFile('snli_1.0_dev.jsonl', 9745714,
                          '9c03faff70182ef086ebfeed2cffbabb5fcc6a84a8b3314decbbb5b01f07f4bf')),
        'test': (KnownFile('snli_1.0_test.jsonl.gz', 1005357,
                           'ef5f0721f18e6aafd80f0d67aa2ef9784277aa08ba6a582c03fc381367282ac5'),
                 KnownFile('snli_1.0_test.jsonl', 9730457,
                           '1147550151ca8b16ddb31d8dc0e739a670a65f7c3e64aac5951eaeff103fb220')),
    },
    builder=_builder, held_out_raw=('dev', 'test'), recipe=recipe))
