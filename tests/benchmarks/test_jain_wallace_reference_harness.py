"""benchmarks/original_code/jain_wallace_reference.py's parts that need no J&W checkout: the patched
copy (on a fixture checkout in J&W's layout), the allennlp stand-in, and the
inputs written in J&W's `Vectorizer` format."""

import json
import os
import pickle
import sys

import numpy as np
import pytest
import helpers

BENCHMARKS = os.path.join(helpers.ROOT, 'benchmarks', 'original_code')
sys.path.insert(0, BENCHMARKS)
import jain_wallace_child  # pylint: disable=g-import-not-at-top,wrong-import-position
import jain_wallace_inputs  # pylint: disable=g-import-not-at-top,wrong-import-position
import jain_wallace_patches  # pylint: disable=g-import-not-at-top,wrong-import-position

from conftest import requires_real_data  # pylint: disable=g-import-not-at-top,wrong-import-position
from helpers import synthetic_config  # pylint: disable=g-import-not-at-top,wrong-import-position


def fake_checkout(folder, drop_anchor=None, source=jain_wallace_patches.JW):
  """A folder with J&W's (or `source`'s) file layout whose files hold each
  changed line (and filler), as a checkout of their repository would."""
  anchors = {}
  for change in source.changes:
    anchors.setdefault(change.file, []).extend([change.old] * change.count)
  for name in source.files:
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lines = [f'# {name}'] + [a for a in anchors.get(name, []) if a != drop_anchor]
    with open(path, 'w') as f:
      f.write('\n'.join(lines) + '\n')
  return folder


def test_the_copy_carries_every_change_and_leaves_the_checkout_alone(tmp_path):
  repo = fake_checkout(str(tmp_path / 'repo'))
  before = {n: open(os.path.join(repo, n)).read() for n in jain_wallace_patches.FILES}
  record = jain_wallace_patches.prepare(repo, str(tmp_path / 'code'))
  assert [c['file'] for c in record['changes']] == [c.file for c in jain_wallace_patches.CHANGES]
  for change in jain_wallace_patches.CHANGES:
    text = open(tmp_path / 'code' / 'Transparency' / change.file).read()
    assert change.old not in text and text.count(change.new) >= change.count
  assert before == {n: open(os.path.join(repo, n)).read() for n in jain_wallace_patches.FILES}
  saved = json.loads((tmp_path / 'code' / 'Transparency' / 'attn_jax_changes.json').read_text())
  assert saved == record
  # A second call keeps the copy (same commit, same changes).
  stamp = os.path.getmtime(tmp_path / 'code' / 'Transparency' / 'attn_jax_changes.json')
  jain_wallace_patches.prepare(repo, str(tmp_path / 'code'))
  assert os.path.getmtime(tmp_path / 'code' / 'Transparency' / 'attn_jax_changes.json') == stamp


def test_another_version_of_their_code_is_named_not_half_patched(tmp_path):
  change = jain_wallace_patches.CHANGES[2]
  repo = fake_checkout(str(tmp_path / 'repo'), drop_anchor=change.old)
  with pytest.raises(jain_wallace_patches.PatchError, match=change.file):
    jain_wallace_patches.prepare(repo, str(tmp_path / 'code'))
  assert not (tmp_path / 'code' / 'Transparency').exists()
  with pytest.raises(jain_wallace_patches.PatchError, match='not a checkout'):
    jain_wallace_patches.prepare(str(tmp_path), str(tmp_path / 'code'))


def test_the_allennlp_stand_in_builds_registered_classes_from_params():
  sys.path.append(os.path.join(BENCHMARKS, 'jain_wallace_shims'))
  try:
    from allennlp.common import Params, Registrable  # pylint: disable=g-import-not-at-top
  finally:
    sys.path.remove(os.path.join(BENCHMARKS, 'jain_wallace_shims'))

  class Part(Registrable):
    pass

  @Part.register('scaled')
  class Scaled(Part):  # pylint: disable=unused-variable
    def __init__(self, size: int, inner: Part = None):
      self.size, self.inner = size, inner

  @Part.register('leaf')
  class Leaf(Part):  # pylint: disable=unused-variable
    def __init__(self):
      pass

  built = Part.from_params(Params({'type': 'scaled', 'size': 3, 'inner': 'leaf'}))
  assert built.size == 3 and type(built.inner).__name__ == 'Leaf'
  with pytest.raises(KeyError):
    Part.by_name('missing')


class _Vectorizer:
  """The attributes J&W's `Vectorizer` carries (their loader reads these)."""


def test_inputs_reach_jw_format_unchanged(tmp_path):
  cfg = synthetic_config()
  cfg.data.dataset = 'synthetic'
  path = jain_wallace_inputs.export(cfg, str(tmp_path))
  assert jain_wallace_inputs.export(cfg, str(tmp_path)) == path  # written once
  inputs = jain_wallace_inputs.read(path)
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  dataset = load_dataset(cfg.data)
  assert inputs['tokens'] == list(dataset.vocab.tokens)
  for split in jain_wallace_inputs.SPLITS:
    seqs, labels = inputs[split]
    assert seqs == [s.tolist() for s in dataset.splits[split].sequences]
    assert labels == dataset.splits[split].labels.tolist()
    assert all(s[0] == 2 and s[-1] == 3 for s in seqs)  # J&W's [SOS] .. [EOS]
  assert inputs['embeddings'] is None and inputs['record']['embeddings'] == 'scratch'

  inputs['record']['dataset'] = 'sst'  # where J&W's SST loader reads
  name, relpath = jain_wallace_inputs.write_vectorizer(inputs, _Vectorizer, str(tmp_path / 'data'))
  assert (name, relpath) == ('sst', 'preprocess/SST/vec_sst.p')
  with open(tmp_path / 'data' / 'preprocess' / 'SST' / 'vec_sst.p', 'rb') as f:
    vec = pickle.load(f)
  assert vec.seq_text['test'] == inputs['test'][0] and vec.label['dev'] == inputs['dev'][1]
  assert vec.vocab_size == len(inputs['tokens']) and vec.idx2word[2] == inputs['tokens'][2]


def test_a_sample_is_the_documents_attn_jax_analyses(tmp_path):
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  from attn_jax.stages.stage_runner import limit_split  # pylint: disable=g-import-not-at-top
  cfg = synthetic_config()
  cfg.analysis.sample_docs, cfg.analysis.sample_seed = 7, 2
  path = jain_wallace_inputs.export(cfg, str(tmp_path))
  assert path.endswith('-scratch-sample7s2.npz')
  inputs = jain_wallace_inputs.read(path)
  ours = limit_split(load_dataset(cfg.data).splits['test'], None, 7, 2)
  assert [inputs['test'][0][i] for i in inputs['test_sample']] == [s.tolist() for s in ours.sequences]
  assert inputs['record']['test_sample'] == {'docs': 7, 'seed': 2}
  cfg.analysis.sample_docs = None
  assert jain_wallace_inputs.read(jain_wallace_inputs.export(cfg, str(tmp_path)))['test_sample'] is None


def test_pretrained_inputs_are_the_matrix_attn_jax_starts_from(tmp_path):
  cfg = synthetic_config()
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  vocab = load_dataset(cfg.data).vocab
  rng = np.random.default_rng(0)
  vec_file = tmp_path / 'words.vec'
  words = list(vocab.tokens[4:10])
  with open(vec_file, 'w') as f:
    f.write(f'{len(words)} {cfg.model.embed_dim}\n')
    for w in words:
      f.write(w + ' ' + ' '.join(f'{x:.6g}' for x in rng.normal(size=cfg.model.embed_dim)) + '\n')
  cfg.model.embeddings_file = str(vec_file)
  inputs = jain_wallace_inputs.read(jain_wallace_inputs.export(cfg, str(tmp_path / 'inputs')))
  from attn_jax.workdirs.initial_params import pretrained_matrix  # pylint: disable=g-import-not-at-top
  expected, _ = pretrained_matrix(cfg, load_dataset(cfg.data), lambda _: None)
  assert inputs['embeddings'].dtype == np.float32
  np.testing.assert_array_equal(inputs['embeddings'], expected)
  assert len(inputs['record']['vectors']['sha256']) == 64


def test_the_selected_epoch_is_jws_rule(tmp_path):
  # J&W save on a strictly better dev ROC-AUC and never at epoch 0.
  rows = [{'roc_auc': 0.9}, {'roc_auc': 0.8}, {'roc_auc': 0.85}, {'roc_auc': 0.85}, {'roc_auc': 0.7}]
  (tmp_path / 'epoch.txt').write_text(''.join(str(r) + '\n' for r in rows))
  assert jain_wallace_child.selected_epoch(str(tmp_path)) == 2
  assert jain_wallace_child.selected_epoch(str(tmp_path / 'missing')) is None


def _jw_logit(state: dict, doc: np.ndarray, attention: str) -> float:
  """J&W's model read from their state dict (PyTorch layouts), float64 loops:
  nn.Embedding, nn.LSTM (bidirectional, gates i, f, g, o) / nn.Conv1d ('same',
  ReLU, SOS and EOS zeroed) / nn.Linear + tanh, their tanh or dot attention
  over the words, `linear_1` on the context."""
  s = {k: np.asarray(v, np.float64) for k, v in state.items()}
  e = s['encoder/embedding.weight'][doc]
  n = len(doc)
  sig = lambda x: 1 / (1 + np.exp(-x))
  if 'encoder/rnn.weight_ih_l0' in s:
    def run(xs, suffix):
      w, u = s[f'encoder/rnn.weight_ih_l0{suffix}'], s[f'encoder/rnn.weight_hh_l0{suffix}']
      b = s[f'encoder/rnn.bias_ih_l0{suffix}'] + s[f'encoder/rnn.bias_hh_l0{suffix}']
      h = c = np.zeros(u.shape[1])
      out = []
      for x in xs:
        i, f, g, o = np.split(w @ x + u @ h + b, 4)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        out.append(h)
      return np.array(out)
    hidden = np.concatenate([run(e, ''), run(e[::-1], '_reverse')[::-1]], axis=1)
  elif 'encoder/convolutions.0.weight' in s:
    parts = []
    for i in range(len([k for k in s if k.startswith('encoder/convolutions.') and k.endswith('.weight')])):
      w, b = s[f'encoder/convolutions.{i}.weight'], s[f'encoder/convolutions.{i}.bias']
      k = w.shape[2]
      padded = np.concatenate([np.zeros(((k - 1) // 2, e.shape[1])), e, np.zeros(((k - 1) // 2, e.shape[1]))])
      parts.append(np.array([sum(w[:, :, j] @ padded[t + j] for j in range(k)) + b for t in range(n)]))
    hidden = np.maximum(np.concatenate(parts, axis=1), 0)
    hidden[0] = hidden[-1] = 0
  else:
    hidden = np.tanh(e @ s['encoder/projection.weight'].T + s['encoder/projection.bias'])
  if attention == 'dot':
    scores = hidden @ s['decoder/attention.attn1.weight'][0] / np.sqrt(hidden.shape[1])
  else:
    scores = np.tanh(hidden @ s['decoder/attention.attn1.weight'].T + s['decoder/attention.attn1.bias']) @ \
        s['decoder/attention.attn2.weight'][0]
  words = scores[1:n - 1]
  alpha = np.exp(words - words.max()) / np.exp(words - words.max()).sum()
  return float(s['decoder/linear_1.weight'][0] @ (alpha @ hidden[1:n - 1]) + s['decoder/linear_1.bias'][0])


@pytest.mark.parametrize('encoder, attention', [('bilstm', 'tanh'), ('cnn', 'dot'), ('cnn', 'tanh'),
                                                ('average', 'tanh'), ('average', 'dot')])
def test_attn_jax_weights_in_jw_module_names_compute_the_same_model(encoder, attention):
  import jain_wallace_same_weights  # pylint: disable=g-import-not-at-top
  from analysis_helpers import documents, setup  # pylint: disable=g-import-not-at-top
  model, params = setup(encoder, attention, seed=4)
  state = jain_wallace_same_weights.jw_state(params, attention)
  assert not state['encoder/embedding.weight'][0].any()  # J&W's padding_idx row
  for doc in documents(lengths=(3, 7, 11), seed=5):
    ours = float(model.forward(params, doc[None], np.array([len(doc)], np.int32)).logits[0])
    assert _jw_logit(state, doc, attention) == pytest.approx(ours, abs=2e-5)


def test_the_same_weights_comparison_counts_documents_that_differ():
  import jain_wallace_same_weights  # pylint: disable=g-import-not-at-top
  ours = {p: np.array([0.5, 0.2, np.nan, 0.1]) for p in jain_wallace_same_weights.PAIRS}
  theirs = {p: np.array([0.5, 0.25, np.nan, np.nan]) for p in jain_wallace_same_weights.PAIRS}
  result = jain_wallace_same_weights.compare(ours, theirs)['tau_attention_loo']
  assert result['documents_differing'] == 2 and result['max_abs_difference'] == pytest.approx(0.05)
  assert result['attn_jax'] == pytest.approx(0.8 / 3) and result['jw_code'] == pytest.approx(0.375)


def test_the_qa_copy_carries_the_qa_changes_too(tmp_path):
  repo = fake_checkout(str(tmp_path / 'repo'), source=jain_wallace_patches.JW_QA)
  record = jain_wallace_patches.prepare(repo, str(tmp_path / 'code'), jain_wallace_patches.JW_QA)
  assert len(record['changes']) == len(jain_wallace_patches.CHANGES) + 2
  decoder = open(tmp_path / 'code' / 'Transparency' / 'model' / 'modules' / 'Decoder.py').read()
  assert "(1 - entity_mask).bool()" in decoder
  assert os.path.exists(tmp_path / 'code' / 'Transparency' / 'Trainers' / 'TrainerQA.py')


@pytest.mark.heavy  # CI margin
@requires_real_data
def test_babi_inputs_reach_jws_qa_format_unchanged(tmp_path, tfds_dir):
  from attn_jax import config as config_lib  # pylint: disable=g-import-not-at-top
  from attn_jax.data.datasets.babi import ANSWERS  # pylint: disable=g-import-not-at-top
  from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
  cfg = config_lib.default_config('babi1', 'bilstm', 'smoke')
  cfg.data.tfds_data_dir = tfds_dir
  inputs = jain_wallace_inputs.read(jain_wallace_inputs.export(cfg, str(tmp_path)))
  dataset = load_dataset(cfg.data)
  assert inputs['classes'] == list(ANSWERS) == sorted(ANSWERS)  # J&W's sorted entity list
  name, relpath = jain_wallace_inputs.write_qa_vectorizer(inputs, _Vectorizer, str(tmp_path / 'data'))
  assert (name, relpath) == ('babi_1', 'preprocess/Babi/vec_babi_qa1_single-supporting-fact_.p')
  with open(tmp_path / 'data' / relpath, 'rb') as f:
    vec = pickle.load(f)
  for split in jain_wallace_inputs.SPLITS:
    ours = dataset.splits[split]
    assert vec.paragraphs[split] == [s.tolist() for s in ours.sequences]
    assert vec.questions[split] == [q.tolist() for q in ours.queries]
    assert vec.answers[split] == ours.labels.tolist()
    assert all(len(m) == len(ANSWERS) and set(m) == {1} for m in vec.entity_masks[split])
  assert vec.entity2idx['.'] == 0 and vec.idx2entity[len(ANSWERS) - 1] == ANSWERS[-1]


def test_jws_code_runs_as_many_seeds_of_a_row_as_attn_jax_trains():
  import jain_wallace_reference  # pylint: disable=g-import-not-at-top
  counts = {name: jain_wallace_reference.seeds_of(arm)
            for name, arm in jain_wallace_reference.arms('sst_cnn_*,imdb_bilstm_tanh', 'default')}
  assert counts == {'sst_cnn_tanh': 15, 'sst_cnn_dot': 15, 'imdb_bilstm_tanh': 5}
  qa = dict(jain_wallace_reference.arms('babi1_bilstm_tanh', 'default', 'jw_qa'))
  assert jain_wallace_reference.seeds_of(qa['babi1_bilstm_tanh'], 'jw_qa') == 5


def test_a_time_limit_stops_the_running_seed_and_starts_no_more_and_none_is_a_failure(tmp_path, capsys):
  """A GPU host lent by the minute runs a plan in chunks: past --time-limit the
  running child is stopped (it resumes inside next call) and no seed starts."""
  import jain_wallace_reference  # pylint: disable=g-import-not-at-top
  child = tmp_path / 'child.py'
  child.write_text('import json, os, sys, time\n'
                   'args = dict(a[2:].split("=", 1) for a in sys.argv[1:])\n'
                   'time.sleep(float(args["nap"]))\n'
                   'json.dump({"accuracy": 0.5, "f1_pos": 0.5}, open(os.path.join(args["out"], "summary.json"), "w"))\n')
  jobs = [{'arm': arm, 'seed': 0, 'inputs': 'none', 'child': str(child), 'args': [f'--nap={nap}']}
          for arm, nap in (('quick', 0), ('slow', 60), ('later', 0))]
  failed = jain_wallace_reference.run_jobs(jobs, str(tmp_path), str(tmp_path), 1, 1, None, time_limit=3)
  assert failed == []
  assert (tmp_path / 'quick' / 'seed0' / 'summary.json').exists()
  assert not (tmp_path / 'slow' / 'seed0' / 'summary.json').exists()
  assert not (tmp_path / 'later' / 'seed0').exists()  # never started
  out = capsys.readouterr().out
  assert 'time limit (3 s) reached: 2 seed(s) left for the next call, which resumes them: slow seed 0, later seed 0' in out


def test_a_seed_saved_from_the_same_inputs_is_not_run_again_on_a_new_machine(tmp_path, capsys):
  """A new machine has no ROOT: a seed in SAVE counts as done only if it ran on
  the same inputs file and J&W configuration."""
  import jain_wallace_reference  # pylint: disable=g-import-not-at-top
  child = tmp_path / 'child.py'
  child.write_text('import json, os, sys\n'
                   'args = dict(a[2:].split("=", 1) for a in sys.argv[1:])\n'
                   'json.dump({"accuracy": 0.5, "f1_pos": 0.5}, open(os.path.join(args["out"], "summary.json"), "w"))\n')
  jobs = [{'arm': 'row', 'config': 'lstm', 'seed': s, 'inputs': 'inputs/sst-abcd.npz', 'child': str(child),
           'args': []} for s in range(3)]
  save, root = tmp_path / 'save', tmp_path / 'root'
  for seed, file, config in ((0, 'sst-abcd.npz', 'lstm'), (1, 'sst-ffff.npz', 'lstm'), (2, 'sst-abcd.npz', 'cnn')):
    (save / 'row' / f'seed{seed}').mkdir(parents=True)
    (save / 'row' / f'seed{seed}' / 'summary.json').write_text(
        json.dumps({'inputs': {'file': file}, 'jw_config': config, 'seed': seed}))
  assert jain_wallace_reference.run_jobs(jobs, str(root), str(tmp_path), 1, 1, str(save)) == []
  assert 'planned, 1 already done' in capsys.readouterr().out
  assert not (root / 'row' / 'seed0').exists()  # saved from these inputs: not run again
  assert (root / 'row' / 'seed1' / 'summary.json').exists()  # other inputs: run
  assert (root / 'row' / 'seed2' / 'summary.json').exists()  # another configuration: run


def test_the_time_left_counts_a_resumed_seeds_training_from_its_earlier_call(tmp_path, capsys):
  """A seed resumed after its training finishes in this call in the time of its
  experiments; the estimate for the seeds still to run uses its whole time (the
  steps' seconds in its summary, training included), not this call's."""
  import jain_wallace_reference  # pylint: disable=g-import-not-at-top
  child = tmp_path / 'child.py'
  child.write_text('import json, os, sys\n'
                   'args = dict(a[2:].split("=", 1) for a in sys.argv[1:])\n'
                   'json.dump({"accuracy": 0.5, "f1_pos": 0.5, "seconds": {"train": 1200.0, "gradient": 0.0}},'
                   ' open(os.path.join(args["out"], "summary.json"), "w"))\n')
  jobs = [{'arm': 'row', 'seed': s, 'inputs': 'none', 'child': str(child), 'args': []} for s in range(3)]
  assert jain_wallace_reference.run_jobs(jobs, str(tmp_path), str(tmp_path), 1, 1, None) == []
  out = capsys.readouterr().out
  assert '1200 s in all; 1/3, about 40 min left]' in out
  assert '1200 s in all; 2/3, about 20 min left]' in out


def test_a_wp_seed_saved_from_the_same_inputs_is_not_run_again(tmp_path, capsys):
  """W&P's harness shares run_jobs; its jobs and summaries name no J&W configuration."""
  import jain_wallace_reference  # pylint: disable=g-import-not-at-top
  jobs = [{'arm': 'sst_learned_devsel', 'seed': 0, 'inputs': 'inputs/sst-abcd.npz', 'child': 'never.py',
           'args': []}]
  save = tmp_path / 'save'
  (save / 'sst_learned_devsel' / 'seed0').mkdir(parents=True)
  (save / 'sst_learned_devsel' / 'seed0' / 'summary.json').write_text(
      json.dumps({'inputs': {'file': 'sst-abcd.npz'}, 'seed': 0, 'attention': 'learned', 'selection': 'dev'}))
  assert jain_wallace_reference.run_jobs(jobs, str(tmp_path / 'root'), str(tmp_path), 1, 1, str(save)) == []
  assert '1 seeds planned, 1 already done' in capsys.readouterr().out


def test_a_seed_finished_but_not_saved_is_copied_by_the_next_call_with_save(tmp_path, capsys):
  """A session that saves elsewhere (so that nothing lands in results/ after its last commit) leaves
  finished seeds in ROOT; the next call with --save copies those that are this plan's (same inputs
  file, configuration and seed) and runs none of them again."""
  import jain_wallace_reference  # pylint: disable=g-import-not-at-top
  jobs = [{'arm': 'row', 'seed': s, 'config': 'lstm', 'inputs': 'inputs/sst-abcd.npz', 'child': 'never.py',
           'args': []} for s in range(2)]
  root, save = tmp_path / 'root', tmp_path / 'save'
  for seed, file in ((0, 'sst-abcd.npz'), (1, 'sst-ffff.npz')):
    (root / 'row' / f'seed{seed}').mkdir(parents=True)
    (root / 'row' / f'seed{seed}' / 'summary.json').write_text(
        json.dumps({'inputs': {'file': file}, 'jw_config': 'lstm', 'seed': seed, 'accuracy': 0.5}))
  jain_wallace_reference.run_jobs(jobs[:1], str(root), str(tmp_path), 1, 1, str(save))
  assert 'planned, 1 already done' in capsys.readouterr().out
  assert json.loads((save / 'row' / 'seed0' / 'summary.json').read_text())['accuracy'] == 0.5
  jain_wallace_reference.run_jobs([], str(root), str(tmp_path), 1, 1, str(save))
  assert not (save / 'row' / 'seed1').exists()  # not a job of this plan
  (root / 'row' / 'seed1' / 'summary.json').write_text(
      json.dumps({'inputs': {'file': 'sst-ffff.npz'}, 'jw_config': 'lstm', 'seed': 1}))
  jain_wallace_reference.run_jobs(jobs[1:], str(root), str(tmp_path), 1, 1, str(save))
  assert not (save / 'row' / 'seed1').exists()  # other inputs: not this job's seed, never copied
