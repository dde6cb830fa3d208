"""Throughput and peak memory of the analysis stages on a trained model, and
their speed-up over straightforward loops measured in the same process.

    python benchmarks/analysis_throughput.py --workdir=/work/runs/imdb_bilstm \
        [--analyses=gradient,loo,permutation,adversarial,erasure] [--max-docs=N] \
        [--baseline-docs=96] [--atol=1e-4] [--out=PATH.json]
    # end to end on a tiny model (synthetic data, no files needed):
    python run.py --config=configs/synthetic.py:smoke --workdir=/tmp/bench_smoke \
        --config.train.progress=False --config.analyses=''
    python benchmarks/analysis_throughput.py --workdir=/tmp/bench_smoke --baseline-docs=8

Data come from ATTN_JAX_DATA / TFDS_DATA_DIR as in `run.py`; the split is
`config.analysis.split`. Every jitted function is compiled ahead of time once
per argument shapes, and compilation is timed apart. Per analysis:
  * The whole split (or --max-docs): the stage's own `compute` over
    `ctx.batches()`, in a child process, so its peak RSS is its own (counted
    from its RSS after restore + data load, also reported). `seconds`
    includes compilation, docs/s excludes it.
  * --baseline-docs documents, in blocks of a batch of length neighbours
    spread over the lengths: the vectorised function against a loop, in
    another child process, results asserted equal (--atol); the first run
    of each compiled shape is excluded from both timings.
    gradient: J&W's variant (the stage computes four), batched vs per
    document; loo: one forward per deleted column (and, for the BiLSTM,
    also the generic path that re-encodes every shortened row, to show what
    its deletion path gains); permutation: one decode
    per permutation; adversarial: per document on 8 of them (each at its
    batch's padded width); erasure: the attention
    ranking only (the stage runs five), one decode per number of erased
    items until every document flipped, vs `erase_until_flip`.
"""

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time

import jax
import numpy as np

import machine
from attn_jax.core import atomic_io
from attn_jax.workdirs import workdir as workdir_lib
from attn_jax.analysis import attention_erasure as er, gradients as gi, loo as lo, attention_permutation as perm_lib
from attn_jax.data.batching import bucket_lengths
from attn_jax.data.dataset import EncodedSplit, load_dataset
from attn_jax.data.vocabulary import PAD
from attn_jax.workdirs.restore import restore
from attn_jax.core.registry import STAGES
from attn_jax.stages.stage import AnalysisContext
from attn_jax.stages import adversarial as adv_stage, permutation as perm_stage

ANALYSES = ('gradient', 'loo', 'permutation', 'adversarial', 'erasure')


def sigmoid(z):
  return 1.0 / (1.0 + np.exp(-np.asarray(z, np.float64)))


class Jit:
  """jax.jit compiled ahead of time per argument shapes; `seconds` is the time
  spent compiling (and, if `warm`, in a first run of each compiled shape)."""

  def __init__(self, fn, warm: bool):
    self.jitted, self.compiled, self.seconds, self.warm = jax.jit(fn), {}, 0.0, warm

  def __call__(self, params, *args):
    key = tuple((np.shape(a), str(a.dtype)) for a in jax.tree_util.tree_leaves(args))
    if key not in self.compiled:
      start = time.perf_counter()
      self.compiled[key] = self.jitted.lower(params, *args).compile()
      if self.warm:
        jax.block_until_ready(self.compiled[key](params, *args))
      self.seconds += time.perf_counter() - start
    return self.compiled[key](params, *args)


@dataclasses.dataclass
class BenchContext(AnalysisContext):
  """The stages' context, with every jitted function a `Jit`."""
  warm: bool = False

  def __post_init__(self):
    self._jitted = {}

  def jit(self, name, make):
    if name not in self._jitted:
      self._jitted[name] = Jit(make(), self.warm)
    return self._jitted[name]

  def compile_seconds(self) -> float:
    return sum(j.seconds for j in self._jitted.values())

  def warm_keys(self):
    """Compiles the eager ops of `keys` (once per process: batches have one size)."""
    jax.block_until_ready(self.keys(0, np.zeros(self.settings.batch_size, np.int32))[:1])


def timed(ctx, fn):
  """(fn(), seconds excluding compilation)."""
  before, start = ctx.compile_seconds(), time.perf_counter()
  out = fn()
  return out, time.perf_counter() - start - (ctx.compile_seconds() - before)


def subset(split: EncodedSplit, index) -> EncodedSplit:
  return EncodedSplit([split.sequences[i] for i in index], split.labels[index],
                      [split.ids[i] for i in index])


def load(args) -> BenchContext:
  restored = restore(args.workdir)
  cfg = restored.config
  dataset = load_dataset(cfg.data)
  workdir_lib.check_data(dataset, args.workdir)  # the data the model was trained on
  split = dataset.splits[cfg.analysis.split]
  max_docs = args.max_docs if args.max_docs is not None else cfg.analysis.max_docs
  if max_docs is not None:
    split = subset(split, np.arange(min(max_docs, len(split))))
  return BenchContext(restored.model, restored.params, split, cfg.analysis.split, cfg,
                      dataset.fingerprint, args.workdir)


def whole_split(args) -> dict:
  """(Child process.) The stage over the whole split: times and memory."""
  ctx = load(args)
  peak_reset = machine.reset_peak()
  ctx.warm_keys()
  before, start = machine.rss_mb(), time.perf_counter()
  for batch in ctx.batches():
    jax.tree_util.tree_map(np.asarray, STAGES[args.child].compute(ctx, batch))
  wall, device = time.perf_counter() - start, jax.devices()[0].memory_stats() or {}
  return {'analysis': args.child, 'docs': len(ctx.split), 'seconds': wall,
          'compile_seconds': ctx.compile_seconds(),
          'docs_per_second': len(ctx.split) / max(wall - ctx.compile_seconds(), 1e-9),
          'rss_before_mb': before, 'peak_rss_mb': machine.rss_mb(peak=True), 'peak_reset': peak_reset,
          'device_peak_mb': device.get('peak_bytes_in_use', 0) / 2**20 or None}


def collect(ctx, per_batch, positional=False, docs=None) -> dict:
  """per_batch(batch) -> [B, ...] rows; {document: row} for `docs` (default
  all), positional rows cut to the document's length."""
  rows = {}
  for b in ctx.batches():
    if docs is None or np.isin(b.index, docs).any():
      out = np.asarray(per_batch(b))
      rows.update({i: out[r, ..., :b.lengths[r]] if positional else out[r]
                   for r, i in enumerate(b.index) if i >= 0 and (docs is None or i in docs)})
  return rows


def comparison(ctx, name, handful):
  """(vectorised per_batch, baseline per_batch, positional, docs the baseline runs)."""
  model, params, s = ctx.model, ctx.params, ctx.settings
  probs = ctx.jit('probs', lambda: lambda p, t, l: model.probabilities(model.forward(p, t, l).logits))
  as_tuple = lambda f: (f.logits, f.alpha, f.hidden, f.mask)
  fwd = ctx.jit('forward', lambda: lambda p, t, l: as_tuple(model.forward(p, t, l)))
  stage = lambda key: lambda b: STAGES[name].compute(ctx, b)[key]

  if name == 'gradient':
    grad = ctx.jit('grad', lambda: lambda p, t, l: gi.gradient_importance(model, p, t, l))
    buckets = bucket_lengths(ctx.max_length, s.bucket_growth)

    def per_doc(b):  # each document alone, padded to its own bucket
      out = np.zeros(b.tokens.shape, np.float32)
      for r in np.flatnonzero(b.index >= 0):
        w = next(x for x in buckets if x >= b.lengths[r])
        out[r, :w] = np.asarray(grad(params, b.tokens[r:r + 1, :w], b.lengths[r:r + 1]))[0]
      return out
    return lambda b: grad(params, b.tokens, b.lengths), per_doc, True, None

  if name == 'loo':
    def per_position(b):
      p, out = np.asarray(probs(params, b.tokens, b.lengths)), np.zeros(b.tokens.shape, np.float32)
      for i in range(1, int(b.lengths.max()) - 1):
        if s.loo.mode == 'delete':
          tokens, lengths = np.delete(b.tokens, i, axis=1), b.lengths - 1
        else:
          tokens, lengths = b.tokens.copy(), b.lengths
          tokens[:, i] = PAD
        change = np.abs(np.asarray(probs(params, tokens, lengths)) - p)
        out[:, i] = change.sum(axis=-1) if change.ndim == 2 else change  # more classes: L1 (J&W's QA)
      return np.where(np.arange(out.shape[1]) < b.lengths[:, None] - 1, out, 0.0)
    return stage('loo'), per_position, True, None

  if name == 'permutation':
    num = s.permutation.num_permutations
    perms = ctx.jit('perms', lambda: lambda p, keys, l, t: perm_lib.word_permutations(
        keys, l, t.shape[1], num))
    decode = ctx.jit('decode', lambda: model.decode)

    def per_permutation(b):
      logits, alpha, hidden, _ = fwd(params, b.tokens, b.lengths)
      alpha, y = np.asarray(alpha), sigmoid(logits)
      g = np.asarray(perms(params, ctx.keys(perm_stage.KEY_STREAM, b.index), b.lengths, b.tokens))
      return np.stack([np.abs(sigmoid(decode(params, hidden, np.take_along_axis(alpha, g[:, k], 1)))
                              - y) for k in range(num)], axis=1)
    return stage('differences'), per_permutation, False, None

  if name == 'adversarial':
    adversarial = ctx.jit('adversarial', lambda: adv_stage._adversarial_fn(model, s.adversarial))

    def per_doc(b):
      keys = ctx.keys(adv_stage.KEY_STREAM, b.index)
      out = np.zeros((len(b.index), s.adversarial.num_adversaries))
      for r in np.flatnonzero(np.isin(b.index, handful)):
        one = (b.tokens[r:r + 1], b.lengths[r:r + 1], keys[r:r + 1])
        out[r] = np.asarray(adversarial(params, *one)['jsd'])[0]
      return out
    return stage('jsd'), per_doc, False, handful

  if name == 'erasure':
    def flip_point(p, t, l):
      f = model.forward(p, t, l)
      flip = er.erase_until_flip(model, p, f.hidden, f.alpha, f.mask, er.ranking(f.alpha, f.mask))
      return jax.numpy.stack([flip.items.astype(f.alpha.dtype), flip.fraction, flip.mass], 1)
    until_flip = ctx.jit('until_flip', lambda: flip_point)
    erased = ctx.jit('erased', lambda: lambda p, h, a, e: model.decode(p, h, er.erase(a, e)))

    def per_step(b):
      logits, alpha, hidden, mask = fwd(params, b.tokens, b.lengths)
      alpha, decision, mask = np.asarray(alpha), np.asarray(logits) > 0, np.asarray(mask)
      order = np.argsort(np.where(mask, -alpha, np.inf), axis=1, kind='stable')
      rank, n = np.argsort(order, axis=1), mask.sum(1)
      items = np.full(len(n), -1)
      for k in range(1, n.max() + 1):  # erase the k most attended words
        active = (items < 0) & (k <= n)
        if not active.any():
          break
        z = np.asarray(erased(params, hidden, alpha, (rank < k) & mask))
        items[active & ((z > 0) != decision)] = k
      mass = np.take_along_axis(np.cumsum(np.take_along_axis(alpha, order, 1), 1),
                                np.maximum(items - 1, 0)[:, None], 1)[:, 0]
      flipped = items > 0
      return np.stack([items, np.where(flipped, items / np.maximum(n, 1), -1),
                       np.where(flipped, mass, -1)], axis=1)
    return lambda b: until_flip(params, b.tokens, b.lengths), per_step, False, None
  raise ValueError(name)


def versus_baseline(ctx, name, args) -> dict:
  """Vectorised vs loop on --baseline-docs documents (`machine.length_blocks`)."""
  docs = subset(ctx.split, machine.length_blocks(ctx.split.lengths, args.baseline_docs,
                                           ctx.settings.batch_size))
  k = len(docs)
  ctx = BenchContext(ctx.model, ctx.params, docs, ctx.split_name, ctx.cfg, ctx.data_fingerprint,
                     ctx.out_dir, warm=True)
  handful = np.unique(np.linspace(0, k - 1, min(8, k)).astype(int))
  vectorised, baseline, positional, only = comparison(ctx, name, handful)
  ctx.warm_keys()
  vec, vec_s = timed(ctx, lambda: collect(ctx, vectorised, positional))
  base, base_s = timed(ctx, lambda: collect(ctx, baseline, positional, only))
  flat = lambda rows: np.concatenate([np.ravel(rows[i]) for i in sorted(base)])
  base, vec, base_docs = flat(base), flat(vec), len(base)
  np.testing.assert_allclose(base, vec, rtol=0, atol=args.atol, err_msg=f'{name}: baseline differs')
  vec_rate, base_rate = k / max(vec_s, 1e-9), base_docs / max(base_s, 1e-9)
  row = {'baseline_docs': base_docs, 'vectorised_docs_per_second_on_baseline_docs': vec_rate,
         'baseline_docs_per_second': base_rate, 'speedup': vec_rate / base_rate,
         'max_abs_difference': float(np.max(np.abs(base - vec)))}
  if name == 'loo' and ctx.settings.loo.mode == 'delete' and ctx.model.encodes_deletions:
    row['reencode_docs_per_second'] = reencode_rate(ctx, vec, args.atol)
  return row


def reencode_rate(ctx, expected, atol) -> float:
  """docs/s of LOO re-encoding every shortened row, the path the BiLSTM's
  deletion path replaces (same jit, chunking and documents as the stage)."""
  s = ctx.settings.loo
  loo = ctx.jit('loo_reencode', lambda: lambda p, t, l: lo.leave_one_out(
      ctx.model, p, t, l, mode=s.mode, docs_per_chunk=s.docs_per_chunk, reencode=True).importance)
  per_batch = lambda b: loo(ctx.params, b.tokens, b.lengths)
  ctx.warm_keys()
  rows, seconds = timed(ctx, lambda: collect(ctx, per_batch, True))
  got = np.concatenate([np.ravel(rows[i]) for i in sorted(rows)])
  np.testing.assert_allclose(got, expected, rtol=0, atol=atol, err_msg='loo: re-encoding differs')
  return len(rows) / max(seconds, 1e-9)


def child(args, name, part) -> dict:
  """`whole_split` (part 'whole') or `versus_baseline` (part 'baseline') for
  `name` in a fresh interpreter: one analysis's memory and allocator state
  must not slow down the next one's timings."""
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, 'row.json')
    subprocess.run([sys.executable, os.path.abspath(__file__), f'--workdir={args.workdir}',
                    f'--child={name}', f'--child-part={part}', f'--child-out={out}',
                    f'--baseline-docs={args.baseline_docs}', f'--atol={args.atol}']
                   + ([f'--max-docs={args.max_docs}'] if args.max_docs is not None else []),
                   check=True)
    return atomic_io.read_json(out)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--workdir', required=True)
  parser.add_argument('--analyses', default=','.join(ANALYSES))
  parser.add_argument('--max-docs', type=int, default=None)
  parser.add_argument('--baseline-docs', type=int, default=96)
  parser.add_argument('--atol', type=float, default=1e-4)
  parser.add_argument('--out', default=None)
  parser.add_argument('--child', default=None, help=argparse.SUPPRESS)
  parser.add_argument('--child-part', default='whole', help=argparse.SUPPRESS)
  parser.add_argument('--child-out', default=None, help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    row = (whole_split(args) if args.child_part == 'whole'
           else versus_baseline(load(args), args.child, args))
    atomic_io.write_json(args.child_out, row)
    return
  names = [n for n in args.analyses.split(',') if n]
  if unknown := set(names) - set(ANALYSES):
    parser.error(f'unknown analyses {sorted(unknown)}; choose from {ANALYSES}')
  rows = []
  for name in names:
    print(f'{name}: the whole split, in a child process', file=sys.stderr, flush=True)
    rows.append(child(args, name, 'whole'))
    print(f'{name}: vectorised vs baseline, in a child process', file=sys.stderr, flush=True)
    rows[-1].update(child(args, name, 'baseline'))
  ctx = load(args)  # for the header only
  print(f'{args.workdir}: {ctx.cfg.data.dataset} {ctx.split_name}, {len(ctx.split)} documents of '
        f'{ctx.split.lengths.min()}-{ctx.max_length} tokens, {jax.devices()[0].platform}')
  print(f'{"analysis":<12}{"docs":>6}{"seconds":>9}{"compile":>9}{"docs/s":>9}{"peak RSS MB":>16}'
        f'{"base docs":>10}{"docs/s":>9}{"base docs/s":>12}{"speed-up":>10}{"max|diff|":>10}')
  for r in rows:
    rss = f'{r["peak_rss_mb"]:.0f} (+{r["peak_rss_mb"] - r["rss_before_mb"]:.0f})'
    print(f'{r["analysis"]:<12}{r["docs"]:>6}{r["seconds"]:>9.1f}{r["compile_seconds"]:>9.1f}'
          f'{r["docs_per_second"]:>9.1f}{rss:>16}{r["baseline_docs"]:>10}'
          f'{r["vectorised_docs_per_second_on_baseline_docs"]:>9.1f}'
          f'{r["baseline_docs_per_second"]:>12.1f}{r["speedup"]:>9.1f}x'
          f'{r["max_abs_difference"]:>10.1e}')
  for r in rows:
    if 'reencode_docs_per_second' in r:
      print(f'{r["analysis"]}: re-encoding the shortened rows instead of the BiLSTM deletion path: '
            f'{r["reencode_docs_per_second"]:.1f} docs/s on the base docs (deletion path '
            f'{r["vectorised_docs_per_second_on_baseline_docs"] / r["reencode_docs_per_second"]:.1f}x)')
  print('seconds include compilation, docs/s exclude it; peak RSS of a child running only that '
        'analysis (+ over its RSS before it). On the base docs: docs/s vectorised vs baseline.')
  if args.out:
    atomic_io.write_json(args.out, {'workdir': args.workdir, 'device': str(jax.devices()[0]),
                                    'dataset': ctx.cfg.data.dataset, 'split': ctx.split_name,
                                    'cpus': os.cpu_count(), 'rows': rows})


if __name__ == '__main__':
  main()
