"""attn-jax against the PyTorch tools, side by side, on the same trained weights.

    pip install -e ".[bench]"        # CPU PyTorch and Captum
    python benchmarks/peers.py --workdir=runs/sst_bilstm --out=results/benchmarks/peers_sst.json
    python benchmarks/peers.py --workdir=runs/imdb_bilstm --sample=182 \\
        --out=results/benchmarks/peers_imdb.json
    python benchmarks/peers.py --workdir=runs/sst_cnn --out=results/benchmarks/peers_sst_cnn.json
    python benchmarks/peers.py --workdir=runs/sst_average \\
        --out=results/benchmarks/peers_sst_average.json
    python benchmarks/peers.py --table results/benchmarks/peers_*.json --readme docs/benchmarks.md

The run's attn-jax model (BiLSTM, CNN or Average encoder; tanh attention,
softmax) is loaded into J&W's PyTorch model (`jain_wallace_torch.py`); every output of
the PyTorch tools must equal attn-jax's (--atol). Then every (analysis,
implementation) runs in its own child process, on the same test documents in
the same length-sorted batches of 32, with the same threads: attn-jax's
jitted analyses, J&W's loops and Captum (`FeatureAblation` with
perturbations_per_eval 1, 8 and 32 against attn-jax's leave-one-out by PAD
replacement, which is what it computes; `InputXGradient` against gradient
importance). Each implementation first runs one batch of every padded width
untimed (attn-jax compiles there; that `warmup_seconds` is reported apart,
with the persistent compilation cache on), then the whole set is timed. A
benchmark of different numbers would mean nothing: a peer whose outputs
differ stops the run. Peak memory is the child's peak RSS from the moment
its data and weights are loaded. FLOPs per document are counted from the
shapes at each document's own length (what the computation needs, so padding
counts as waste), and compared to this CPU's f32 matmul rate measured in the
same run.
--sample=N takes N documents in blocks of 32 length neighbours spread over
the lengths (whole batches, as dense as the full set's).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import flop_count  # pylint: disable=g-import-not-at-top,wrong-import-position
import machine  # pylint: disable=g-import-not-at-top,wrong-import-position

# (analysis, implementation) in the order they run and print; the first
# implementation of an analysis is attn-jax's, the others its peers.
RUNS = (
    ('forward', 'attn_jax'), ('forward', 'jw_loop'),
    ('gradient', 'attn_jax'), ('gradient', 'jw_loop'), ('gradient', 'captum_input_x_gradient'),
    ('permutation', 'attn_jax'), ('permutation', 'jw_loop'),
    ('loo_delete', 'attn_jax'), ('loo_delete', 'jw_loop'),
    ('loo_replace', 'attn_jax'), ('loo_replace', 'captum_ablation_ppe1'),
    ('loo_replace', 'captum_ablation_ppe8'), ('loo_replace', 'captum_ablation_ppe32'),
    ('train_step', 'attn_jax'), ('train_step', 'jw_loop'),
)
ABOUT = {
    'forward': 'forward pass (ŷ, α)', 'gradient': 'gradient importance (J&W, α detached)',
    'permutation': 'permutation ×100', 'loo_delete': 'leave-one-out, deletion (J&W)',
    'loo_replace': 'leave-one-out, PAD replacement', 'train_step': 'training step (tokens/s)',
}
COMPARED = {'forward', 'gradient', 'loo_delete', 'loo_replace'}  # equal outputs asserted
PERMUTATIONS = flop_count.PERMUTATIONS


class Setting:
  """What every child loads: the run's model and params, its test documents
  (or --sample of them) in length-sorted batches, and training batches."""

  def __init__(self, args):
    from attn_jax.core import compilation  # pylint: disable=g-import-not-at-top
    from attn_jax.data import batching  # pylint: disable=g-import-not-at-top
    from attn_jax.data.dataset import load_dataset  # pylint: disable=g-import-not-at-top
    from attn_jax.workdirs.restore import restore  # pylint: disable=g-import-not-at-top
    compilation.enable_cache(args.compilation_cache)
    restored = restore(args.workdir)
    self.cfg, self.model, self.params = restored.config, restored.model, restored.params
    m = self.cfg.model
    if (m.encoder not in ('bilstm', 'cnn', 'average')
        or (m.attention, m.projection) != ('tanh', 'softmax')):
      raise SystemExit(f'{args.workdir}: peers.py compares J&W\'s BiLSTM, CNN or Average encoder '
                       f'with tanh attention and softmax; this run is '
                       f'{m.encoder}/{m.attention}/{m.projection}')
    data = load_dataset(self.cfg.data)
    test = data.splits['test']
    self.docs = machine.length_blocks(test.lengths, args.sample, args.batch_size)
    sequences = [test.sequences[i] for i in self.docs]
    self.lengths = np.array([len(s) for s in sequences])
    buckets = batching.bucket_lengths(int(self.lengths.max()), self.cfg.analysis.bucket_growth)
    self.batches = list(batching.eval_batches(sequences, test.labels[self.docs], args.batch_size,
                                              buckets))
    train = data.splits['train']
    train_buckets = batching.bucket_lengths(max(len(s) for s in train.sequences),
                                            self.cfg.data.bucket_growth)
    self.train_batches = batching.train_batches(
        train.sequences, train.labels, self.cfg.train.batch_size, train_buckets,
        1.0, seed=0, epoch=0)[:args.train_batches]


def first_of_each_width(batches):
  seen = {}
  for b in batches:
    seen.setdefault(b.tokens.shape[1], b)
  return list(seen.values())


def jax_runner(setting, analysis, args):
  """per_batch(batch) -> [real rows, ...] numpy, for attn-jax."""
  import jax  # pylint: disable=g-import-not-at-top
  from attn_jax.analysis import gradients, loo, attention_permutation as permutation  # pylint: disable=g-import-not-at-top
  model, params = setting.model, setting.params
  if analysis == 'forward':
    fn = jax.jit(lambda p, t, l: jax.nn.sigmoid(model.forward(p, t, l).logits))
    call = lambda b: fn(params, b.tokens, b.lengths)
  elif analysis == 'gradient':
    fn = jax.jit(lambda p, t, l: gradients.gradient_importance(model, p, t, l))
    call = lambda b: fn(params, b.tokens, b.lengths)
  elif analysis in ('loo_delete', 'loo_replace'):
    mode, chunk = analysis.split('_')[1], setting.cfg.analysis.loo.docs_per_chunk
    fn = jax.jit(lambda p, t, l: loo.leave_one_out(model, p, t, l, mode=mode,
                                                   docs_per_chunk=chunk).importance)
    call = lambda b: fn(params, b.tokens, b.lengths)
  elif analysis == 'permutation':
    keys = jax.random.split(jax.random.PRNGKey(0), args.batch_size)
    fn = jax.jit(lambda p, t, l, k: jax.numpy.median(
        permutation.permutation_test(model, p, t, l, k, PERMUTATIONS).differences, axis=-1))
    call = lambda b: fn(params, b.tokens, b.lengths, keys)
  elif analysis == 'train_step':
    from attn_jax.training import optimizer as optimizer_lib, step as step_lib  # pylint: disable=g-import-not-at-top
    tx = optimizer_lib.make_optimizer(setting.cfg.train,
                                      optimizer_lib.frozen_subtrees(setting.cfg))
    # Committed like the trainer's state (optax makes some leaves uncommitted,
    # and jit keys its cache on that: the second step would compile again).
    state = [jax.device_put(step_lib.init_state(tx, params), jax.devices()[0])]
    step = jax.jit(step_lib.make_train_step(model, tx))

    def call(b):
      state[0], loss = step(state[0], b)
      return loss
    return lambda b: np.asarray(jax.block_until_ready(call(b)))
  else:
    raise ValueError(analysis)
  return lambda b: np.asarray(call(b))[b.index >= 0]


def torch_runner(setting, analysis, implementation):
  import torch  # pylint: disable=g-import-not-at-top
  import jain_wallace_torch  # pylint: disable=g-import-not-at-top
  model = jain_wallace_torch.from_attn_jax(setting.params)
  generator = torch.Generator().manual_seed(0)
  if analysis == 'train_step':
    if setting.cfg.model.freeze_embeddings:
      model.embedding.weight.requires_grad_(False)
    opt = jain_wallace_torch.optimizer_for(model, setting.cfg.train.learning_rate,
                                 setting.cfg.train.weight_decay)

    def train(b):
      tokens, lengths, rows = jain_wallace_torch.as_torch(b)
      return np.float32(jain_wallace_torch.train_step(model, opt, tokens, lengths,
                                            torch.as_tensor(b.labels[rows]),
                                            torch.as_tensor(b.weights[rows])))
    return train
  per_eval = {'captum_ablation_ppe1': 1, 'captum_ablation_ppe8': 8, 'captum_ablation_ppe32': 32}
  fns = {
      ('forward', 'jw_loop'): jain_wallace_torch.probs,
      ('gradient', 'jw_loop'): jain_wallace_torch.gradient_loop,
      ('gradient', 'captum_input_x_gradient'): jain_wallace_torch.captum_input_x_gradient,
      ('loo_delete', 'jw_loop'): jain_wallace_torch.loo_loop,
      ('permutation', 'jw_loop'): lambda m, t, l: np.median(
          jain_wallace_torch.permutation_loop(m, t, l, PERMUTATIONS, generator), axis=-1),
  }
  if implementation in per_eval:
    fn = lambda m, t, l: jain_wallace_torch.captum_feature_ablation(m, t, l, per_eval[implementation])
  else:
    fn = fns[(analysis, implementation)]
  return lambda b: fn(model, *jain_wallace_torch.as_torch(b)[:2])


def run_child(args) -> dict:
  """(Child process.) One implementation of one analysis: times, memory, outputs."""
  analysis, implementation = args.child.split(':')
  if implementation != 'attn_jax':
    import torch  # pylint: disable=g-import-not-at-top
    torch.set_num_threads(args.threads)
  setting = Setting(args)
  rss_before, peak_reset = machine.rss_mb(), machine.reset_peak()
  per_batch = (jax_runner(setting, analysis, args) if implementation == 'attn_jax'
               else torch_runner(setting, analysis, implementation))
  training = analysis == 'train_step'
  batches = setting.train_batches if training else setting.batches
  started = time.perf_counter()
  for b in first_of_each_width(batches):
    per_batch(b)
  warmup = time.perf_counter() - started
  outputs, started = {}, time.perf_counter()
  for b in batches:
    rows = per_batch(b)
    if not training:
      for r, i in enumerate(b.index[b.index >= 0]):
        outputs[int(i)] = np.ravel(rows[r][:b.lengths[b.index >= 0][r]] if rows.ndim > 1 else rows[r])
  seconds = time.perf_counter() - started
  if training:
    lengths = np.concatenate([b.lengths[b.index >= 0] for b in batches])
    amount = int(lengths.sum())
  else:
    lengths, amount = setting.lengths, len(setting.docs)
  costs = flop_count.Costs(setting.params)
  useful = sum(costs.document(analysis, int(n)) for n in lengths)
  if outputs:
    order = sorted(outputs)
    np.savez(args.child_out + '.npz', index=np.array(order),
             offsets=np.cumsum([0] + [len(outputs[i]) for i in order]),
             values=np.concatenate([outputs[i] for i in order]).astype(np.float64))
  return {'analysis': analysis, 'implementation': implementation, 'seconds': seconds,
          'warmup_seconds': warmup, 'units': 'tokens' if training else 'documents',
          'amount': amount, 'per_second': amount / seconds, 'flops': useful,
          'gflops_per_second': useful / seconds / 1e9,
          'rss_before_mb': rss_before, 'peak_rss_mb': machine.rss_mb(peak=True), 'peak_reset': peak_reset}


def child(args, analysis, implementation, tmp) -> tuple[dict, str]:
  out = os.path.join(tmp, f'{analysis}_{implementation}')
  command = [sys.executable, os.path.abspath(__file__), f'--workdir={args.workdir}',
             f'--child={analysis}:{implementation}', f'--child-out={out}',
             f'--batch-size={args.batch_size}', f'--threads={args.threads}',
             f'--train-batches={args.train_batches}',
             f'--compilation-cache={args.compilation_cache or ""}']
  if args.sample is not None:
    command.append(f'--sample={args.sample}')
  subprocess.run(command, check=True)
  with open(out + '.json') as f:
    return json.load(f), out + '.npz'


def load_outputs(path) -> dict:
  with np.load(path) as z:
    return {int(i): z['values'][a:b] for i, a, b in zip(z['index'], z['offsets'][:-1], z['offsets'][1:])}


def max_difference(reference: dict, other: dict) -> float:
  if sorted(reference) != sorted(other):
    raise SystemExit('implementations saw different documents')
  return max(float(np.max(np.abs(reference[i] - other[i]), initial=0.0)) for i in reference)


def measure(args) -> dict:
  import jax  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import captum  # pylint: disable=g-import-not-at-top
  from attn_jax.core import atomic_io  # pylint: disable=g-import-not-at-top
  from attn_jax.workdirs.restore import restore  # pylint: disable=g-import-not-at-top
  wanted = set(args.analyses.split(','))
  rows, reference = [], {}
  started = time.perf_counter()
  with tempfile.TemporaryDirectory() as tmp:
    for analysis, implementation in RUNS:
      if analysis not in wanted:
        continue
      row, outputs = child(args, analysis, implementation, tmp)
      if analysis in COMPARED or analysis == 'permutation':
        got = load_outputs(outputs)
        if implementation == 'attn_jax':
          reference[analysis] = got
        else:
          row['max_abs_difference'] = max_difference(reference[analysis], got)
          if analysis == 'permutation':  # random draws: the distributions, not the values
            row['mean_median_difference'] = float(np.mean([v[0] for v in got.values()]))
            ref = reference[analysis]
            row['attn_jax_mean_median_difference'] = float(np.mean([v[0] for v in ref.values()]))
            del row['max_abs_difference']
          elif row['max_abs_difference'] > args.atol:
            raise SystemExit(f'{analysis}: {implementation} differs from attn-jax by '
                             f'{row["max_abs_difference"]:.2e} > --atol {args.atol}')
      rows.append(row)
      print(f'{analysis:12} {implementation:26} {row["per_second"]:10.1f} {row["units"]}/s  '
            f'peak {row["peak_rss_mb"]:7.0f} MB  ({time.perf_counter() - started:.0f} s so far)',
            flush=True)
  restored = restore(args.workdir)
  peak = machine.matmul_peak_in_child()
  by = {(r['analysis'], r['implementation']): r for r in rows}
  for r in rows:
    ours = by[(r['analysis'], 'attn_jax')]
    r['attn_jax_speedup'] = ours['per_second'] / r['per_second']
    r['fraction_of_matmul_peak'] = r['gflops_per_second'] * 1e9 / peak
  result = {
      'workdir': os.path.abspath(args.workdir), 'dataset': restored.config.data.dataset,
      'encoder': restored.config.model.encoder,
      'documents': None, 'sample': args.sample, 'batch_size': args.batch_size,
      'threads': args.threads, 'train_batches': args.train_batches,
      'matmul_peak_gflops': peak / 1e9, 'rows': rows,
      'versions': {'jax': jax.__version__, 'torch': torch.__version__,
                   'captum': captum.__version__},
      'device': jax.devices()[0].device_kind, 'cpu_count': os.cpu_count(),
      'command': ' '.join(['python', 'benchmarks/peers.py'] + sys.argv[1:]),
  }
  result['documents'] = int(next(r['amount'] for r in rows if r['units'] == 'documents'))
  if args.out:
    atomic_io.write_json(args.out, result)
  return result


def table(results: list[dict]) -> str:
  """The README table: one row per (dataset, analysis, implementation)."""
  lines = ['| dataset | analysis | implementation | docs/s (tokens/s for training) | attn-jax × | '
           'peak RSS MB (above loaded) | warm-up s | GFLOP/s (% of matmul peak) |',
           '|---|---|---|---|---|---|---|---|']
  for res in results:
    label = f'{res["dataset"]} {res.get("encoder", "bilstm")} ({res["documents"]} docs)'
    for r in res['rows']:
      ours = r['implementation'] == 'attn_jax'
      gf = (f'{r["gflops_per_second"]:.1f} ({100 * r["fraction_of_matmul_peak"]:.0f} %)'
            if ours else '')
      speedup = '' if ours else f'{r["attn_jax_speedup"]:.2f}×'
      name = r['implementation'].replace('_', ' ')
      lines.append(f'| {label} | {ABOUT[r["analysis"]]} | {name} | {r["per_second"]:,.1f} | '
                   f'{speedup} | {r["peak_rss_mb"]:,.0f} ({r["peak_rss_mb"] - r["rss_before_mb"]:,.0f}) | '
                   f'{r["warmup_seconds"]:.1f} | {gf} |')
  peaks = ', '.join(f'{r["dataset"]} {r.get("encoder", "bilstm")} {r["matmul_peak_gflops"]:.0f}'
                    for r in results)
  return '\n'.join(lines) + f'\n\nMatmul peak measured in the same runs (GFLOP/s): {peaks}.'


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--workdir')
  parser.add_argument('--sample', type=int, default=None)
  parser.add_argument('--analyses', default=','.join(dict.fromkeys(a for a, _ in RUNS)))
  parser.add_argument('--batch-size', type=int, default=32)
  parser.add_argument('--threads', type=int, default=os.cpu_count())
  parser.add_argument('--train-batches', type=int, default=100)
  parser.add_argument('--atol', type=float, default=1e-4)
  parser.add_argument('--compilation-cache', default=None,
                      help="JAX's persistent cache for the children (default: attn-jax's)")
  parser.add_argument('--out')
  parser.add_argument('--table', nargs='*', help='result files: print (and --readme) the table')
  parser.add_argument('--readme')
  parser.add_argument('--child', help=argparse.SUPPRESS)
  parser.add_argument('--child-out', help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    row = run_child(args)
    with open(args.child_out + '.json', 'w') as f:
      json.dump(row, f)
    return
  if args.table:
    from attn_jax.core import atomic_io
    from attn_jax.tables import common as report  # pylint: disable=g-import-not-at-top
    text = table([atomic_io.read_json(p) for p in args.table])
    print(text)
    if args.readme:
      report.write_block(args.readme, 'peers', text,
                          'python benchmarks/peers.py --table ' + ' '.join(args.table), args.table)
    return
  if not args.workdir:
    parser.error('--workdir (a trained run) or --table FILES')
  measure(args)


if __name__ == '__main__':
  main()
