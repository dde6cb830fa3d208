"""attn-jax's inputs of one configuration in the files J&W's trainers read.

`export` (in the attn-jax process) writes one `.npz` per dataset and embedding
choice: the vocabulary, the embedding matrix the attn-jax model starts from
(`attn_jax.workdirs.initial_params.pretrained_matrix`: the same bytes), and every
split as token ids with [SOS] .. [EOS] (J&W's `Vectorizer.convert_to_sequence`
layout) and labels. `write_vectorizer` (in the child, beside J&W's code) fills
J&W's own `Vectorizer` object with them and pickles it where J&W's dataset
loader (`Trainers/DatasetBC.py`) looks. The splits are already length-filtered
(attn-jax's `length_filter` is J&W's `filterbylength`, giving their split
sizes), so the child builds J&W's `Dataset` with bounds that keep every
document — a second pass of `filterbylength` would drop each split's longest
documents again — and their sorting and positive-class weight apply as in
their loaders. With `analysis.sample_docs` set, the file also holds the
indices of the sampled test documents (`attn_jax.stages.stage_runner.sample_indices`):
the child runs J&W's experiments on those (accuracy stays on the whole split).

Nothing here imports J&W's code at module level: the child passes its
`Vectorizer` class in.
"""

import json
import os
import pickle

import numpy as np

SPLITS = ('train', 'dev', 'test')

# attn-jax QA dataset -> (J&W's `DatasetQA.datasets` key, where its loader reads the pickle)
JW_QA_DATASETS = {
    f'babi{t}': (f'babi_{t}', f'preprocess/Babi/vec_babi_{name}_.p')
    for t, name in ((1, 'qa1_single-supporting-fact'), (2, 'qa2_two-supporting-facts'),
                    (3, 'qa3_three-supporting-facts'))}

# attn-jax dataset -> (J&W's `datasets` key, where J&W's loader reads the pickle)
JW_DATASETS = {
    'sst': ('sst', 'preprocess/SST/vec_sst.p'),
    'imdb': ('imdb', 'preprocess/IMDB/vec_imdb.p'),
    '20news': ('20News_sports', 'preprocess/20News/vec_20news_sports.p'),
}


def export(cfg, folder: str, log=print) -> str:
  """Writes (once) the inputs of `cfg` (an attn-jax config) under `folder`;
  returns the `.npz` path. The file name carries the data fingerprint and the
  vectors' sha256, so a changed input never reuses an old file."""
  # attn-jax is imported here only: the child process never needs it.
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  from attn_jax.workdirs.initial_params import pretrained_matrix  # pylint: disable=g-import-not-at-top

  dataset = load_dataset(cfg.data)
  pretrained = pretrained_matrix(cfg, dataset, log)
  record = {'dataset': cfg.data.dataset, 'fingerprint': dataset.fingerprint,
            'embed_dim': cfg.model.embed_dim, 'embeddings': 'scratch' if pretrained is None else 'pretrained',
            'sizes': {s: len(dataset.splits[s]) for s in SPLITS}}
  if pretrained is not None:
    matrix, vectors = pretrained
    sidecar = vectors['file'][:-len('.vec')] + '.json' if vectors['file'].endswith('.vec') else None
    sha = (atomic_io.read_json(sidecar).get('sha256') if sidecar and os.path.exists(sidecar)
           else atomic_io.sha256_file(vectors['file']))
    record['vectors'] = {**vectors, 'sha256': sha}
  tag = 'scratch' if pretrained is None else record['vectors']['sha256'][:8]
  sample = cfg.analysis.get('sample_docs')
  if sample is not None:
    # The test documents attn-jax's analyses see (`analysis.sample_docs`), by
    # the same function: J&W's experiments run on these, accuracy on all.
    from attn_jax.stages.stage_runner import sample_indices  # pylint: disable=g-import-not-at-top
    seed = cfg.analysis.get('sample_seed', 0)
    record['test_sample'] = {'docs': sample, 'seed': seed}
    tag += f'-sample{sample}s{seed}'
  path = os.path.join(folder, f'{cfg.data.dataset}-{dataset.fingerprint[:8]}-{tag}.npz')
  if os.path.exists(path):
    return path
  arrays = {'tokens': np.asarray(dataset.vocab.tokens, dtype=str),
            'record': np.asarray(json.dumps(record, sort_keys=True))}
  if pretrained is not None:
    arrays['embeddings'] = pretrained[0].astype(np.float32)
  if sample is not None:
    arrays['test_sample'] = sample_indices(len(dataset.splits['test']), sample, seed)
  if dataset.splits['train'].queries is not None:  # QA / NLI: each document's query, and the answer names
    arrays['classes'] = np.asarray(dataset.classes, dtype=str)
  for split in SPLITS:
    seqs = dataset.splits[split].sequences
    arrays[f'{split}_ids'] = np.concatenate(seqs).astype(np.int32)
    arrays[f'{split}_offsets'] = np.cumsum([0] + [len(s) for s in seqs]).astype(np.int64)
    arrays[f'{split}_labels'] = np.asarray(dataset.splits[split].labels, np.int64)
    queries = dataset.splits[split].queries
    if queries is not None:
      arrays[f'{split}_query_ids'] = np.concatenate(queries).astype(np.int32)
      arrays[f'{split}_query_offsets'] = np.cumsum([0] + [len(q) for q in queries]).astype(np.int64)
  os.makedirs(folder, exist_ok=True)
  # Compressed: IMDB's inputs must travel to a GPU host (--prepare-only / --from-plan).
  atomic_io.atomic_write(path, lambda f: np.savez_compressed(f, **arrays), mode='wb')
  log(f'inputs for J&W\'s code: {path} ({", ".join(f"{s} {n}" for s, n in record["sizes"].items())} documents, '
      f'{len(dataset.vocab)} words, {record["embeddings"]} embeddings)')
  return path


def read(path: str) -> dict:
  """{'record', 'tokens', 'embeddings' (or None), 'test_sample' (indices into
  the test split, or None: all analysed), split: (sequences, labels)}; QA /
  NLI inputs also 'classes' (answer names by label) and 'queries': {split:
  sequences}."""
  def sequences(z, name):
    ids, offsets = z[f'{name}_ids'], z[f'{name}_offsets']
    return [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]

  with np.load(path, allow_pickle=False) as z:
    out = {'record': json.loads(str(z['record'])), 'tokens': [str(t) for t in z['tokens']],
           'embeddings': z['embeddings'] if 'embeddings' in z.files else None,
           'test_sample': z['test_sample'].tolist() if 'test_sample' in z.files else None}
    for split in SPLITS:
      out[split] = (sequences(z, split), z[f'{split}_labels'].tolist())
    if 'classes' in z.files:
      out['classes'] = [str(c) for c in z['classes']]
      out['queries'] = {split: sequences(z, f'{split}_query') for split in SPLITS}
  return out


def write_vectorizer(inputs: dict, vectorizer_class, data_dir: str) -> tuple[str, str]:
  """J&W's `Vectorizer` holding `inputs` (from `read`), pickled where J&W's
  loader for the dataset reads it under `data_dir`; returns J&W's dataset name
  and the pickle's path relative to `data_dir`.

  J&W's vectorizer gives ids 0-3 to PAD, UNK, SOS, EOS and the words after;
  attn-jax's vocabulary has the same layout, so ids pass unchanged."""
  key, relpath = JW_DATASETS[inputs['record']['dataset']]
  vec = _vectorizer(inputs, vectorizer_class)
  vec.seq_text = {s: inputs[s][0] for s in SPLITS}
  vec.label = {s: inputs[s][1] for s in SPLITS}
  _pickle(vec, os.path.join(data_dir, relpath))
  return key, relpath


def write_qa_vectorizer(inputs: dict, vectorizer_class, data_dir: str) -> tuple[str, str]:
  """J&W's QA `Vectorizer` (their `preprocess_data_QA.py`'s fields: the
  paragraphs, questions, answers and all-ones entity masks of each split, the
  sorted answer list as `entity2idx`) holding `inputs`, pickled where J&W's
  QA loader (`Trainers/DatasetQA.py`) reads it; returns J&W's dataset key and
  the pickle's path relative to `data_dir`. attn-jax's answer classes are
  J&W's sorted entity list, so labels pass unchanged."""
  key, relpath = JW_QA_DATASETS[inputs['record']['dataset']]
  vec = _vectorizer(inputs, vectorizer_class)
  vec.entity2idx = {c: i for i, c in enumerate(inputs['classes'])}
  vec.idx2entity = dict(enumerate(inputs['classes']))
  vec.paragraphs = {s: inputs[s][0] for s in SPLITS}
  vec.questions = {s: inputs['queries'][s] for s in SPLITS}
  vec.answers = {s: inputs[s][1] for s in SPLITS}
  vec.entity_masks = {s: [[1] * len(inputs['classes'])] * len(inputs[s][1]) for s in SPLITS}
  _pickle(vec, os.path.join(data_dir, relpath))
  return key, relpath


def _pickle(vec, path: str) -> None:
  """`vec` pickled at `path`, written whole or not at all."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path + '.partial', 'wb') as f:
    pickle.dump(vec, f)
  os.replace(path + '.partial', path)


def _vectorizer(inputs: dict, vectorizer_class):
  """J&W's `Vectorizer` with `inputs`' vocabulary and embeddings (both loaders' fields)."""
  vec = vectorizer_class()
  vec.word2idx = {w: i for i, w in enumerate(inputs['tokens'])}
  vec.idx2word = dict(enumerate(inputs['tokens']))
  vec.vocab_size = len(inputs['tokens'])
  vec.embeddings = inputs['embeddings']
  vec.word_dim = inputs['record']['embed_dim']
  return vec
