"""bAbI question answering tasks 1-3 (Weston et al. 2015) as J&W prepare them.

J&W's `preprocess/Babi/Babi.ipynb` (read for this module; the steps, not
their code): the 10k English release (`en-10k`); a question's passage is the
statements of its story before it, each without its final '.', joined by
' . ' (so '.' is a word between sentences, none after the last); the
question loses its '?'; words are split on spaces, case kept, nothing
cleaned; SOS and EOS around passage and question. Dev is 15 % of the train
file (J&W's seed 16377, scikit-learn's rounding; the members differ from
`train_test_split`'s, as for the classification protocols), test is the
test file. The vocabulary is every word of the train split's passages and
questions (min_df 1). The answer classes are every word of the three tasks'
train vocabulary, sorted (`ANSWERS`: 36, of which six places are ever an
answer), one list for the three tasks, nothing masked.

Known evidence: each question names its supporting statements; their words'
positions in the passage are each document's `evidence`.

Task 3's 10k train file is not among the files here: the 1k one (its first
1,000 questions) is read instead, and the data's source record says so.
"""

import os

import numpy as np
import tensorflow_datasets as tfds

from attn_jax.core.errors import DataError
from attn_jax.core.registry import DATASETS
from attn_jax.data import jain_wallace_protocol as jain_wallace
from attn_jax.data.builders import builder as base
from attn_jax.data.datasets.dataset_spec import DatasetSpec
from attn_jax.data.sources import KnownFile, Source

URL = 'http://www.thespermwhale.com/jaseweston/babi/tasks_1-20_v1-2.tar.gz'
TASKS = {1: 'single-supporting-fact', 2: 'two-supporting-facts', 3: 'three-supporting-facts'}
# Questions per file of the 10k release (J&W's); the 1k release has 1,000.
OFFICIAL_QUESTIONS = {'train': 10000, 'test': 1000}
DEV_FRACTION, DEV_SEED = 0.15, 16377
# The longest question a QA model's query encoder reads, SOS and EOS
# counted: tasks 1-3 ask at most 7 words ('Where was the football before the
# kitchen'), 9 tokens; 16 leaves room and is a multiple of 8.
MAX_QUESTION_TOKENS = 16
# Every word of the three tasks' train passages and questions, sorted (the
# same from the 10k and the 1k files).
ANSWERS = (
    '.', 'Daniel', 'John', 'Mary', 'Sandra', 'Where', 'apple', 'back', 'bathroom', 'bedroom', 'before',
    'discarded', 'down', 'dropped', 'football', 'garden', 'got', 'grabbed', 'hallway', 'is', 'journeyed',
    'kitchen', 'left', 'milk', 'moved', 'office', 'picked', 'put', 'the', 'there', 'to', 'took',
    'travelled', 'up', 'was', 'went')


def file_name(task: int, split: str) -> str:
  return f'qa{task}_{TASKS[task]}_{split}.txt'


def parse(path: str) -> list[tuple[str, dict]]:
  """(key, example) of every question of a bAbI file.

  A story's lines are numbered from 1 (a new story starts where the number
  goes back to 1); a question line is `question<TAB>answer<TAB>ids`, the
  ids being its supporting lines' numbers. Each question gets its story's
  statements before it, with their numbers.

  Raises:
    DataError: a line not of this format, naming the file and line.
  """
  examples, statements = [], []
  for line_no, line in enumerate(base.read_text(path).splitlines(), 1):
    if not line.strip():
      continue
    number, _, text = line.partition(' ')
    if not number.isdigit() or not text:
      raise base.malformed(path, f'line {line_no} does not start with a line number: {line[:60]!r}')
    if number == '1':
      statements = []
    if '\t' not in text:
      statements.append((int(number), text.strip()))
      continue
    parts = text.split('\t')
    if len(parts) != 3 or not parts[2].split() or not all(i.isdigit() for i in parts[2].split()):
      raise base.malformed(path, f'line {line_no}: a question line is question<TAB>answer<TAB>line numbers')
    supporting = [int(i) for i in parts[2].split()]
    missing = sorted(set(supporting) - {n for n, _ in statements})
    if missing:
      raise base.malformed(path, f'line {line_no}: supporting line(s) {missing} are not statements of its story')
    key = f'{os.path.basename(path)}:{line_no}'
    examples.append((key, {'id': key, 'story': [s for _, s in statements],
                           'line_numbers': [n for n, _ in statements], 'question': parts[0].strip(),
                           'answer': parts[1].strip(), 'supporting': supporting}))
  return examples


class BabiTasks(base.ArchiveBuilder, skip_registration=True):
  """`qa{task}_*_{train,test}.txt`: every question with its story so far."""

  DATASET = 'babi1'
  BUILDER_CONFIGS = [tfds.core.BuilderConfig(name=f'qa{t}', description=TASKS[t]) for t in TASKS]

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.DATASET = f'babi{self.builder_config.name[2:]}'  # pylint: disable=invalid-name

  def _info(self):
    return self.dataset_info_from_configs(
        features=tfds.features.FeaturesDict({
            'id': tfds.features.Text(),
            'story': tfds.features.Sequence(tfds.features.Text()),
            'line_numbers': tfds.features.Sequence(tfds.features.Scalar(np.int32)),
            'question': tfds.features.Text(),
            'answer': tfds.features.Text(),
            'supporting': tfds.features.Sequence(tfds.features.Scalar(np.int32)),
        }),
        homepage='https://research.facebook.com/downloads/babi/',
        disable_shuffling=True)

  def _read(self, files):
    splits = {}
    for split in ('train', 'test'):
      splits[split] = parse(files[split])
      if not splits[split]:
        raise base.malformed(files[split], 'no question lines')
      count = len(splits[split])
      if split == 'train' and count == 1000:
        self.count_notes.append(
            f'{os.path.basename(files[split])}: the 1k release (1,000 questions); J&W trained on the 10k '
            'file (10,000): put en-10k/' + os.path.basename(files[split]) + ' beside it')
      else:
        base.check_official_count(self.count_notes, files[split], 'questions', count,
                                  OFFICIAL_QUESTIONS[split])
    return splits


def _passage(statements: list[str]) -> tuple[list[str], list[int]]:
  """J&W's passage words, and where each statement's words start."""
  words, starts = [], []
  for i, statement in enumerate(statements):
    if i:
      words.append('.')
    starts.append(len(words))
    words.extend((statement[:-1] if statement.endswith('.') else statement).split(' '))
  return words, starts


def _tokenized(records: list[dict]) -> jain_wallace.TokenizedSplit:
  docs, queries, labels, evidence = [], [], [], []
  classes = {a: i for i, a in enumerate(ANSWERS)}
  for r in records:
    words, starts = _passage(r['story'])
    where = {n: i for i, n in enumerate(r['line_numbers'])}
    positions = []
    for number in r['supporting']:
      i = where[number]
      end = starts[i + 1] - 1 if i + 1 < len(starts) else len(words)  # before the next ' . '
      positions.extend(range(starts[i], end))
    if r['answer'] not in classes:
      raise DataError(f'bAbI {r["id"]}: the answer {r["answer"]!r} is not a word of tasks 1-3 '
                      '(J&W\'s answer classes); is this a file of tasks 1-3?')
    question = r['question']
    docs.append(words)
    queries.append((question[:-1] if question.endswith('?') else question).split(' '))
    labels.append(classes[r['answer']])
    evidence.append(sorted(positions))
  return jain_wallace.TokenizedSplit(docs, np.asarray(labels, np.int32), [r['id'] for r in records],
                                     queries=queries, evidence=evidence)


def read_questions(path: str) -> jain_wallace.TokenizedSplit:
  """Every question of a bAbI file, in file order, as `prepare` tokenises
  it (J&W's passage words, the question, the answer, the evidence positions
  in the passage): what the evidence stage scores, read without a model,
  e.g. for the rankings that read no model (`attn_jax.tables.known_evidence`)."""
  return _tokenized([example for _, example in parse(path)])


def prepare(raw: dict, wanted) -> jain_wallace.Prepared:
  """J&W's bAbI protocol (see the module's docstring)."""
  train_all = _tokenized(raw['train'])
  dev_idx, train_idx = jain_wallace.split_indices(len(train_all), DEV_FRACTION, 'up', DEV_SEED)
  splits = {'train': train_all.subset(train_idx), 'dev': train_all.subset(dev_idx),
            'test': _tokenized(raw['test'])}
  vocab_docs = splits['train'].docs + splits['train'].queries if 'train' in wanted else None
  return jain_wallace.Prepared({s: splits[s] for s in wanted}, vocab_docs, min_df=1, classes=ANSWERS)


def recipe(cfg, encoder: str) -> None:
  """J&W's bAbI settings (`Trainers/DatasetQA.py`, `configurations.py`): 50-d
  embeddings from scratch, hidden size 32 (the BiLSTM's per direction; the
  CNN's 32 over its four widths, J&W's 4 × 32 // 4), batches of 50, 100
  epochs, cross-entropy, the model of the best dev accuracy (a model whose dev
  accuracy reaches 1.0 stops there: no later epoch could be selected)."""
  del encoder
  cfg.model.embed_dim, cfg.model.hidden_dim = 50, 32
  cfg.train.update(batch_size=50, epochs=100, loss='cross_entropy', select_by='accuracy', stop_when_perfect=True)


def _builder(task: int):
  def make(files, data_dir):
    return BabiTasks(files=files, data_dir=data_dir, file_format='array_record', config=f'qa{task}')
  return make


def _download(task: int):
  def fetch(dl) -> dict[str, str]:
    root = dl.download_and_extract(URL)
    return {s: os.fspath(root / 'tasks_1-20_v1-2' / 'en-10k' / file_name(task, s)) for s in ('train', 'test')}
  return fetch


# ../shared/data/babi/SOURCE.md: sha256 of the copies here; task 3's 10k train file by its git blob id.
_KNOWN = {
    (1, 'train'): (KnownFile('qa1_single-supporting-fact_train.txt', 944248,
                             '749ea9f7c99070feb2d88c975a254417a0dcc8274add4435ae5ae24c7afc7e9d'),
                   KnownFile('qa1_single-supporting-fact_train.txt', 94346,
                             'c64ba9b1a49bbb111ffc4cd2ae4f129d25c012399dd7ade9679eea464b9afb05')),
    (1, 'test'): (KnownFile('qa1_single-supporting-fact_test.txt', 94477,
                            '55acf66cef2f6d798e2aa1d056e1ec8f24e910ea9215b639450574321132959b'),),
    (2, 'train'): (KnownFile('qa2_two-supporting-facts_train.txt', 1794716,
                             'd4074c0c5d54f70ce2f538056ce2b6ef6a313da336da4245f1a24f1298e37ef3'),
                   KnownFile('qa2_two-supporting-facts_train.txt', 177412,
                             'a4978af5bc0dc30191810e7c9949aaa6eae939ed0f6beb9fcb5f4330c2a27860')),
    (2, 'test'): (KnownFile('qa2_two-supporting-facts_test.txt', 179835,
                            'eff93fb9cd81ba02eb765772cf7cc269769ed44ec71cbbbc19cfb16ee5eba0f6'),),
    (3, 'train'): (KnownFile('qa3_three-supporting-facts_train.txt', 529204,
                             'a6e78019f36a02a7ed71fe6aaded0b563ff09c8deec392931801fcd9c6af4d60'),
                   KnownFile('qa3_three-supporting-facts_train.txt', None, None,
                             git_blob='9b2b35ca4357ea8ee44692c71ec71892edf51399')),
    (3, 'test'): (KnownFile('qa3_three-supporting-facts_test.txt', 526527,
                            '17795c977100baf8188f386522ae301b62d6c1a13efc01b3aea781e588b4d57f'),),
}

for _task in TASKS:
  DATASETS.register(DatasetSpec(
      name=f'babi{_task}', paper='jw', order=70 + _task, title=f'bAbI task {_task} ({TASKS[_task]})',
      prepare=prepare, tokenizer=str.split, classes=ANSWERS, texts=('passage', 'question'),
      source=Source(f'bAbI task {_task}', 'babi',
                    {s: (f'en-10k/{file_name(_task, s)}', f'en/{file_name(_task, s)}') for s in ('train', 'test')},
                    frozenset(), URL, _download(_task)),
      reference={s: _KNOWN[_task, s] for s in ('train', 'test')},
      builder=_builder(_task), embed_init_std=1.0, recipe=recipe, evidence=True,
      max_query_tokens=MAX_QUESTION_TOKENS))
