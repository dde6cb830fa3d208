"""S&S's recipe (App. A.1; their `configs/*.jsonnet`) on top of the run configuration.

`ss_config('imdb_ratings', 'han', 'conv')` is S&S's HANconv on aclImdb
ratings: 200-d word2vec vectors trained on train + dev, the encoder
(`rnn` = biGRU 50 per direction, `conv` = convolutions of widths 3 and 5 with
50 channels each, `noenc` = none), S&S's additive attention with a context
vector, a linear softmax classifier; Adam (lr 4e-4), gradient norm clipped
at 10, the learning rate halved after an epoch without a better dev accuracy,
early stopping on dev accuracy after 5 epochs without one (10 and up to 60
epochs for `noenc`), at most 15 epochs; S&S's dropouts for the dataset.
The default analysis is S&S's erasure tests on the final attention layer.

S&S's code (serrano-s/attn-tests: `configs/*.jsonnet`, the vocabulary and
embedding preparation, `conv_seq2seq_encoder.py`) sets what App. A.1 does
not say, each a key here at their value: word2vec on one sentence a line
with out-of-vocabulary words as one `<UNK>` word (`vectors.lines`,
`vectors.oov_as_unk`: UNK starts from a trained vector), every embedding row
at unit L2 norm (`model.embeddings_unit_rows`), the conv encoder's own input
dropout 0.3 (`model.cnn_dropout`), AllenNLP's initializers
(`model.init='allennlp'`), and FLAN batches of at most 20,000 padded words
(`data.max_batch_tokens`) and HAN batches of at most 2,000 documents ×
longest sentence (`data.max_batch_sentence_words`). What still differs is listed in
docs/serrano_smith.md ("Recipe").

A config file's variant is `[rnn|conv|noenc][,previous][,smoke]`, e.g.
`--config=configs/imdb_ratings_han.py:noenc,smoke`; `previous` is the recipe
attn-jax used before those keys (PyTorch initialisation, rows as trained, no
UNK vector, no conv dropout, uncapped FLAN batches, HAN batches by padded
slots only), whose runs are in
results/ss_models_previous.
"""

import ml_collections

from attn_jax.config.schema import default_config
from attn_jax.core.errors import ConfigError

FAMILIES = ('han', 'flan')
ENCODERS = {'rnn': 'bigru', 'conv': 'cnn', 'noenc': 'none'}  # S&S's names -> attn-jax's
# S&S App. A.1 dropouts (pre-sentence-encoder, pre-document-encoder,
# classification layer) for HAN and (pre-document-encoder, classification)
# for FLAN. aclImdb ratings take S&S's IMDB values, 20 Newsgroups' 20 topics
# those of S&S's topic task (Yahoo Answers).
DROPOUTS = {
    ('imdb_ratings', 'han'): (0.4445, 0.2202, 0.2457),
    ('imdb_ratings', 'flan'): (0.4445, None, 0.3457),
    ('20news_topics', 'han'): (0.4445, 0.2202, 0.3749),
    ('20news_topics', 'flan'): (0.4445, None, 0.4457),
}
DATASETS = ('imdb_ratings', '20news_topics')


def model_name(family: str, encoder: str) -> str:
  """S&S's name of a model: ('han', 'bigru') -> 'HANrnn'."""
  short = {v: k for k, v in ENCODERS.items()}[encoder]
  return f'{family.upper()}{short}'


FLAGS = ('previous', 'smoke')


def parse_variant(variant: str) -> tuple[str, frozenset[str]]:
  """'conv,smoke' -> ('conv', {'smoke'}); '' -> ('rnn', {})."""
  parts = [p.strip() for p in variant.split(',') if p.strip()]
  flags = frozenset(p for p in parts if p in FLAGS)
  names = [p for p in parts if p not in FLAGS]
  if len(names) > 1 or (names and names[0] not in ENCODERS):
    raise ConfigError(f'unknown S&S config variant {variant!r}: give one of '
                      f'{", ".join(ENCODERS)} and/or {", ".join(FLAGS)}, comma-separated '
                      '(e.g. "conv,smoke")')
  return (names[0] if names else 'rnn'), flags


def ss_config(dataset: str, family: str, variant: str = '') -> ml_collections.ConfigDict:
  """S&S's model `family` ('han' or 'flan') on `dataset`; `variant` as `parse_variant`."""
  if dataset not in DATASETS or family not in FAMILIES:
    raise ConfigError(f'S&S configs are for {DATASETS} × {FAMILIES}, not ({dataset!r}, {family!r})')
  short, flags = parse_variant(variant)
  smoke, previous = 'smoke' in flags, 'previous' in flags
  encoder = ENCODERS[short]
  c = default_config(dataset, encoder, 'smoke' if smoke else '')
  c.name = (f'{dataset}_{model_name(family, encoder)}' + ('_previous' if previous else '')
            + ('_smoke' if smoke else ''))
  m, t = c.model, c.train
  m.hierarchical = family == 'han'
  m.attention = 'context'
  m.embed_dim = 200
  m.hidden_dim = {'bigru': 50, 'cnn': 100, 'none': 200}[encoder]  # bigru: per direction
  m.cnn_kernel_sizes = (3, 5)
  word, sentence, output = DROPOUTS[(dataset, family)]
  m.input_dropout, m.sentence_dropout, m.output_dropout = word, sentence or 0.0, output
  m.embeddings_file = 'in_domain'
  c.vectors.update(method='word2vec', corpora={'imdb_ratings': 'imdb', '20news_topics': '20news'}[dataset],
                   epochs=30, window=5, min_count=5, sg=0, negative=5)
  # S&S's code, beyond App. A.1 (module docstring).
  c.vectors.update(lines='sentences', oov_as_unk=True)
  m.embeddings_unit_rows = True
  m.cnn_dropout = 0.3 if encoder == 'cnn' else 0.0
  m.init = 'allennlp'
  # FLAN: S&S's 20,000 padded words a batch. HAN: S&S's documents × longest
  # sentence ≤ 2,000, and at most 100,000 padded slots (64 documents of up to
  # 24 sentences of 64 words), which this layout needs besides.
  c.data.max_batch_tokens = 100_000 if family == 'han' else 20_000
  c.data.max_batch_sentence_words = 2_000 if family == 'han' else None
  if previous:
    c.vectors.update(lines='documents', oov_as_unk=False)
    m.embeddings_unit_rows, m.cnn_dropout, m.init = False, 0.0, 'torch'
    c.data.max_batch_tokens = 100_000 if family == 'han' else None
    c.data.max_batch_sentence_words = None
  t.loss = 'cross_entropy'
  t.optimizer = 'adam'
  t.learning_rate = 4e-4
  t.weight_decay = 0.0
  t.clip_norm = 10.0
  t.plateau_factor = 0.5
  t.select_by = 'accuracy'
  t.skip_first_epoch = False  # AllenNLP keeps the best epoch, the first included
  t.batch_size = 64
  t.epochs = 60 if encoder == 'none' else 15
  t.patience = 10 if encoder == 'none' else 5
  c.analyses = 'erasure'
  c.analysis.batch_size = 16  # long reviews: every prefix of every ranking is decoded
  if smoke:
    m.embed_dim, m.hidden_dim = 16, {'bigru': 8, 'cnn': 8, 'none': 16}[encoder]
    m.embeddings_file = None
    m.embeddings_unit_rows = False
    t.epochs, t.patience, t.batch_size = 2, None, 8
    c.data.max_batch_tokens = 4_000
  return c
