"""One seed of W&P's Table 2 (learned or uniform attention) through W&P's own
code, on attn-jax's SST inputs.

    python benchmarks/original_code/wiegreffe_pinter_child.py --code=DIR --inputs=FILE.npz --attention=frozen \\
        --selection=test --seed=0 --out=DIR [--threads=N]

Run by `benchmarks/original_code/wiegreffe_pinter_reference.py` in a process of its own (no attn-jax
import). `--code` holds the patched copy `attention/` (`wiegreffe_pinter_patches.prepare`).
The steps are W&P's `train_and_run_experiments_bc.py` for `--encoder lstm
--attention tanh|frozen`: their argument namespace (n_iters 8, hidden size
128), `torch.manual_seed(seed)` and `np.random.seed(seed)`, their dataset
class, and `ExperimentsBC.train_dataset` (`Trainer.train_standard`, then
`Evaluator.evaluate` on the test set). W&P's snapshot of J&W's code has no dev
split and keeps the epoch with the best *test* ROC-AUC (`--selection=test`,
their script). `--selection=dev` gives `train_standard` attn-jax's dev split in
the test set's place (sorted by length as their loader sorts the test set) and
evaluates the kept model on the test set, as attn-jax and J&W's later code
select: the same functions, another argument.
"""

import argparse
import json
import os
import random
import time
import types

import jain_wallace_child


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--code', required=True, help='folder holding the patched attention/')
  parser.add_argument('--inputs', required=True)
  parser.add_argument('--attention', choices=['tanh', 'frozen'], required=True)
  parser.add_argument('--selection', choices=['test', 'dev'], default='test')
  parser.add_argument('--seed', type=int, required=True)
  parser.add_argument('--out', required=True)
  parser.add_argument('--threads', type=int, default=0)
  parser.add_argument('--epochs', type=int, default=8, help="W&P's --n_iters (8; fewer: a smoke run)")
  args = parser.parse_args(argv)
  args.code, args.inputs = os.path.abspath(args.code), os.path.abspath(args.inputs)

  out = jain_wallace_child.enter(args)
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import jain_wallace_inputs  # pylint: disable=g-import-not-at-top
  started = time.time()
  inputs = jain_wallace_inputs.read(args.inputs)
  from attention.Trainers.DatasetBC import (  # pylint: disable=g-import-not-at-top
      DataHolder, Dataset, set_balanced_pos_weight, sortbylength)
  from attention.ExperimentsBC import train_dataset  # pylint: disable=g-import-not-at-top

  data_dir = os.path.join(out, 'data')
  # A plain namespace with the attributes of J&W's `Vectorizer` that W&P's loader reads.
  name, relpath = jain_wallace_inputs.write_vectorizer(inputs, types.SimpleNamespace, data_dir)
  # W&P's script's namespace for `--encoder lstm --attention tanh|frozen`.
  wp_args = argparse.Namespace(
      dataset=name, data_dir=data_dir, output_dir=os.path.join(out, 'outputs'), encoder='lstm',
      attention=args.attention, n_iters=args.epochs, seed=args.seed, gold_label_dir=None, hidden_size=128,
      lmbda=None, adversarial=None, extras=[], frozen_attn=args.attention == 'frozen',
      pre_loaded_attn=False, command=f'attn-jax wiegreffe_pinter_child --attention={args.attention} --seed={args.seed}')
  torch.manual_seed(args.seed)
  np.random.seed(args.seed)
  random.seed(args.seed)
  # W&P's loaders are `Dataset(...)` + `set_balanced_pos_weight` with their
  # length bounds; the splits come filtered already (jain_wallace_inputs).
  dataset = Dataset(name=name, path=relpath, min_length=0, max_length=10**9, args=wp_args)
  set_balanced_pos_weight(dataset)
  dataset.output_dir = wp_args.output_dir
  test = dataset.test_data
  if args.selection == 'dev':
    dataset.test_data = DataHolder(*sortbylength(dataset.vec.seq_text['dev'], dataset.vec.label['dev']))
  exp_name = '+'.join((wp_args.encoder, wp_args.attention))
  trainer, evaluator = train_dataset(dataset, wp_args, exp_name)
  if args.selection == 'dev':  # the kept model on the test set (evaluate.json rewritten)
    evaluator.evaluate(test, save_results=True)
  with open(os.path.join(trainer.model.dirname, 'evaluate.json')) as f:
    metrics = json.load(f)

  summary = {
      'attention': 'learned' if args.attention == 'tanh' else 'uniform', 'wp_attention': args.attention,
      'selection': args.selection, 'seed': args.seed, 'epochs': args.epochs, 'dataset': inputs['record']['dataset'],
      'accuracy': metrics.get('accuracy'), 'roc_auc': metrics.get('roc_auc'),
      'f1_pos': metrics.get('1/f1-score'), 'f1_neg': metrics.get('0/f1-score'),
      'macro_f1': metrics.get('macro avg/f1-score'),
      'documents': len(test.X), 'sizes': {'train': len(dataset.train_data.X), 'test': len(test.X)},
      'selected_epoch': jain_wallace_child.selected_epoch(trainer.model.dirname, first=0),  # W&P: epoch 0 may be kept
      'total_seconds': round(time.time() - started, 1),
      'device': torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu',
      'torch': torch.__version__, 'threads': torch.get_num_threads(),
      'inputs': {'file': os.path.basename(args.inputs), 'fingerprint': inputs['record']['fingerprint'],
                 'vectors_sha256': inputs['record'].get('vectors', {}).get('sha256')},
      'model_dir': os.path.relpath(trainer.model.dirname, out),
  }
  with open(os.path.join(args.code, 'attention', 'attn_jax_changes.json')) as f:
    summary.update({('wp_commit' if k == 'jw_commit' else k): v for k, v in json.load(f).items()})
  jain_wallace_child.write_summary(out, summary)
  print(json.dumps({k: summary[k] for k in ('attention', 'selection', 'accuracy', 'f1_pos', 'total_seconds')}))


if __name__ == '__main__':
  main()
