"""J&W's own code, trained and analysed on attn-jax's exact inputs: the
reference that says whether a gap to J&W's published numbers is the code's or
the inputs'.

    pip install -e ".[original_code]"    # PyTorch (CPU), pandas, scikit-learn, seaborn, nltk
    git clone https://github.com/successar/AttentionExplanation ~/AttentionExplanation
    python benchmarks/original_code/jain_wallace_reference.py --jw-repo=~/AttentionExplanation --only='sst_*' \\
        --root=workdirs/jw_reference --save=results/jw_reference   # each row's seeds as attn-jax's (SST 15)
    python benchmarks/original_code/jain_wallace_reference.py ... --embeddings=scratch   # both sides from scratch: no vectors
    python benchmarks/original_code/jain_wallace_reference.py --jw-repo=~/AttentionExplanation --study=jw_qa \\
        --only='babi*_bilstm_tanh,babi*_average_tanh' --save=results/jw_qa_reference   # J&W's QA code
    python benchmarks/original_code/jain_wallace_reference.py ... --only='imdb_*' --sample-docs=500   # IMDB: a seeded sample
    python -m attn_jax.studies report jw_grid --root=results/jw_grid   # the side-by-side table

For each arm of the J&W grid (`attn_jax.studies.jain_wallace_grid`, names such as
`sst_bilstm_tanh`; `--only` takes glob patterns) this writes attn-jax's splits,
vocabulary and starting embedding matrix of that arm's config once
(`jain_wallace_inputs.export`), makes a patched copy of the user's checkout of J&W's
repository (`jain_wallace_patches`: the fewest changes that run it under a current
PyTorch, each listed with why), and runs each seed 0..N-1 in a child process (N: `--seeds`, else as many
as the study trains of that arm)
(`jain_wallace_child.py`): J&W's loader, config, trainer, evaluator, experiments and τ.
The project ships none of J&W's code. A seed whose `summary.json` exists is
skipped, in ROOT or in SAVE (run on the same inputs file and configuration); a
killed seed resumes inside (`jain_wallace_child.py`). `--save` copies each
finished seed's `summary.json` to `<save>/<arm>/seed<k>/`, which the J&W report
reads. Progress: one line per finished seed with the time left, from the mean
time of the seeds finished in this invocation.
"""

import argparse
import concurrent.futures
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jain_wallace_inputs  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import jain_wallace_patches  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position

# attn-jax encoder -> J&W's `configurations` key (`_dot` appended for dot attention)
JW_CONFIGS = {'bilstm': 'lstm', 'cnn': 'cnn', 'average': 'average'}


def jw_config_key(encoder: str, attention: str) -> str:
  """J&W's `configurations` key of an attn-jax encoder and attention."""
  return JW_CONFIGS[encoder] + ('_dot' if attention == 'dot' else '')


def jw_config(arm) -> str:
  return jw_config_key(arm.encoder, arm.overrides.get('model.attention', 'tanh'))


def arms(only: str | None, embeddings: str, study: str = 'jw_grid'):
  """(name, arm) of the study's arms (the J&W grid's, or the QA study's)
  matching `only`; from-scratch arms are named `<arm>_scratch`."""
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  patterns = [p.strip() for p in (only or '*').split(',') if p.strip()]
  for arm in STUDIES[study].arms:
    name = arm.name + ('_scratch' if embeddings == 'scratch' else '')
    if any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(arm.name, p) for p in patterns):
      yield name, arm


def seeds_of(arm, study: str = 'jw_grid') -> int:
  """The seeds attn-jax's side trains for `arm` (the study's count, or the arm's own)."""
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  return STUDIES[study].seeds_of(arm)


def arm_config(arm, embeddings: str, sample_docs: int | None = None, sample_seed: int = 0):
  cfg = arm.config(1, '')
  if embeddings == 'scratch':
    cfg.model.embeddings_file = None
  cfg.analysis.sample_docs, cfg.analysis.sample_seed = sample_docs, sample_seed
  return cfg


# The children's names in plans written before the harnesses moved from
# benchmarks/ to benchmarks/original_code/ (and spelt the papers in full).
RENAMED_CHILDREN = {'jw_child.py': 'jain_wallace_child.py', 'jw_qa_child.py': 'jain_wallace_qa_child.py',
                    'jw_same_weights_child.py': 'jain_wallace_same_weights_child.py',
                    'wp_child.py': 'wiegreffe_pinter_child.py'}


def run_seed(code: str, job: dict, root: str, out: str, threads: int,
             env: dict | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
  """One job in a child process: `jain_wallace_child.py` (`--config`), or the job's
  own `child` script with its `args` (W&P's code: `wiegreffe_pinter_reference.py`).
  Past `timeout` seconds the child is killed (`subprocess.TimeoutExpired`); it
  resumes inside on the next call."""
  os.makedirs(out, exist_ok=True)
  child = job.get('child', 'jain_wallace_child.py')
  child = RENAMED_CHILDREN.get(child, child)  # a plan written before the scripts moved here
  extra = job.get('args', [f"--config={job['config']}"] if 'config' in job else [])
  with open(os.path.join(out, 'log.txt'), 'a') as log:
    return subprocess.run([sys.executable, os.path.join(HERE, child), f'--code={code}',
                           f"--inputs={os.path.join(root, job['inputs'])}", *extra,
                           f"--seed={job['seed']}", f'--out={out}', f'--threads={threads}'],
                          stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                          check=False, timeout=timeout)


def describe(s: dict) -> str:
  """A finished seed in one line."""
  if 'tau_attention_gradient' not in s:
    return f'accuracy {s["accuracy"]:.3f}, F1 {s["f1_pos"]:.3f} (epoch {s.get("selected_epoch")})'
  return (f'accuracy {s["accuracy"]:.3f}, τ(α, grad) {s["tau_attention_gradient"]:.3f}, '
          f'τ(α, LOO) {s["tau_attention_loo"]:.3f}, τ(grad, LOO) {s["tau_gradient_loo"]:.3f}')


def plan_seeds(args, root: str, code: str) -> list[dict]:
  """Writes the inputs and returns one job per (arm, seed) (attn-jax runs here)."""
  jobs, inputs_by_key = [], {}
  child = {'jw_qa': {'child': 'jain_wallace_qa_child.py'}}.get(args.study, {})
  for name, arm in arms(args.only, args.embeddings, args.study):
    cfg = arm_config(arm, args.embeddings, args.sample_docs, args.sample_seed)
    key = (cfg.data.dataset, cfg.model.embeddings_file)
    if key not in inputs_by_key:
      inputs_by_key[key] = jain_wallace_inputs.export(cfg, os.path.join(root, 'inputs'))
    jobs += [{'arm': name, 'config': jw_config(arm), 'seed': s, **child,
              'inputs': os.path.relpath(inputs_by_key[key], root)}
             for s in range(args.seeds or seeds_of(arm, args.study))]
  # Seed by seed across the arms: a run cut short has every arm's first seeds.
  return sorted(jobs, key=lambda j: j['seed'])


def saved_already(job: dict, save: str | None) -> bool:
  """Whether `save` holds this job's seed, run on the same inputs file and J&W
  configuration (a new machine has no ROOT, but the saved seeds are the record)."""
  if not save:
    return False
  return summary_of(os.path.join(save, job['arm'], f"seed{job['seed']}", 'summary.json'), job)


def summary_of(path: str, job: dict) -> bool:
  """Whether the summary at `path` is this job's seed, on its inputs file and J&W configuration."""
  try:
    with open(path) as f:
      s = json.load(f)
  except (OSError, ValueError):
    return False
  # W&P's jobs have no J&W configuration (their arm's name says attention and selection).
  return (s.get('inputs', {}).get('file') == os.path.basename(job['inputs'])
          and s.get('jw_config') == job.get('config') and s.get('seed') == job['seed'])


def _copy_summary(summary: str, save: str, job: dict) -> None:
  target = os.path.join(save, job['arm'], f"seed{job['seed']}")
  os.makedirs(target, exist_ok=True)
  shutil.copyfile(summary, os.path.join(target, 'summary.json.tmp'))
  os.replace(os.path.join(target, 'summary.json.tmp'), os.path.join(target, 'summary.json'))


def run_jobs(jobs: list[dict], root: str, code: str, threads: int, parallel: int, save: str | None,
             time_limit: float = 0) -> list[str]:
  """Runs the jobs not done yet, `parallel` children at a time; returns the failed ones.

  time_limit: seconds (0: none). No seed starts after it, and a seed still
  running at it is stopped; both are left for the next call, where a stopped
  seed resumes inside. A machine lent by the minute (a GPU host) runs the plan
  as chunks this long."""
  todo = [j for j in jobs if not os.path.exists(os.path.join(root, j['arm'], f"seed{j['seed']}", 'summary.json'))
          and not saved_already(j, save)]
  if save:  # seeds finished under ROOT but not copied here (saved elsewhere, or cut off before copying)
    for job in jobs:
      summary = os.path.join(root, job['arm'], f"seed{job['seed']}", 'summary.json')
      if summary_of(summary, job) and not saved_already(job, save):
        _copy_summary(summary, save, job)
  print(f'{len(jobs)} seeds planned, {len(jobs) - len(todo)} already done, {parallel} at a time'
        + (f', for {time_limit:.0f} s' if time_limit else ''), flush=True)
  started, failed, stopped, whole = time.time(), [], [], []

  def one(job):
    out = os.path.join(root, job['arm'], f"seed{job['seed']}")
    tick = time.time()
    left = time_limit - (tick - started) if time_limit else None
    if left is not None and left <= 0:
      return job, out, None, 0.0
    try:
      result = run_seed(code, job, root, out, threads, timeout=left)
    except subprocess.TimeoutExpired:
      result = None
    return job, out, result, time.time() - tick

  with concurrent.futures.ThreadPoolExecutor(max(parallel, 1)) as pool:
    for done, (job, out, result, seconds) in enumerate(pool.map(one, todo), 1):
      name, seed = job['arm'], job['seed']
      summary = os.path.join(out, 'summary.json')
      if result is None:  # the time limit: left for the next call
        stopped.append(f'{name} seed {seed}')
        continue
      if result.returncode != 0 or not os.path.exists(summary):
        failed.append(f'{name} seed {seed}')
        print(f'{name} seed {seed}: FAILED (exit {result.returncode}); see {out}/log.txt', flush=True)
        continue
      with open(summary) as f:
        s = json.load(f)
      if save:
        _copy_summary(summary, save, job)
      # A seed resumed after its training took this call only its experiments' time: the
      # estimate uses each seed's whole time, its steps' seconds from every call.
      whole.append(sum(v for v in (s.get('seconds') or {}).values() if isinstance(v, (int, float))) or seconds)
      left = (len(todo) - done) * sum(whole) / len(whole) / max(parallel, 1)
      print(f'{name} seed {seed}: {describe(s)} [{seconds:.0f} s this call, {whole[-1]:.0f} s in all; '
            f'{done}/{len(todo)}, about {left / 60:.0f} min left]', flush=True)
  if stopped:
    print(f'time limit ({time_limit:.0f} s) reached: {len(stopped)} seed(s) left for the next call, which '
          f'resumes them: {", ".join(stopped)}', flush=True)
  return failed


def copy_checkout(tool: str, flag: str, repo: str | None, code: str, source) -> None:
  """The patched copy of the user's checkout `repo` in `code/<package>`
  (`jain_wallace_patches.prepare`), or a clear exit naming what is wrong."""
  if not repo:
    sys.exit(f'error: give {flag}=PATH, a checkout of {source.name}')
  try:
    record = jain_wallace_patches.prepare(os.path.expanduser(repo), code, source)
  except jain_wallace_patches.PatchError as e:
    sys.exit(f'error: {e}')
  print(f"{source.name}: {repo} (commit {record['jw_commit'] or 'unknown'}), "
        f'{len(record["changes"])} changes in {code}/{source.package}')


def load_plan(plan_file: str) -> list[dict]:
  """The jobs written by `--prepare-only`."""
  try:
    with open(plan_file) as f:
      return json.load(f)
  except FileNotFoundError:
    sys.exit(f'error: {plan_file} does not exist: write it first with --prepare-only (same --root)')
  except json.JSONDecodeError as e:
    sys.exit(f'error: {plan_file} is not a plan ({e}): write it again with --prepare-only')


def merge_plan(plan_file: str, jobs: list[dict], root_arg: str) -> None:
  """Adds `jobs` to the plan already in `plan_file` (e.g. a from-scratch arm
  beside the rest), seed by seed, written atomically."""
  planned = []
  if os.path.exists(plan_file):
    with open(plan_file) as f:
      planned = json.load(f)
  new = {(j['arm'], j['seed']) for j in jobs}
  jobs = sorted([j for j in planned if (j['arm'], j['seed']) not in new] + jobs, key=lambda j: j['seed'])
  with open(plan_file + '.partial', 'w') as f:
    json.dump(jobs, f, indent=1)
  os.replace(plan_file + '.partial', plan_file)
  print(f'{len(jobs)} seeds planned in {plan_file}; run them with --from-plan --root={root_arg}')


def add_run_options(parser: argparse.ArgumentParser, root: str) -> None:
  """Where the seeds run and how (this script's and wiegreffe_pinter_reference.py's)."""
  parser.add_argument('--root', default=root)
  parser.add_argument('--save', default=None, help='copy each seed\'s summary.json to SAVE/<arm>/seed<k>/')
  parser.add_argument('--threads', type=int, default=0, help='PyTorch threads per seed (0: its default)')
  parser.add_argument('--parallel', type=int, default=1, help='seeds run at the same time')
  parser.add_argument('--time-limit', type=float, default=0,
                      help='seconds (0: none): then start no seed and stop the running ones, which the next '
                      'call resumes (a GPU host lent by the minute runs the plan in chunks this long)')
  parser.add_argument('--prepare-only', action='store_true',
                      help='write the inputs, the patched code and ROOT/plan.json; train nothing')
  parser.add_argument('--from-plan', action='store_true',
                      help='run ROOT/plan.json as written by --prepare-only (no attn-jax needed: '
                      'e.g. on a GPU host that has only PyTorch); with --only, the matching arms of it')


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--jw-repo', help="a checkout of J&W's repository (successar/AttentionExplanation)")
  parser.add_argument('--study', choices=['jw_grid', 'jw_qa'], default='jw_grid',
                      help="whose arms: the J&W grid's, or the QA study's (bAbI; J&W's QA code)")
  parser.add_argument('--only', default=None, help="glob patterns of grid arms, comma-separated (e.g. 'sst_*')")
  parser.add_argument('--seeds', type=int, default=None,
                      help="seeds per arm (default: the study's count for each arm, as attn-jax's side trains)")
  parser.add_argument('--embeddings', choices=['default', 'scratch'], default='default',
                      help="default: the arm's config's vectors; scratch: both sides from scratch")
  parser.add_argument('--sample-docs', type=int, default=None,
                      help="J&W's experiments on a seeded sample of N test documents (attn-jax's "
                      '`--set analysis.sample_docs=N`: the same documents; accuracy on the whole split)')
  parser.add_argument('--sample-seed', type=int, default=0)
  add_run_options(parser, None)  # default: workdirs/jw_reference (grid), workdirs/jw_qa_reference (QA)
  args = parser.parse_args(argv)

  args.root = args.root or ('workdirs/jw_qa_reference' if args.study == 'jw_qa' else 'workdirs/jw_reference')
  root = os.path.abspath(args.root)
  code = os.path.join(root, 'code')
  plan_file = os.path.join(root, 'plan.json')
  if args.from_plan:
    jobs = load_plan(plan_file)
    if args.only:  # a part of the plan: e.g. the rows a CPU host can finish
      patterns = args.only.split(',')
      jobs = [j for j in jobs if any(fnmatch.fnmatch(j['arm'], p) for p in patterns)]
  else:
    copy_checkout('jain_wallace_reference', '--jw-repo', args.jw_repo, code,
                  jain_wallace_patches.JW_QA if args.study == 'jw_qa' else jain_wallace_patches.JW)
    jobs = plan_seeds(args, root, code)
    if not jobs:
      sys.exit(f'error: no grid arm matches --only={args.only!r}')
    if args.prepare_only:
      merge_plan(plan_file, jobs, args.root)
      return
  failed = run_jobs(jobs, root, code, args.threads, args.parallel, args.save, args.time_limit)
  if failed:
    sys.exit(f'error: {len(failed)} seed(s) failed: {", ".join(failed)}')


if __name__ == '__main__':
  main()
