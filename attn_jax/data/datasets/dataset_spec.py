"""What a dataset declares when it registers (`DATASETS.register`).

    SST = DATASETS.register(DatasetSpec(
        name='sst', paper='jw', order=10, title='SST PTB trees',
        prepare=jain_wallace.sst, tokenizer=tokenize.sst, classes=('neg', 'pos'),
        source=Source(...), reference={...}, builder=SstTrees, ...))

A protocol that reads another dataset's files (S&S's `imdb_ratings` reads
aclImdb) names it as `raw` and declares no source or builder of its own.
"""

import dataclasses
from typing import Any, Callable, Mapping, Optional

from attn_jax.core.registry import DATASETS


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
  """A dataset.

  name, paper, order: its `data.dataset` value, the paper whose protocol it
    follows (None: the project's own), its place in listings.
  title: its name in messages.
  prepare: (raw records by split, wanted splits) -> `jain_wallace.Prepared`
    (None for a dataset made without files: `generate`).
  tokenizer: a raw text -> its words, as the protocol tokenises a document
    (`aj.explain` tokenises a user's text with it).
  classes: the class names, by label.
  raw: the dataset whose files and builder it reads ('' or its own name: its own).
  source: its files (`sources.Source`); None for a protocol reading `raw`'s.
  reference: role -> the known copies (`sources.KnownFile`) of the reference
    release, so a preparation can say whether it read exactly those bytes.
  builder: (files or None, tfds data dir) -> the tfds builder that prepares
    the files (None: download the official files).
  texts: what a document is: ('text',), or a passage and a query, e.g.
    ('premise', 'hypothesis'): the analyses perturb the first, the second
    stays fixed (J&W §2).
  held_out: splits whose text in-domain vectors never see (J&W: dev and test;
    S&S trained word2vec on train + dev).
  held_out_raw: raw splits that feed only its dev or test split (held out
    whole when it is the vectors' target: IMDB's test is a sample of aclImdb test).
  hierarchical: its documents come with sentences (S&S's HAN reads them).
  max_query_tokens: a paired dataset's longest query, SOS and EOS counted,
    which its QA model's query encoder reads (`model.query_width`) instead
    of the whole row; the loader refuses a longer one. None: the whole row.
  evidence: its documents name the words that support their label (bAbI's
    supporting facts: the `evidence` stage scores importance measures by them).
  corpus_text: a raw record -> its text in the vectors' corpus; None: its
    text is not a corpus the vectors can be trained on.
  corpus_tokenizer: how the corpus is tokenised when this dataset is the
    target (None: `tokenizer`).
  corpus_sentences: a text -> its sentences of words, for targets whose
    vectors are trained a sentence a line (S&S).
  pretrained: its configs start from the in-domain vectors attn_jax.vectors
    builds with J&W's recipe for wiki.simple.vec, as J&W's models started
    from pretrained vectors on all their datasets: a reproduction's default
    is the protocol closest to the paper's, and dev ROC-AUC decides only
    between equally close ones, never a test number (docs/jain_wallace.md,
    "Embeddings").
  embed_init_std: the standard deviation of from-scratch embeddings:
    PyTorch's N(0, 1) unless the dataset's dev ROC-AUC, J&W's selection
    metric, favoured N(0, 0.1²) (docs/jain_wallace.md, "Embeddings").
  generate: (config.data.<name>, wanted splits) -> `jain_wallace.Prepared`,
    for a dataset made without files (the synthetic task).
  recipe: (config, encoder) -> None: what the paper's recipe for this
    dataset changes in the shared keys (sizes, epochs, loss, selection),
    applied after the encoder family's.
  """
  name: str
  paper: Optional[str]
  order: int
  title: str
  prepare: Optional[Callable[[dict, tuple], Any]]
  tokenizer: Callable[[str], list]
  classes: tuple[str, ...] = ('neg', 'pos')
  raw: str = ''
  source: Any = None
  reference: Mapping[str, tuple] = dataclasses.field(default_factory=dict)
  builder: Optional[Callable[[Optional[dict], Optional[str]], Any]] = None
  texts: tuple[str, ...] = ('text',)
  held_out: tuple[str, ...] = ('dev', 'test')
  held_out_raw: tuple[str, ...] = ()
  hierarchical: bool = False
  max_query_tokens: Optional[int] = None
  evidence: bool = False
  corpus_text: Optional[Callable[[dict], str]] = None
  corpus_tokenizer: Optional[Callable[[str], list]] = None
  corpus_sentences: Optional[Callable[[str], list]] = None
  pretrained: bool = False
  embed_init_std: float = 1.0
  generate: Optional[Callable[[Any, tuple], Any]] = None
  recipe: Callable[[Any, str], None] = lambda cfg, encoder: None

  @property
  def raw_name(self) -> str:
    """The dataset whose files and builder this one reads."""
    return self.raw or self.name

  @property
  def num_classes(self) -> int:
    return len(self.classes)

  @property
  def paired(self) -> bool:
    """Whether a document is a passage with a query (QA, NLI)."""
    return len(self.texts) > 1


def with_files() -> list[DatasetSpec]:
  """The datasets that have files of their own (a source and a builder)."""
  return [d for d in DATASETS.values() if d.source is not None]


def corpus_sources() -> tuple[str, ...]:
  """The datasets whose text in-domain vectors can be trained on."""
  return tuple(d.name for d in DATASETS.values() if d.corpus_text is not None)
