"""J&W's own code, trained and analysed on attn-jax's exact inputs: the
reference that says whether a gap to J&W's published numbers is the code's or
the inputs'.

    pip install -e ".[jw_reference]"    # PyTorch (CPU), pandas, scikit-learn, seaborn, nltk
    git clone https://github.com/successar/AttentionExplanation ~/AttentionExplanation
    python benchmarks/jw_reference.py --jw-repo=~/AttentionExplanation --only='sst_*' --seeds=5 \\
        --root=workdirs/jw_reference --save=results/jw_reference
    python benchmarks/jw_reference.py ... --embeddings=scratch   # both sides from scratch: no vectors
    python -m attn_jax.studies report jw_grid --root=results/jw_grid   # the side-by-side table

For each arm of the J&W grid (`attn_jax.studies.jw_grid`, names such as
`sst_bilstm_tanh`; `--only` takes glob patterns) this writes attn-jax's splits,
vocabulary and starting embedding matrix of that arm's config once
(`jw_inputs.export`), makes a patched copy of the user's checkout of J&W's
repository (`jw_patches`: the fewest changes that run it under a current
PyTorch, each listed with why), and runs each seed 0..N-1 in a child process
(`jw_child.py`): J&W's loader, config, trainer, evaluator, experiments and τ.
The project ships none of J&W's code. A seed whose `summary.json` exists is
skipped; a killed seed resumes inside (`jw_child.py`). `--save` copies each
finished seed's `summary.json` to `<save>/<arm>/seed<k>/`, which the J&W report
reads. Progress: one line per finished seed with the time left, from the mean
time of the seeds finished in this invocation.
"""

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jw_inputs  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import jw_patches  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position

# attn-jax encoder -> J&W's `configurations` key (`_dot` appended for dot attention)
JW_CONFIGS = {'bilstm': 'lstm', 'cnn': 'cnn', 'average': 'average'}


def jw_config(arm) -> str:
  attention = arm.overrides.get('model.attention', 'tanh')
  return JW_CONFIGS[arm.encoder] + ('_dot' if attention == 'dot' else '')


def arms(only: str | None, embeddings: str):
  """(name, arm) of the grid's arms matching `only`; from-scratch arms are
  named `<arm>_scratch`."""
  from attn_jax.studies import jw_grid  # pylint: disable=g-import-not-at-top
  patterns = [p.strip() for p in (only or '*').split(',') if p.strip()]
  for arm in jw_grid.ARMS:
    name = arm.name + ('_scratch' if embeddings == 'scratch' else '')
    if any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(arm.name, p) for p in patterns):
      yield name, arm


def arm_config(arm, embeddings: str):
  cfg = arm.config(1, '')
  if embeddings == 'scratch':
    cfg.model.embeddings_file = None
  return cfg


def run_seed(code: str, inputs: str, config: str, seed: int, out: str, threads: int,
             env: dict | None = None) -> subprocess.CompletedProcess:
  os.makedirs(out, exist_ok=True)
  with open(os.path.join(out, 'log.txt'), 'a') as log:
    return subprocess.run([sys.executable, os.path.join(HERE, 'jw_child.py'), f'--code={code}',
                           f'--inputs={inputs}', f'--config={config}', f'--seed={seed}', f'--out={out}',
                           f'--threads={threads}'], stdout=log, stderr=subprocess.STDOUT,
                          env={**os.environ, **(env or {})}, check=False)


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--jw-repo', required=True, help="a checkout of J&W's repository (successar/AttentionExplanation)")
  parser.add_argument('--only', default=None, help="glob patterns of grid arms, comma-separated (e.g. 'sst_*')")
  parser.add_argument('--seeds', type=int, default=5)
  parser.add_argument('--embeddings', choices=['default', 'scratch'], default='default',
                      help="default: the arm's config's vectors; scratch: both sides from scratch")
  parser.add_argument('--root', default='workdirs/jw_reference')
  parser.add_argument('--save', default=None, help='copy each seed\'s summary.json to SAVE/<arm>/seed<k>/')
  parser.add_argument('--threads', type=int, default=0, help='PyTorch threads per seed (0: its default)')
  parser.add_argument('--prepare-only', action='store_true',
                      help='write the inputs and the patched code, train nothing (e.g. to carry them elsewhere)')
  args = parser.parse_args(argv)

  root = os.path.abspath(args.root)
  code = os.path.join(root, 'code')
  try:
    record = jw_patches.prepare(os.path.expanduser(args.jw_repo), code)
  except jw_patches.PatchError as e:
    sys.exit(f'jw_reference: {e}')
  print(f"J&W's code: {args.jw_repo} (commit {record['jw_commit'] or 'unknown'}), "
        f'{len(record["changes"])} changes in {code}/Transparency')
  plan, inputs_by_key = [], {}
  for name, arm in arms(args.only, args.embeddings):
    cfg = arm_config(arm, args.embeddings)
    key = (cfg.data.dataset, cfg.model.embeddings_file)
    if key not in inputs_by_key:
      inputs_by_key[key] = jw_inputs.export(cfg, os.path.join(root, 'inputs'))
    plan += [(name, arm, inputs_by_key[key], s) for s in range(args.seeds)]
  if not plan:
    sys.exit(f'jw_reference: no grid arm matches --only={args.only!r}')
  if args.prepare_only:
    print('\n'.join(sorted({f'{name}: {os.path.relpath(path, root)}' for name, _, path, _ in plan})))
    return
  todo = [p for p in plan if not os.path.exists(os.path.join(root, p[0], f'seed{p[3]}', 'summary.json'))]
  print(f'{len(plan)} seeds planned, {len(plan) - len(todo)} already done')
  durations, failed = [], []
  for i, (name, arm, inputs, seed) in enumerate(todo):
    out = os.path.join(root, name, f'seed{seed}')
    tick = time.time()
    result = run_seed(code, inputs, jw_config(arm), seed, out, args.threads)
    durations.append(time.time() - tick)
    summary = os.path.join(out, 'summary.json')
    if result.returncode != 0 or not os.path.exists(summary):
      failed.append(f'{name} seed {seed}')
      print(f'{name} seed {seed}: FAILED (exit {result.returncode}); see {out}/log.txt')
      continue
    with open(summary) as f:
      s = json.load(f)
    if args.save:
      target = os.path.join(args.save, name, f'seed{seed}')
      os.makedirs(target, exist_ok=True)
      shutil.copyfile(summary, os.path.join(target, 'summary.json'))
    left = (len(todo) - i - 1) * sum(durations) / len(durations)
    print(f'{name} seed {seed}: accuracy {s["accuracy"]:.3f}, τ(α, grad) {s["tau_attention_gradient"]:.3f}, '
          f'τ(α, LOO) {s["tau_attention_loo"]:.3f}, τ(grad, LOO) {s["tau_gradient_loo"]:.3f} '
          f'[{durations[-1]:.0f} s; {i + 1}/{len(todo)}, about {left / 60:.0f} min left]', flush=True)
  if failed:
    sys.exit(f'jw_reference: {len(failed)} seed(s) failed: {", ".join(failed)}')


if __name__ == '__main__':
  main()
