"""One seed of one QA configuration (bAbI) through J&W's own code, on
attn-jax's inputs.

    python benchmarks/original_code/jain_wallace_qa_child.py --code=DIR --inputs=FILE.npz --config=lstm \\
        --seed=0 --out=DIR [--threads=N]

The QA counterpart of `jain_wallace_child.py` (run by `benchmarks/original_code/jain_wallace_reference.py
--study=jw_qa`; attn-jax is not imported here). The steps are J&W's
`ExperimentsQA.train_dataset` and `run_experiments_on_latest_model`, called
directly (theirs swallow every exception): their loader (`DatasetQA.datasets`,
which sets bAbI's embedding size 50, hidden size 32, batch 50 and 100 epochs),
`configurations_qa`, `TrainerQA.Trainer.train` (dev accuracy selection, epoch 0
never saved), `Evaluator.evaluate`, the gradient, permutation, adversarial and
leave-one-out experiments; the numbers from their `PlottingQA` functions
(`process_grads` + `plot_correlation_between_grad_and_loo` with scipy's
`kendalltau`, `plot_multi_adversarial`) and the permutation medians as their
`plot_permutations` takes them (0.5 × L1: TVD). Only seeding, resuming and the
summary are ours; a killed seed resumes as `jain_wallace_child.py`'s does.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from jain_wallace_child import _mean, enter, finish, jw_taus, run_experiments, selected_epoch, train_or_restore  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position


def jw_qa_dataset(inputs: dict, out: str):
  """J&W's QA `Dataset` of `inputs` by their own loader for the task."""
  from Transparency.preprocess.vectorizer import Vectorizer  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers.DatasetQA import datasets  # pylint: disable=g-import-not-at-top
  import jain_wallace_inputs  # pylint: disable=g-import-not-at-top
  data_dir = os.path.join(out, 'data')
  name, _ = jain_wallace_inputs.write_qa_vectorizer(inputs, Vectorizer, data_dir)
  return datasets[name](argparse.Namespace(data_dir=data_dir, output_dir=os.path.join(out, 'outputs')))


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--code', required=True, help='folder holding the patched Transparency/')
  parser.add_argument('--inputs', required=True)
  parser.add_argument('--config', required=True, help="J&W's configuration key, e.g. lstm, average_dot")
  parser.add_argument('--seed', type=int, required=True)
  parser.add_argument('--out', required=True)
  parser.add_argument('--threads', type=int, default=0)
  parser.add_argument('--epochs', type=int, default=None,
                      help="J&W's epochs unless given (100 for bAbI): fewer only to check the harness")
  args = parser.parse_args(argv)
  args.code, args.inputs = os.path.abspath(args.code), os.path.abspath(args.inputs)

  out = enter(args)
  import numpy as np  # pylint: disable=g-import-not-at-top
  import pandas as pd  # pylint: disable=g-import-not-at-top
  import jain_wallace_inputs  # pylint: disable=g-import-not-at-top
  started = time.time()
  inputs = jain_wallace_inputs.read(args.inputs)

  from Transparency.configurations import configurations_qa  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers.TrainerQA import Trainer, Evaluator  # pylint: disable=g-import-not-at-top
  from Transparency.common_code.common import pload  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers import PlottingQA  # pylint: disable=g-import-not-at-top
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

  dataset = jw_qa_dataset(inputs, out)
  config = configurations_qa[args.config](dataset)
  epochs = args.epochs or getattr(dataset, 'n_iters', 25)  # ExperimentsQA.train_dataset's default 25
  evaluator, latest, seconds = train_or_restore(Trainer, Evaluator, dataset, config, args.seed, epochs)
  test, model = dataset.test_data, evaluator.model
  run_experiments(evaluator, test, latest, args.seed, seconds)
  per_doc, jw_csv = jw_taus(test, model, latest, PlottingQA)
  emax_jsd, _, _, _ = PlottingQA.plot_multi_adversarial(test, pload(model, 'multi_adversarial'), dirname=latest)
  plt.close('all')
  _, permutation_l1 = pload(model, 'permutations')
  perm_median = np.median(0.5 * np.asarray(permutation_l1), 1)  # their plot_permutations: TVD

  words = [np.asarray(a[1:len(x) - 1], float) for a, x in zip(test.attn_hat, test.P)]
  max_attention = [w.max() for w in words]
  entropy = [float(-(w * np.log(np.clip(w, 1e-30, None))).sum() / np.log(len(w))) for w in words if len(w) > 1]
  with open(os.path.join(latest, 'evaluate.json')) as f:
    evaluation = json.load(f)
  summary = {
      'jw_config': args.config, 'seed': args.seed, 'epochs': epochs, 'dataset': inputs['record']['dataset'],
      'embeddings': 'scratch' if inputs['embeddings'] is None else 'pretrained',
      'accuracy': evaluation.get('accuracy'),
      **{name: _mean(values) for name, values in per_doc.items()},
      'tau_nan_documents': {name: int(np.isnan(np.asarray(v, float)).sum()) for name, v in per_doc.items()},
      'jw_csv_mean': {k: (None if pd.isna(v) else float(v)) for k, v in jw_csv.items()},
      'adversarial_overall': _mean(emax_jsd), 'permutation_overall': float(np.median(perm_median)),
      'max_attention_median': float(np.median(max_attention)), 'entropy': _mean(entropy),
      'documents': len(test.P),
      'sizes': {'train': len(dataset.train_data.P), 'dev': len(dataset.dev_data.P), 'test': len(test.P)},
      'selected_epoch': selected_epoch(latest, metric='accuracy'),
  }
  finish(args, inputs, out, latest, summary, seconds, started)


if __name__ == '__main__':
  main()
