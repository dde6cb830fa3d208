"""One seed of one configuration through J&W's own code, on attn-jax's inputs.

    python benchmarks/original_code/jain_wallace_child.py --code=DIR --inputs=FILE.npz --config=lstm \\
        --seed=0 --out=DIR [--threads=N]

Run by `benchmarks/original_code/jain_wallace_reference.py` in a process of its own (attn-jax is not
imported here: only J&W's code, PyTorch and their dependencies). `--code` holds
the patched copy `Transparency/` (`jain_wallace_patches.prepare`). The steps are J&W's
`ExperimentsBC.train_dataset` and `run_experiments_on_latest_model`, called
directly (theirs swallow every exception): their dataset loader, config,
`Trainer.train` (8 epochs, dev ROC-AUC selection), `Evaluator.evaluate`, the
gradient, permutation and adversarial experiments, and leave-one-out
(`remove_and_run`, which their script has commented out but their τ(·, LOO)
figures read). The numbers are then taken from J&W's own plotting functions:
`process_grads` + `plot_correlation_between_grad_and_loo` with scipy's
`kendalltau` (the per-document τ are recorded as their loop computes them),
`plot_multi_adversarial` (max JSD within ε per document), and the
permutation outputs. Only seeding, resuming and the summary are ours.

A killed run resumes: inside training from the last finished epoch
(`jain_wallace_training`: weights, optimizer and random states), a trained
model is found by J&W's `get_latest_model` (a folder with `evaluate.json`),
each experiment's pickle counts once its `.done` marker is written, and every
step reseeds from (seed, step), so a resumed seed gives the numbers an
uninterrupted one gives.
"""

import argparse
import ast
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jain_wallace_training  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
EXPERIMENTS = ('gradient', 'permutation', 'adversarial', 'remove_and_run')
RESUMED_FILE = 'attn_jax_training_resumed_after_epochs.json'
PDUMP = {'gradient': 'gradients', 'permutation': 'permutations', 'adversarial': 'multi_adversarial',
         'remove_and_run': 'remove_and_run'}


def seed_all(seed: int) -> None:
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  random.seed(seed)
  np.random.seed(seed)
  torch.manual_seed(seed)


def selected_epoch(model_dir: str, metric: str = 'roc_auc', first: int = 1):
  """The epoch (0-based) J&W's `Trainer.train` saved last: strictly better
  than every earlier saved one, never before `first` (their `i > 0`; W&P's
  snapshot has no such bound: `first=0`)."""
  try:
    with open(os.path.join(model_dir, 'epoch.txt')) as f:
      history = [ast.literal_eval(line) for line in f if line.strip()]
  except (OSError, ValueError, SyntaxError):
    return None
  best, chosen = 0.0, None
  for i, metrics in enumerate(history):
    if metrics[metric] > best and i >= first:
      best, chosen = metrics[metric], i
  return chosen


def _mean(values):
  import numpy as np  # pylint: disable=g-import-not-at-top
  values = np.asarray(values, float)
  values = values[~np.isnan(values)]
  return float(values.mean()) if len(values) else None


def _by_class(values, predicted_pos, reduce):
  import numpy as np  # pylint: disable=g-import-not-at-top
  values = np.asarray(values, float)
  return {'neg': reduce(values[~predicted_pos]) if (~predicted_pos).any() else None,
          'pos': reduce(values[predicted_pos]) if predicted_pos.any() else None}


def enter(args) -> str:
  """Sets up a child's process: the patched copy, this folder and (last, so
  installed packages win) the stand-ins on the path, matplotlib without a
  display, PyTorch's threads; then works in `args.out` (their code writes some
  files relative to the working folder), whose absolute path it returns."""
  sys.path.insert(0, args.code)
  sys.path.insert(1, HERE)
  sys.path.append(os.path.join(HERE, 'jain_wallace_shims'))
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  import torch  # pylint: disable=g-import-not-at-top
  if args.threads:
    torch.set_num_threads(args.threads)
  out = os.path.abspath(args.out)
  os.makedirs(out, exist_ok=True)
  os.chdir(out)
  return out


def write_summary(out: str, summary: dict) -> None:
  """`out/summary.json`, written atomically: its presence means the seed is done."""
  with open(os.path.join(out, 'summary.json.partial'), 'w') as f:
    json.dump(summary, f, indent=1, sort_keys=True)
  os.replace(os.path.join(out, 'summary.json.partial'), os.path.join(out, 'summary.json'))


def jw_dataset(inputs: dict, out: str):
  """J&W's `Dataset` of `inputs` (`jain_wallace_inputs.read`), their vectorizer pickled
  under `out/data`. Their loaders (`SST_dataset`, ...) are `Dataset(...)` +
  `set_balanced_pos_weight` with their length bounds; the splits come
  filtered already (jain_wallace_inputs), so the bounds here keep every document."""
  from Transparency.preprocess.vectorizer import Vectorizer  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers.DatasetBC import Dataset, set_balanced_pos_weight  # pylint: disable=g-import-not-at-top
  import jain_wallace_inputs  # pylint: disable=g-import-not-at-top
  data_dir = os.path.join(out, 'data')
  name, relpath = jain_wallace_inputs.write_vectorizer(inputs, Vectorizer, data_dir)
  dataset = Dataset(name=name, path=relpath, min_length=0, max_length=10**9,
                    args=argparse.Namespace(data_dir=data_dir, output_dir=os.path.join(out, 'outputs')))
  set_balanced_pos_weight(dataset)
  return dataset


def jw_taus(test, model, latest: str, plotting=None):
  """The per-document τ as J&W's code computes them (their `process_grads` +
  `plot_correlation_between_grad_and_loo`, scipy's `kendalltau` recorded as
  their loop calls it for the pairs (LOO, gradient), (LOO, α), (α, gradient)
  of each document in turn), and their csv's plain means. Reads the
  `gradients` and `remove_and_run` pickles of the model folder `latest`.
  `plotting`: their plotting module (`PlottingBC`; `PlottingQA` for QA)."""
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  import pandas as pd  # pylint: disable=g-import-not-at-top
  from scipy.stats import kendalltau  # pylint: disable=g-import-not-at-top
  from Transparency.common_code.common import pload  # pylint: disable=g-import-not-at-top
  if plotting is None:
    from Transparency.Trainers import PlottingBC as plotting  # pylint: disable=g-import-not-at-top
  taus = []
  def recording_kendalltau(a, b):
    result = kendalltau(a, b)
    taus.append(result[0])
    return result
  grads = pload(model, 'gradients')
  plotting.process_grads(grads)
  plotting.plot_correlation_between_grad_and_loo(test, grads, pload(model, 'remove_and_run'),
                                                 recording_kendalltau, 'kendalltau', dirname=latest)
  plt.close('all')
  per_doc = {'tau_gradient_loo': taus[0::3], 'tau_attention_loo': taus[1::3],
             'tau_attention_gradient': taus[2::3]}
  csv = pd.read_csv(os.path.join(latest, 'CorrStats_kendalltau.csv'), index_col=0)
  jw_csv = {name: csv.loc[row, 'mean'] for name, row in
            (('tau_attention_gradient', 'al'), ('tau_attention_loo', 'ag'), ('tau_gradient_loo', 'gl'))}
  return per_doc, jw_csv


def train_or_restore(trainer_class, evaluator_class, dataset, config, seed: int, epochs: int):
  """J&W's trainer for `epochs` (their `Trainer.train`, selection on dev, run
  epoch by epoch by `jain_wallace_training.train` so that a killed seed resumes
  inside training), then
  their `Evaluator` on test (`evaluate.json`: the model is done); a model
  trained before is found by their `get_latest_model` and restored. Returns
  (evaluator, model folder, {'train': seconds, ...} with the times a resumed
  seed recorded before)."""
  from Transparency.common_code.common import get_latest_model  # pylint: disable=g-import-not-at-top
  exp_dir = os.path.join(config['training']['basepath'], config['training']['exp_dirname'])
  latest = get_latest_model(exp_dir) if os.path.isdir(exp_dir) else None
  seconds = {}
  if latest is None:
    seed_all(seed)
    trainer = trainer_class(dataset, config=config, _type=dataset.trainer_type)
    training = jain_wallace_training.train(trainer, dataset.train_data, dataset.dev_data, epochs,
                                           dataset.save_on_metric, config['training']['basepath'])
    latest = trainer.model.dirname
    evaluator = evaluator_class(dataset, latest, _type=dataset.trainer_type)
    evaluator.evaluate(dataset.test_data, save_results=True)  # evaluate.json: training is done
    jain_wallace_training.clear(config['training']['basepath'])
    seconds['train'] = training['seconds']
    with open(os.path.join(latest, RESUMED_FILE), 'w') as f:  # the summary says where training resumed
      json.dump(training['resumed_at'], f)
  else:
    evaluator = evaluator_class(dataset, latest, _type=dataset.trainer_type)
    evaluator.evaluate(dataset.test_data, save_results=False)
  timings = os.path.join(latest, 'attn_jax_seconds.json')
  if os.path.exists(timings):  # a resumed seed keeps the times of the steps done before
    with open(timings) as f:
      seconds = {**json.load(f), **seconds}
  return evaluator, latest, seconds


def run_experiments(evaluator, test, latest: str, seed: int, seconds: dict) -> None:
  """J&W's four experiments on `test`, each once: a finished one has its
  `.done` marker; each reseeds from (seed, step), so a resumed seed gives what
  an uninterrupted one gives. Records each one's seconds in `seconds` and in
  `latest/attn_jax_seconds.json`."""
  for step, name in enumerate(EXPERIMENTS, 1):
    done = os.path.join(latest, name + '.done')
    pickle_path = os.path.join(latest, PDUMP[name] + '_pdump.pkl')
    if os.path.exists(done):
      continue
    if os.path.exists(pickle_path):  # written by a killed run: J&W's pdump is not atomic
      os.remove(pickle_path)
    tick = time.time()
    seed_all(seed * 1000 + step)
    getattr(evaluator, name + '_experiment')(test, force_run=False)
    seconds[name] = round(time.time() - tick, 1)
    with open(os.path.join(latest, 'attn_jax_seconds.json'), 'w') as f:
      json.dump(seconds, f)
    open(done, 'w').close()


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--code', required=True, help='folder holding the patched Transparency/')
  parser.add_argument('--inputs', required=True)
  parser.add_argument('--config', required=True, help="J&W's configuration key, e.g. lstm, cnn_dot")
  parser.add_argument('--seed', type=int, required=True)
  parser.add_argument('--out', required=True)
  parser.add_argument('--threads', type=int, default=0)
  parser.add_argument('--epochs', type=int, default=8, help="J&W's 8 unless given: fewer only to check the harness")
  args = parser.parse_args(argv)
  args.code, args.inputs = os.path.abspath(args.code), os.path.abspath(args.inputs)  # before the chdir below

  out = enter(args)
  import numpy as np  # pylint: disable=g-import-not-at-top
  import pandas as pd  # pylint: disable=g-import-not-at-top
  import jain_wallace_inputs  # pylint: disable=g-import-not-at-top
  started = time.time()
  inputs = jain_wallace_inputs.read(args.inputs)

  from Transparency.Trainers.DatasetBC import DataHolder, sortbylength  # pylint: disable=g-import-not-at-top
  from Transparency.configurations import configurations  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers.TrainerBC import Trainer, Evaluator  # pylint: disable=g-import-not-at-top
  from Transparency.common_code.common import pload  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers import PlottingBC  # pylint: disable=g-import-not-at-top
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

  dataset = jw_dataset(inputs, out)
  config = configurations[args.config](dataset)
  evaluator, latest, seconds = train_or_restore(Trainer, Evaluator, dataset, config, args.seed, args.epochs)
  test = dataset.test_data
  if inputs['test_sample'] is not None:
    # attn-jax's sample (jain_wallace_inputs): those documents, in J&W's test order
    # (their `sortbylength`), through every experiment; accuracy above is on all.
    sample_x, sample_y = sortbylength([inputs['test'][0][i] for i in inputs['test_sample']],
                                      [inputs['test'][1][i] for i in inputs['test_sample']])
    test = DataHolder(sample_x, sample_y)
    evaluator.evaluate(test, save_results=False)  # their experiments read test.yt_hat, .attn_hat
  model = evaluator.model
  run_experiments(evaluator, test, latest, args.seed, seconds)
  per_doc, jw_csv = jw_taus(test, model, latest)

  emax_jsd, _, _ = PlottingBC.plot_multi_adversarial(test, pload(model, 'multi_adversarial'), dirname=latest)
  plt.close('all')
  yhat = np.asarray(test.yt_hat)
  predicted_pos = yhat[:, 0] > 0.5
  # J&W's plot_permutations: the median over 100 permutations of |Δŷ| per document.
  perm_median = np.median(np.abs(np.array(pload(model, 'permutations')) - yhat[:, None, :]).mean(-1), 1)

  # How peaked their attention is (attn-jax's `attention` stage: the median of
  # each document's largest weight, the mean of H(α) / log n over its n words).
  words = [np.asarray(a[1:len(x) - 1], float) for a, x in zip(test.attn_hat, test.X)]
  max_attention = [w.max() for w in words]
  entropy = [float(-(w * np.log(np.clip(w, 1e-30, None))).sum() / np.log(len(w))) for w in words if len(w) > 1]

  with open(os.path.join(latest, 'evaluate.json')) as f:
    evaluation = json.load(f)
  summary = {
      'jw_config': args.config, 'seed': args.seed, 'dataset': inputs['record']['dataset'],
      'embeddings': 'scratch' if inputs['embeddings'] is None else 'in_domain',
      'accuracy': evaluation.get('accuracy'), 'roc_auc': evaluation.get('roc_auc'),
      'f1_pos': evaluation.get('1/f1-score'),
      **{name: _mean(values) for name, values in per_doc.items()},
      'tau_nan_documents': {name: int(np.isnan(np.asarray(v, float)).sum()) for name, v in per_doc.items()},
      'tau_by_class': {name: _by_class(v, predicted_pos, _mean) for name, v in per_doc.items()},
      'jw_csv_mean': {k: (None if pd.isna(v) else float(v)) for k, v in jw_csv.items()},
      **{f'adversarial_{c}': v for c, v in _by_class(emax_jsd, predicted_pos, _mean).items()},
      **{f'permutation_{c}': v for c, v in
         _by_class(perm_median, predicted_pos, lambda x: float(np.median(x))).items()},
      'max_attention_median': float(np.median(max_attention)), 'entropy': _mean(entropy),
      'documents': len(test.X),
      'test_sample': inputs['record'].get('test_sample'),
      'sizes': {'train': len(dataset.train_data.X), 'dev': len(dataset.dev_data.X),
                'test': len(dataset.test_data.X)},
      'selected_epoch': selected_epoch(latest),
  }
  finish(args, inputs, out, latest, summary, seconds, started)


def finish(args, inputs: dict, out: str, latest: str, summary: dict, seconds: dict, started: float) -> None:
  """Adds what every seed records (its times, machine, inputs, model folder
  and the changes made to J&W's code) to `summary`, writes it and prints its
  headline numbers."""
  import torch  # pylint: disable=g-import-not-at-top
  summary.update({
      'seconds': seconds, 'total_seconds': round(time.time() - started, 1),
      'device': torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu',
      'torch': torch.__version__, 'threads': torch.get_num_threads(),
      'inputs': {'file': os.path.basename(args.inputs), 'fingerprint': inputs['record']['fingerprint'],
                 'vectors_sha256': inputs['record'].get('vectors', {}).get('sha256')},
      'model_dir': os.path.relpath(latest, out)})
  resumed = os.path.join(latest, RESUMED_FILE)
  if os.path.exists(resumed):  # [] for an uninterrupted training; absent for one before 2026-11-29
    with open(resumed) as f:
      summary['training_resumed_after_epochs'] = json.load(f)
  with open(os.path.join(args.code, 'Transparency', 'attn_jax_changes.json')) as f:
    summary.update(json.load(f))
  write_summary(out, summary)
  print(json.dumps({k: summary[k] for k in ('accuracy', 'tau_attention_gradient', 'tau_attention_loo',
                                            'tau_gradient_loo', 'total_seconds')}))


if __name__ == '__main__':
  main()
