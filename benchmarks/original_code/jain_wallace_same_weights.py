"""J&W's own analysis code on a model attn-jax trained: do the two compute the
same τ from the same weights?

    python benchmarks/original_code/jain_wallace_same_weights.py --jw-repo=~/AttentionExplanation \\
        --runs='workdirs/jw_grid_fixed/sst_cnn_tanh/seed0,workdirs/jw_grid_fixed/sst_average_tanh/seed0' \\
        --root=workdirs/jw_same_weights --save=results/jw_reference/diagnostics/same_weights

Where J&W's code and attn-jax, each trained on the same inputs, disagree on a
τ (`benchmarks/original_code/jain_wallace_reference.py`), this says on which side of training the
difference lies. For each attn-jax model folder (with its checkpoint and its
`kendall` results over the whole test split), the model's weights are put
into J&W's own `Model` (their module names: the embedding, `rnn` /
`convolutions` / `projection`, the decoder's `attention` and `linear_1`), and
J&W's `evaluate`, `gradient_experiment`, `remove_and_run_experiment` and τ
functions run on the same test split in a child process
(`jain_wallace_same_weights_child.py`). The per-document τ are then compared with
attn-jax's `kendall` results of that model: the mean of each side, how many
documents differ by more than 1e-6, the largest difference, and the largest
difference in P(y = 1). Equal τ from equal weights put a disagreement between
the two implementations in training; unequal ones in the analyses.
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jain_wallace_inputs  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import jain_wallace_patches  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import jain_wallace_reference  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position

PAIRS = ('tau_attention_gradient', 'tau_attention_loo', 'tau_gradient_loo')


def jw_state(params: dict, attention: str) -> dict:
  """attn-jax's BiLSTM, CNN or Average params as J&W's state dicts,
  {'encoder/<name>': array, 'decoder/<name>': array} (PyTorch layouts:
  Linear [out, in], Conv1d [out, in, k], the LSTM's gates i, f, g, o as
  attn-jax's)."""
  np_tree = lambda tree: ({k: np_tree(v) for k, v in tree.items()} if isinstance(tree, dict)
                          else np.asarray(tree, np.float32))
  p = np_tree(params)
  table = p['embedding']['table'].copy()
  table[0] = 0.0  # J&W's padding_idx row
  state = {'encoder/embedding.weight': table}
  enc = p['encoder']
  if 'w_hh' in enc:
    for d, suffix in enumerate(('', '_reverse')):
      state[f'encoder/rnn.weight_ih_l0{suffix}'] = enc['w_ih'][d].T
      state[f'encoder/rnn.weight_hh_l0{suffix}'] = enc['w_hh'][d].T
      state[f'encoder/rnn.bias_ih_l0{suffix}'] = enc['bias'][d]
      state[f'encoder/rnn.bias_hh_l0{suffix}'] = enc['bias_hh'][d] if 'bias_hh' in enc else 0 * enc['bias'][d]
  elif any(k.startswith('conv') for k in enc):
    for i, k in enumerate(sorted(int(name[4:]) for name in enc if name.startswith('conv'))):
      state[f'encoder/convolutions.{i}.weight'] = np.transpose(enc[f'conv{k}']['kernel'], (2, 1, 0))
      state[f'encoder/convolutions.{i}.bias'] = enc[f'conv{k}']['bias']
  else:
    state['encoder/projection.weight'] = enc['projection']['kernel'].T
    state['encoder/projection.bias'] = enc['projection']['bias']
  att = p['attention']
  if attention == 'dot':
    state['decoder/attention.attn1.weight'] = att['query']['kernel'].T
  else:
    state['decoder/attention.attn1.weight'] = att['projection']['kernel'].T
    state['decoder/attention.attn1.bias'] = att['projection']['bias']
    state['decoder/attention.attn2.weight'] = att['v']['kernel'].T
  state['decoder/linear_1.weight'] = p['decoder']['output']['kernel'].T
  state['decoder/linear_1.bias'] = p['decoder']['output']['bias']
  return {k: np.ascontiguousarray(v) for k, v in state.items()}


def compare(ours: dict, theirs: dict) -> dict:
  """Per τ: both means (NaN-robust), the documents differing by > 1e-6 (a
  NaN on one side only counts), the largest difference."""
  out = {}
  for pair in PAIRS:
    a, b = np.asarray(ours[pair], float), np.asarray(theirs[pair], float)
    both = ~np.isnan(a) & ~np.isnan(b)
    diff = np.abs(a - b)[both]
    out[pair] = {'attn_jax': float(np.nanmean(a)), 'jw_code': float(np.nanmean(b)),
                 'documents_differing': int((diff > 1e-6).sum() + (np.isnan(a) != np.isnan(b)).sum()),
                 'max_abs_difference': float(diff.max()) if diff.size else None}
  return out


def one_run(run: str, code: str, root: str, threads: int) -> dict:
  from attn_jax.workdirs.restore import restore  # pylint: disable=g-import-not-at-top
  from attn_jax.stages import stage_store as store  # pylint: disable=g-import-not-at-top
  restored = restore(run)
  cfg = restored.config
  found = store.most_complete(run, 'kendall')
  if found is None or found.summary.get('key', {}).get('split') != 'test' or 'sample' in found.summary['key']:
    sys.exit(f'jain_wallace_same_weights: {run} has no kendall results over its test split: run its analyses first')
  ours = store.load_arrays(found.directory, found.summary)
  inputs = jain_wallace_inputs.export(cfg, os.path.join(root, 'inputs'))
  if len(ours[PAIRS[0]]) != jain_wallace_inputs.read(inputs)['record']['sizes']['test']:
    sys.exit(f'jain_wallace_same_weights: {run}\'s kendall results cover {len(ours[PAIRS[0]])} documents, not the '
             'whole test split')
  name = run.strip('/').replace('/', '_')
  out = os.path.join(root, name)
  os.makedirs(out, exist_ok=True)
  weights = os.path.join(out, 'weights.npz')
  np.savez(weights, **jw_state(restored.params, cfg.model.attention))
  encoder = jain_wallace_reference.jw_config_key(cfg.model.encoder, cfg.model.attention)
  job = {'child': 'jain_wallace_same_weights_child.py', 'inputs': os.path.relpath(inputs, root), 'seed': 0,
         'args': [f'--config={encoder}', f'--weights={weights}']}
  result = jain_wallace_reference.run_seed(code, job, root, out, threads)
  if result.returncode != 0:
    sys.exit(f'jain_wallace_same_weights: J&W\'s code failed on {run}; see {out}/log.txt')
  with np.load(os.path.join(out, 'same_weights.npz')) as z:
    theirs = dict(z)
  with np.load(os.path.join(run, 'predictions_test.npz')) as z:  # attn-jax's P(y = 1), split order
    probability = z['probs'].astype(np.float64)
  return {'run': run, 'documents': int(len(ours[PAIRS[0]])), 'kendall_results': found.directory,
          'tau': compare(ours, theirs),
          'max_abs_probability_difference': float(np.abs(probability - theirs['probability']).max())}


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--jw-repo', required=True)
  parser.add_argument('--runs', required=True, help='attn-jax model folders, comma-separated')
  parser.add_argument('--root', default='workdirs/jw_same_weights')
  parser.add_argument('--save', default=None, help='write <save>/<run>.json')
  parser.add_argument('--threads', type=int, default=1)
  args = parser.parse_args(argv)
  root = os.path.abspath(args.root)
  code = os.path.join(root, 'code')
  jain_wallace_reference.copy_checkout('jain_wallace_same_weights', '--jw-repo', args.jw_repo, code, jain_wallace_patches.JW)
  for run in [r.strip() for r in args.runs.split(',') if r.strip()]:
    record = one_run(run, code, root, args.threads)
    print(json.dumps(record, indent=1))
    if args.save:
      os.makedirs(args.save, exist_ok=True)
      path = os.path.join(args.save, '-'.join(os.path.normpath(run).split(os.sep)[-3:]) + '.json')
      with open(path + '.partial', 'w') as f:
        json.dump(record, f, indent=1, sort_keys=True)
      os.replace(path + '.partial', path)


if __name__ == '__main__':
  main()
