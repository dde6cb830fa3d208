"""One seed of one QA configuration (bAbI) through J&W's own code, on
attn-jax's inputs.

    python benchmarks/jw_qa_child.py --code=DIR --inputs=FILE.npz --config=lstm \\
        --seed=0 --out=DIR [--threads=N]

The QA counterpart of `jw_child.py` (run by `benchmarks/jw_reference.py
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
summary are ours; a killed seed resumes as `jw_child.py`'s does.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from jw_child import EXPERIMENTS, PDUMP, _mean, enter, seed_all, selected_epoch, write_summary  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position


def jw_qa_dataset(inputs: dict, out: str):
  """J&W's QA `Dataset` of `inputs` by their own loader for the task."""
  from Transparency.preprocess.vectorizer import Vectorizer  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers.DatasetQA import datasets  # pylint: disable=g-import-not-at-top
  import jw_inputs  # pylint: disable=g-import-not-at-top
  data_dir = os.path.join(out, 'data')
  name, _ = jw_inputs.write_qa_vectorizer(inputs, Vectorizer, data_dir)
  return datasets[name](argparse.Namespace(data_dir=data_dir, output_dir=os.path.join(out, 'outputs')))


def jw_qa_taus(test, model, latest: str):
  """The per-document τ of J&W's `PlottingQA.plot_correlation_between_grad_and_loo`
  (their loop's scipy `kendalltau` calls recorded: (LOO, gradient), (LOO, α),
  (α, gradient) per document), and their csv's means."""
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  import pandas as pd  # pylint: disable=g-import-not-at-top
  from scipy.stats import kendalltau  # pylint: disable=g-import-not-at-top
  from Transparency.common_code.common import pload  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers import PlottingQA  # pylint: disable=g-import-not-at-top
  taus = []
  def recording_kendalltau(a, b):
    result = kendalltau(a, b)
    taus.append(result[0])
    return result
  grads = pload(model, 'gradients')
  PlottingQA.process_grads(grads)
  PlottingQA.plot_correlation_between_grad_and_loo(test, grads, pload(model, 'remove_and_run'),
                                                   recording_kendalltau, 'kendalltau', dirname=latest)
  plt.close('all')
  per_doc = {'tau_gradient_loo': taus[0::3], 'tau_attention_loo': taus[1::3],
             'tau_attention_gradient': taus[2::3]}
  csv = pd.read_csv(os.path.join(latest, 'CorrStats_kendalltau.csv'), index_col=0)
  jw_csv = {name: csv.loc[row, 'mean'] for name, row in
            (('tau_attention_gradient', 'al'), ('tau_attention_loo', 'ag'), ('tau_gradient_loo', 'gl'))}
  return per_doc, jw_csv


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
  import torch  # pylint: disable=g-import-not-at-top
  import jw_inputs  # pylint: disable=g-import-not-at-top
  started = time.time()
  inputs = jw_inputs.read(args.inputs)

  from Transparency.configurations import configurations_qa  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers.TrainerQA import Trainer, Evaluator  # pylint: disable=g-import-not-at-top
  from Transparency.common_code.common import get_latest_model, pload  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers import PlottingQA  # pylint: disable=g-import-not-at-top
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

  dataset = jw_qa_dataset(inputs, out)
  config = configurations_qa[args.config](dataset)
  exp_dir = os.path.join(config['training']['basepath'], config['training']['exp_dirname'])
  latest = get_latest_model(exp_dir) if os.path.isdir(exp_dir) else None
  seconds = {}
  if latest is None:
    tick = time.time()
    seed_all(args.seed)
    trainer = Trainer(dataset, config=config, _type=dataset.trainer_type)
    n_iters = dataset.n_iters if hasattr(dataset, 'n_iters') else 25  # ExperimentsQA.train_dataset
    n_iters = args.epochs or n_iters
    trainer.train(dataset.train_data, dataset.dev_data, n_iters=n_iters, save_on_metric=dataset.save_on_metric)
    latest = trainer.model.dirname
    evaluator = Evaluator(dataset, latest, _type=dataset.trainer_type)
    evaluator.evaluate(dataset.test_data, save_results=True)  # evaluate.json: training is done
    seconds['train'] = round(time.time() - tick, 1)
  else:
    evaluator = Evaluator(dataset, latest, _type=dataset.trainer_type)
    evaluator.evaluate(dataset.test_data, save_results=False)
  test, model = dataset.test_data, evaluator.model
  timings = os.path.join(latest, 'attn_jax_seconds.json')
  if os.path.exists(timings):
    with open(timings) as f:
      seconds = {**json.load(f), **seconds}

  for step, name in enumerate(EXPERIMENTS, 1):
    done = os.path.join(latest, name + '.done')
    pickle_path = os.path.join(latest, PDUMP[name] + '_pdump.pkl')
    if os.path.exists(done):
      continue
    if os.path.exists(pickle_path):
      os.remove(pickle_path)
    tick = time.time()
    seed_all(args.seed * 1000 + step)
    getattr(evaluator, name + '_experiment')(test, force_run=False)
    seconds[name] = round(time.time() - tick, 1)
    with open(timings, 'w') as f:
      json.dump(seconds, f)
    open(done, 'w').close()

  per_doc, jw_csv = jw_qa_taus(test, model, latest)
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
      'jw_config': args.config, 'seed': args.seed, 'epochs': args.epochs or getattr(dataset, 'n_iters', 25), 'dataset': inputs['record']['dataset'],
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
      'seconds': seconds, 'total_seconds': round(time.time() - started, 1),
      'device': torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu',
      'torch': torch.__version__, 'threads': torch.get_num_threads(),
      'inputs': {'file': os.path.basename(args.inputs), 'fingerprint': inputs['record']['fingerprint']},
      'model_dir': os.path.relpath(latest, out),
  }
  with open(os.path.join(args.code, 'Transparency', 'attn_jax_changes.json')) as f:
    summary.update(json.load(f))
  write_summary(out, summary)
  print(json.dumps({k: summary[k] for k in ('accuracy', 'tau_attention_gradient', 'tau_attention_loo',
                                            'tau_gradient_loo', 'total_seconds')}))


if __name__ == '__main__':
  main()
