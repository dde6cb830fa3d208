"""J&W's own analyses and τ on weights attn-jax trained (the child of
`benchmarks/original_code/jain_wallace_same_weights.py`; attn-jax is not imported here).

    python benchmarks/original_code/jain_wallace_same_weights_child.py --code=DIR --inputs=FILE.npz --config=cnn \\
        --weights=WEIGHTS.npz --out=DIR [--threads=N]

J&W's dataset loader, config and `Model` (built by their `Trainer`) get the
weights of `WEIGHTS.npz` (their state-dict names, `encoder/...` and
`decoder/...`), saved and loaded back the way their `Evaluator` loads a
trained model; then their `evaluate`, gradient and leave-one-out
(`remove_and_run`) experiments and τ (`jain_wallace_child.jw_taus`) run on the test
split. Writes `OUT/same_weights.npz`: per document, in the test split's own
order (J&W's `sortbylength` undone), the three τ and J&W's P(y = 1).
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jain_wallace_child  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--code', required=True)
  parser.add_argument('--inputs', required=True)
  parser.add_argument('--config', required=True)
  parser.add_argument('--weights', required=True)
  parser.add_argument('--out', required=True)
  parser.add_argument('--seed', type=int, default=0)  # the harness passes one; nothing here is random
  parser.add_argument('--threads', type=int, default=0)
  args = parser.parse_args(argv)
  args.code, args.inputs, args.weights = (os.path.abspath(p) for p in (args.code, args.inputs, args.weights))

  out = jain_wallace_child.enter(args)
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import jain_wallace_inputs  # pylint: disable=g-import-not-at-top
  from Transparency.configurations import configurations  # pylint: disable=g-import-not-at-top
  from Transparency.Trainers.TrainerBC import Trainer, Evaluator  # pylint: disable=g-import-not-at-top

  inputs = jain_wallace_inputs.read(args.inputs)
  dataset = jain_wallace_child.jw_dataset(inputs, out)
  config = configurations[args.config](dataset)
  model = Trainer(dataset, config=config, _type=dataset.trainer_type).model
  with np.load(args.weights) as w:
    for part in ('encoder', 'decoder'):
      state = {k.split('/', 1)[1]: torch.tensor(w[k]) for k in w.files if k.startswith(part + '/')}
      getattr(model, part).load_state_dict(state, strict=True)
  model.save_values(save_model=True)
  evaluator = Evaluator(dataset, model.dirname, _type=dataset.trainer_type)
  test = dataset.test_data
  evaluator.evaluate(test, save_results=False)
  for experiment in ('gradient', 'remove_and_run'):
    getattr(evaluator, experiment + '_experiment')(test, force_run=True)
  per_doc, _ = jain_wallace_child.jw_taus(test, evaluator.model, model.dirname)

  # J&W's test order is their `sortbylength` (np.argsort of the lengths) of ours.
  order = np.argsort([len(x) for x in inputs['test'][0]])
  assert [len(x) for x in test.X] == [len(inputs['test'][0][i]) for i in order]
  ours = np.empty(len(order), dtype=np.int64)
  ours[order] = np.arange(len(order))  # J&W's row of each of our documents
  arrays = {k: np.asarray(v, np.float64)[ours] for k, v in per_doc.items()}
  arrays['probability'] = np.asarray(test.yt_hat, np.float64)[:, 0][ours]
  np.savez(os.path.join(out, 'same_weights.npz.partial.npz'), **arrays)
  os.replace(os.path.join(out, 'same_weights.npz.partial.npz'), os.path.join(out, 'same_weights.npz'))


if __name__ == '__main__':
  main()
