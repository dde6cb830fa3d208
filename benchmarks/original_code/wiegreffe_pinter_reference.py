"""W&P's Table 2 on SST through W&P's own code, on attn-jax's exact inputs:
learned (tanh) against uniform (frozen) attention, seeds 0..N-1 of each.

    pip install -e ".[original_code]"
    git clone https://github.com/sarahwie/attention ~/attention
    python benchmarks/original_code/wiegreffe_pinter_reference.py --wp-repo=~/attention --seeds=15 \\
        --root=workdirs/wp_reference --save=results/wp_reference
    python -m attn_jax.studies report wp_table2 --root=results/wp_table2   # the side-by-side table

The inputs are those of the J&W grid's `sst_bilstm_tanh` arm, W&P's base
model (`jain_wallace_inputs.export`: splits, vocabulary, the starting embedding matrix).
`wiegreffe_pinter_patches` copies and patches the user's checkout; each seed runs in a child
(`wiegreffe_pinter_child.py`) as W&P's `train_and_run_experiments_bc.py --encoder lstm
--attention tanh|frozen`. `--selection`: `test` is W&P's script (their snapshot
keeps the epoch with the best test ROC-AUC); `dev` gives their trainer
attn-jax's dev split in its place, as attn-jax selects. Arms are named
`sst_{learned,uniform}_{test,dev}sel`. `--prepare-only` / `--from-plan`,
`--parallel`, `--threads`, `--save` and resuming work as in `jain_wallace_reference.py`.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jain_wallace_inputs  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import jain_wallace_reference  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import wiegreffe_pinter_patches  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position

BASE_ARM = 'sst_bilstm_tanh'  # W&P's base model: J&W's BiLSTM + tanh recipe
ATTENTION = {'learned': 'tanh', 'uniform': 'frozen'}  # Table 2's columns -> W&P's --attention


def arm_name(attention: str, selection: str) -> str:
  return f'sst_{attention}_{selection}sel'


def plan_seeds(seeds: int, selections: list[str], root: str) -> list[dict]:
  """Writes the inputs and returns one job per (arm, seed), seed by seed."""
  [(_, arm)] = list(jain_wallace_reference.arms(BASE_ARM, 'default'))
  inputs = jain_wallace_inputs.export(jain_wallace_reference.arm_config(arm, 'default'), os.path.join(root, 'inputs'))
  return [{'arm': arm_name(a, sel), 'seed': s, 'inputs': os.path.relpath(inputs, root),
           'child': 'wiegreffe_pinter_child.py', 'args': [f'--attention={ATTENTION[a]}', f'--selection={sel}']}
          for s in range(seeds) for sel in selections for a in ATTENTION]


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--wp-repo', help="a checkout of W&P's repository (sarahwie/attention)")
  parser.add_argument('--seeds', type=int, default=15)  # as the study's SST arms
  parser.add_argument('--selection', default='test,dev',
                      help="comma-separated: test (W&P's script) and/or dev (attn-jax's protocol)")
  jain_wallace_reference.add_run_options(parser, 'workdirs/wp_reference')
  args = parser.parse_args(argv)

  selections = [s.strip() for s in args.selection.split(',') if s.strip()]
  if not selections or set(selections) - {'test', 'dev'}:
    sys.exit(f'error: --selection takes test and/or dev, not {args.selection!r}')
  root = os.path.abspath(args.root)
  code = os.path.join(root, 'code')
  plan_file = os.path.join(root, 'plan.json')
  if args.from_plan:
    jobs = jain_wallace_reference.load_plan(plan_file)
  else:
    jain_wallace_reference.copy_checkout('wiegreffe_pinter_reference', '--wp-repo', args.wp_repo, code, wiegreffe_pinter_patches.WP)
    jobs = plan_seeds(args.seeds, selections, root)
    if args.prepare_only:
      jain_wallace_reference.merge_plan(plan_file, jobs, args.root)
      return
  failed = jain_wallace_reference.run_jobs(jobs, root, code, args.threads, args.parallel, args.save,
                                          args.time_limit)
  if failed:
    sys.exit(f'error: {len(failed)} seed(s) failed: {", ".join(failed)}')


if __name__ == '__main__':
  main()
