"""The Transformer's attention, all of it: Meister et al.'s peakedness and τ
statistics for the pooling α and for every view of the self-attention
layers, over seeds (issue 78, item 2).

    python -m attn_jax.tables.meister_heads workdirs/meister_seeds/sst_transformer_*/seed* \\
        --out results/meister_seeds/transformer_heads.json --readme docs/meister.md
    python -m attn_jax.tables.meister_heads --out results/meister_seeds/transformer_heads.json \\
        --readme docs/meister.md   # the table again from the JSON alone

For each trained Transformer workdir, over its test split (length-sorted
batches, jitted), and for each view of its attention:

    pooling α          the model's own attention (what Tables 1 and 6 test)
    layer k, head h    self-attention layer k's weights of head h
    layer k, mean      the mean of its heads' α, each already over the words (`heads.mean_over_heads`)
    rollout            Abnar & Zuidema's rollout of every layer (`heads.rollout_matrix`)

a self-attention view is read three ways (`attn_jax.models.self_attention`):
'sos', the row of the SOS position (the query `heads.rollout` reads by
default), and 'received', the mean of the word queries' rows (the attention
each word receives), each one distribution over the document's words per
document; and 'rows', every word query's own row over the words, its
statistics averaged over the word queries (no τ: a row is what one word
attends to, not an importance of each word for ŷ; a layer's mean over heads
averages its heads' rows, each over the words). Per document:

    H̃            normalised entropy over the n words (`importance_measures.normalised_entropy`,
                 Meister et al.'s footnote 1, as the `importance` stage computes H̃(α))
    near-zero    the fraction of words whose weight is below 1/(100·n): a hundredth of the
                 uniform weight, so the threshold scales with the document (an absolute 1e-3
                 is 1.6 % of the uniform weight in a 16-word sentence and 2.5 times it in a
                 2,500-word review); beside it the fraction exactly 0 (sparsemax's zeros)
    largest      the largest weight (uniform: 1/n)
    τ            Kendall τ-b over the words (`kendall.kendall_tau`) of the view's weights with
                 the model's g_ŷ(x), g_ŷ(I) and D_ŷ(I) (`importance_measures`, as the `importance`
                 stage computes Table 6's: attention attached, ŷ = σ(z))

each averaged over the documents (NaN dropped, as Table 6's nanmean); then
per arm the mean ± 95 % Student-t half-width over seeds
(`statistics.t_interval`). The measures are the model's, whatever the view:
the view changes only the weights set beside them.

Resumable: each workdir's statistics are written into the JSON as soon as
they are computed, keyed by its arm and seed with a fingerprint of its
parameters; a rerun recomputes only the workdirs missing or changed.
"""

import argparse
import hashlib
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from attn_jax.analysis import contract, importance_measures as imp, kendall, measure, statistics
from attn_jax.core import atomic_io
from attn_jax.data.dataset import load_dataset
from attn_jax.models import heads, masks
from attn_jax.models.self_attention import READINGS, SelfAttention, encoder_attention, row_matrix, word_rows
from attn_jax.tables.common import markdown, plain, root_of, write_blocks
from attn_jax.tables.study_results import cell
from attn_jax.workdirs.restore import restore

VERSION = 1
BLOCK = 'meister-transformer-heads'
NEAR_ZERO = 0.01  # a weight below NEAR_ZERO / n is near zero (n: the document's words)
MEASURES = tuple((m, measure.columns('importance')[m]) for m in ('g_y_x', 'g_y_i', 'd_y_i'))  # labels: the records'
PER_DOCUMENT = ('entropy', 'near_zero', 'zero', 'largest')
ROWS = 'rows'


# ----------------------------------------------------------------- the views

def matrices(model) -> dict:
  """{name: (layer, head)}: each self-attention matrix a view reads; head None: the mean over heads.

  Args:
    model: a project Transformer (`attn_jax.models.Model`).

  Returns:
    'layer{k}/head{h}' and 'layer{k}/mean' for each layer k and head h
    (0-based), then 'rollout'; in that order.
  """
  layer = SelfAttention(model, 0)
  encoder = model.module.encoder
  out = {}
  for k in range(encoder.layers):
    out.update({f'layer{k}/head{h}': (k, h) for h in range(layer.num_heads)})
    out[f'layer{k}/mean'] = (k, None)
  out['rollout'] = ('rollout', 0)
  return out


def views(model) -> dict:
  """{name: a model whose α is the view}: 'pooling', then '<reading>/<matrix>'.

  Each self-attention view is a `heads` view of a `SelfAttention`: head h
  (`heads.head`), the mean (`heads.mean_over_heads`), the rollout as the one
  "head" of `SelfAttention(model, 'rollout', reading)`.

  Args:
    model: a project Transformer.

  Returns:
    The views in table order.
  """
  out = {'pooling': model}
  for reading in READINGS:
    for name, (k, h) in matrices(model).items():
      base = SelfAttention(model, k, reading)
      out[f'{reading}/{name}'] = heads.mean_over_heads(base) if h is None else heads.head(base, h)
  return out


# ---------------------------------------------------- per document, jitted

def weight_statistics(alpha: jnp.ndarray, lengths: jnp.ndarray) -> dict:
  """Per-distribution peakedness of weights over the words.

  Args:
    alpha: [..., B, L] distributions over the words (0 off them).
    lengths: [B] int, document lengths with SOS and EOS.

  Returns:
    {'entropy': H̃ [..., B] (`normalised_entropy`: NaN under 2 words),
     'near_zero': the fraction of words with weight < NEAR_ZERO / n,
     'zero': the fraction exactly 0, 'largest': the largest weight}, each [..., B].
  """
  words = jnp.broadcast_to(masks.word_mask(lengths, alpha.shape[-1]), alpha.shape)
  n = jnp.maximum(lengths - 2, 1).astype(alpha.dtype)
  threshold = jnp.broadcast_to((NEAR_ZERO / n)[:, None], alpha.shape)
  count = lambda hit: jnp.sum((hit & words).astype(alpha.dtype), axis=-1) / jnp.broadcast_to(n, alpha.shape[:-1])
  return {'entropy': imp.normalised_entropy(alpha, lengths),
          'near_zero': count(alpha < threshold),
          'zero': count(alpha == 0),
          'largest': jnp.max(jnp.where(words, alpha, 0.0), axis=-1)}


def row_statistics(matrix: jnp.ndarray, lengths: jnp.ndarray) -> dict:
  """`weight_statistics` of every word query's row, averaged over the word queries.

  Args:
    matrix: [B, L, L] attention weights (row q: what position q attends to).
    lengths: [B] int, document lengths with SOS and EOS.

  Returns:
    {statistic: [B]}: for each word query q, its row restricted to the words
    and renormalised, then the mean over the queries (NaN entropies dropped).
  """
  words = masks.word_mask(lengths, matrix.shape[-1])
  stats = weight_statistics(jnp.moveaxis(word_rows(matrix, words), 1, 0), lengths)  # each [L(q), B]
  queries = jnp.moveaxis(words, 1, 0)
  out = {}
  for name, value in stats.items():
    ok = queries & jnp.isfinite(value)
    count = jnp.sum(ok.astype(value.dtype), axis=0)
    out[name] = jnp.where(count > 0, jnp.sum(jnp.where(ok, value, 0.0), axis=0) / jnp.maximum(count, 1), jnp.nan)
  return out


def batch_fn(model):
  """f(params, tokens, lengths) -> {'measures': {m: [B, L]}, 'alpha': {view: [B, L]},
  'stats': {view: {statistic: [B]}}} for one batch: the model's g_ŷ(x), g_ŷ(I),
  D_ŷ(I), every view's weights and their statistics, and the 'rows/<matrix>'
  statistics. Jittable with `model` closed over.

  Args:
    model: a project Transformer.

  Returns:
    The function.
  """
  all_views, all_matrices = views(model), matrices(model)

  def fn(params, tokens, lengths):
    measures = {'g_y_x': imp.input_gradient(model, params, tokens, lengths),
                'g_y_i': imp.hidden_gradient(model, params, tokens, lengths),
                'd_y_i': imp.attention_deletion(model, params, tokens, lengths)}
    alphas = {name: view.forward(params, tokens, lengths).alpha for name, view in all_views.items()}
    stats = {name: weight_statistics(a, lengths) for name, a in alphas.items()}
    _, layers = encoder_attention(model, params, model.embed(params, tokens), lengths)
    words = masks.word_mask(lengths, tokens.shape[1])
    for name, (k, h) in all_matrices.items():
      # each head's rows over the words; the mean over heads averages those, as heads.mean_over_heads does
      m = word_rows(row_matrix(layers, k), words)
      stats[f'{ROWS}/{name}'] = row_statistics(jnp.mean(m, axis=1) if h is None else m[:, h], lengths)
    return {'measures': measures, 'alpha': alphas, 'stats': stats}
  return fn


# ------------------------------------------------------------ one workdir

def _batches(sequences, batch_size: int, multiple: int = 16):
  """(indices, tokens [B, W], lengths [B]) of length-sorted batches; the last
  one filled up with copies of its first row (indices −1) so every batch has
  `batch_size` rows; W the longest row rounded up to `multiple`."""
  lengths = np.array([len(s) for s in sequences])
  order = np.argsort(lengths, kind='stable')
  for start in range(0, len(order), batch_size):
    rows = order[start:start + batch_size]
    index = np.concatenate([rows, np.full(batch_size - len(rows), -1)])
    filled = np.where(index >= 0, index, rows[0])
    width = -(-int(lengths[filled].max()) // multiple) * multiple
    tokens = np.zeros((batch_size, width), np.int32)
    for b, i in enumerate(filled):
      tokens[b, :lengths[i]] = sequences[i]
    yield index, tokens, lengths[filled].astype(np.int32)


def fingerprint(params) -> str:
  """sha256 (16 hex digits) of the params' bytes, leaves in tree order.

  Args:
    params: a params pytree.

  Returns:
    The digest's first 16 hex digits.
  """
  digest = hashlib.sha256()
  for leaf in jax.tree.leaves(params):
    digest.update(np.ascontiguousarray(np.asarray(leaf)).tobytes())
  return digest.hexdigest()[:16]


def document_arrays(model, params, sequences, batch_size: int = 64) -> dict:
  """`batch_fn`'s outputs for every document, in the split's order, as float64.

  Args:
    model: a project Transformer.
    params: its params.
    sequences: the split's documents (int32 [n + 2] each, SOS and EOS included).
    batch_size: documents per jitted batch.

  Returns:
    {'lengths': [N], 'measures': {m: [N, W]}, 'alpha': {view: [N, W]},
    'stats': {view: {statistic: [N]}}}, W the longest padded width.
  """
  fn = jax.jit(batch_fn(model))
  width = -(-max(len(s) for s in sequences) // 16) * 16
  out = None
  for index, tokens, lengths in _batches(sequences, batch_size):
    if out is None:  # the interface's promises, once, outside the trace (`contract`); a head view's
      # check covers every head of its layer (each is checked a distribution), so one per layer
      for name, view in views(model).items():
        if name == 'pooling' or name.endswith(('/head0', '/rollout')):
          contract.check(view, params, tokens, lengths)
    got = jax.tree.map(lambda x: np.asarray(x, np.float64), fn(params, tokens, lengths))
    if out is None:
      out = jax.tree.map(lambda x: np.full((len(sequences),) + ((width,) if x.ndim == 2 else ()), np.nan), got)
    keep = index >= 0
    def put(target, value):
      if value.ndim == 2:
        target[index[keep], :value.shape[1]] = value[keep]
        target[index[keep], value.shape[1]:] = 0.0
      else:
        target[index[keep]] = value[keep]
    jax.tree.map(put, out, got)
  out['lengths'] = np.array([len(s) for s in sequences], np.int32)
  return out


def _nanmean(x) -> float | None:
  x = np.asarray(x, np.float64)
  x = x[np.isfinite(x)]
  return float(np.mean(x)) if len(x) else None


def summarise(arrays: dict) -> dict:
  """{view: {statistic: mean over documents}, with 'tau': {measure: mean τ}
  for every view but the 'rows/' ones}, from `document_arrays`.

  Args:
    arrays: `document_arrays`' output.

  Returns:
    The per-view means over documents (NaN dropped; None where all are).
  """
  lengths = arrays['lengths']
  out = {}
  for view, stats in arrays['stats'].items():
    entry = {name: _nanmean(value) for name, value in stats.items()}
    entry['n_nan_entropy'] = int(np.sum(~np.isfinite(stats['entropy'])))
    if view in arrays['alpha']:
      entry['tau'] = {m: _nanmean(kendall.kendall_tau(arrays['alpha'][view], arrays['measures'][m], lengths)[0])
                      for m, _ in MEASURES}
    out[view] = entry
  return out


def workdir_statistics(workdir: str, batch_size: int = 64, split: str = 'test') -> dict:
  """One trained Transformer's per-view statistics over a split.

  Args:
    workdir: a trained Transformer's workdir (`run.py`).
    batch_size: documents per jitted batch.
    split: the split (default test).

  Returns:
    {'arm', 'seed', 'workdir', 'params': `fingerprint`, 'documents',
    'dataset', 'projection', 'heads', 'layers', 'seconds', 'views':
    `summarise`'s}.
  """
  start = time.time()
  run = restore(workdir)
  dataset = load_dataset(run.config.data, wanted=(split,), vocab=run.vocab)
  sequences = dataset.splits[split].sequences
  arrays = document_arrays(run.model, run.params, sequences, batch_size)
  name = str(run.config.get('name') or '') or os.path.basename(os.path.normpath(workdir))
  arm, _, seed = name.rpartition('/') if '/' in name else (os.path.basename(os.path.dirname(
      os.path.normpath(workdir))), '', name)
  encoder = run.model.module.encoder
  summary = summarise(arrays)
  return {'arm': arm, 'seed': seed, 'workdir': workdir, 'params': fingerprint(run.params),
          'documents': len(sequences), 'split': split, 'dataset': run.config.data.dataset,
          'projection': run.config.model.projection, 'heads': int(encoder.heads), 'layers': int(encoder.layers),
          'seconds': round(time.time() - start, 1), 'views': summary}


# ------------------------------------------------------------ over seeds

def _empty() -> dict:
  return {'version': VERSION, 'near_zero': f'weight < {NEAR_ZERO:g} / n (n: the document\'s words)',
          'readings': {'sos': 'row 0 (SOS) over the words, renormalised',
                       'received': 'the mean of the word queries\' rows over the words, renormalised',
                       ROWS: 'each word query\'s row over the words, renormalised; statistics averaged over '
                             'the word queries'},
          'seeds': {}, 'arms': {}}


def read(path: str) -> dict:
  """The results file at `path` (its seeds kept only where its version is this one's), or an empty one.

  Args:
    path: the JSON file.

  Returns:
    {'version', 'near_zero', 'readings', 'seeds': {'<arm>/<seed>': ...}, 'arms': {...}}.
  """
  found = atomic_io.read_json_object(path) if os.path.isfile(path) else None
  if not found or found.get('version') != VERSION:
    return _empty()
  return {**_empty(), 'seeds': found.get('seeds', {})}


def _no_nan(interval: dict) -> dict:
  """A `t_interval` as JSON holds it: NaN (one seed's bounds, no seed's mean) as None."""
  return {k: None if isinstance(v, float) and not np.isfinite(v) else v for k, v in interval.items()}


def over_seeds(seeds: dict) -> dict:
  """{arm: {'seeds': n, 'views': {view: {statistic: t_interval}}}} over each arm's seeds.

  Args:
    seeds: {'<arm>/<seed>': `workdir_statistics`' output}.

  Returns:
    Per arm and view, each statistic's `statistics.t_interval` over seeds
    ('tau/<measure>' for τ).
  """
  arms = {}
  for entry in seeds.values():
    arms.setdefault(entry['arm'], []).append(entry)
  out = {}
  for arm, entries in sorted(arms.items()):
    names = list(entries[0]['views'])
    table = {}
    for view in names:
      values = {}
      for e in entries:
        got = e['views'].get(view, {})
        for stat in PER_DOCUMENT:
          values.setdefault(stat, []).append(got.get(stat))
        for m, _ in MEASURES:
          if 'tau' in got:
            values.setdefault(f'tau/{m}', []).append(got['tau'].get(m))
      table[view] = {k: _no_nan(statistics.t_interval(v)) for k, v in values.items()}
    out[arm] = {'seeds': len(entries), 'dataset': entries[0]['dataset'], 'projection': entries[0]['projection'],
                'heads': entries[0]['heads'], 'layers': entries[0]['layers'], 'views': table}
  return out


def write(path: str, results: dict) -> None:
  """Writes `results` with its 'arms' recomputed from its 'seeds' (atomically).

  Args:
    path: the JSON file.
    results: as `read` gives.

  Returns:
    None.
  """
  results['arms'] = over_seeds(results['seeds'])
  atomic_io.require_folder(os.path.dirname(os.path.abspath(path)), 'the results folder', 'give --out another path')
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  atomic_io.write_json(path, results)


def compute(workdirs: list[str], path: str, batch_size: int = 64, log=print) -> dict:
  """Each workdir's statistics into `path`, one at a time, skipping those already there.

  A workdir is skipped where `path` holds its arm and seed with the same
  params fingerprint; the file is rewritten after each workdir.

  Args:
    workdirs: trained Transformer workdirs.
    path: the results JSON.
    batch_size: documents per jitted batch.
    log: where progress lines go.

  Returns:
    The results, as written.
  """
  results = read(path)
  for workdir in workdirs:
    known = [k for k, e in results['seeds'].items() if os.path.normpath(e['workdir']) == os.path.normpath(workdir)]
    if known:
      run = restore(workdir)
      if results['seeds'][known[0]]['params'] == fingerprint(run.params):
        log(f'{workdir}: done before ({known[0]}), skipped')
        continue
    entry = workdir_statistics(workdir, batch_size)
    for k in known:
      results['seeds'].pop(k, None)
    results['seeds'][f'{entry["arm"]}/{entry["seed"]}'] = entry
    write(path, results)
    log(f'{workdir}: {entry["documents"]} documents in {entry["seconds"]:.0f} s -> {path}')
  write(path, results)
  return results


# ------------------------------------------------------------------ table

def _label(view: str, heads_count: int) -> tuple[str, str] | None:
  """(view, reading) as the table prints them; None for a mean over one head (it is that head)."""
  if view == 'pooling':
    return 'pooling α (the model\'s attention)', '–'
  reading, _, matrix = view.partition('/')
  if matrix == 'rollout':
    return 'rollout', reading
  layer, _, which = matrix.partition('/')
  k = int(layer.removeprefix('layer')) + 1
  if which == 'mean':
    return (None if heads_count == 1 else (f'layer {k}, mean over heads', reading))
  h = int(which.removeprefix('head')) + 1
  return (f'layer {k}, head {h}' + (' (the mean: one head)' if heads_count == 1 else ''), reading)


def _order(view: str) -> tuple:
  """Table order: the pooling α, then per reading each layer's heads and mean, then the rollout."""
  if view == 'pooling':
    return (0,)
  reading, _, matrix = view.partition('/')
  if matrix == 'rollout':
    return (1, (*READINGS, ROWS).index(reading), np.inf)
  layer, _, which = matrix.partition('/')
  head = np.inf if which == 'mean' else int(which.removeprefix('head'))
  return (1, (*READINGS, ROWS).index(reading), int(layer.removeprefix('layer')), head)


def rows(results: dict) -> tuple[list[list[str]], list[str]]:
  """The table (an arm's views a row each) and the lines under it.

  Args:
    results: as `read` / `compute` give.

  Returns:
    (rows, notes).
  """
  header = ['arm', 'seeds', 'view', 'reading', 'H̃', 'near-zero', 'largest weight',
            *[f'τ(·, {label})' for _, label in MEASURES]]
  table = [header]
  for arm, entry in results['arms'].items():
    names = sorted(entry['views'], key=_order)
    for view in names:
      label = _label(view, entry['heads'])
      if label is None:
        continue
      stats = entry['views'][view]
      taus = [cell(stats[f'tau/{m}']) if f'tau/{m}' in stats else '–' for m, _ in MEASURES]
      table.append([arm, str(entry['seeds']), label[0], label[1], cell(stats['entropy'], 4),
                    cell(stats['near_zero']), cell(stats['largest']), *taus])
  notes = [f'mean over the test documents, then mean ± 95 % Student-t half-width over seeds; H̃ normalised entropy '
           f'over the words (1 uniform, 0 one word); near-zero: the fraction of words weighted below {NEAR_ZERO:g}/n '
           '(n the document\'s words); largest weight: the document\'s largest (uniform: 1/n); '
           'τ: Kendall τ-b over the words with the model\'s importance measures (the same for every view)',
           'readings of a self-attention view: sos, the SOS position\'s row (the query attention rollout reads); '
           'received, the mean of the word queries\' rows (what each word receives); rows, each word query\'s own '
           'row, its H̃ and near-zero averaged over the queries (no τ); each over the words, renormalised']
  return table, notes


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('workdirs', nargs='*', help='trained Transformer workdirs (none: the table from --out alone)')
  parser.add_argument('--out', default='results/meister_seeds/transformer_heads.json', help='the results JSON')
  parser.add_argument('--readme', action='append', help='rewrite the meister-transformer-heads block here')
  parser.add_argument('--batch_size', type=int, default=64)
  args = parser.parse_args(argv)
  if args.workdirs:
    results = compute(args.workdirs, args.out, args.batch_size)
  else:
    results = read(args.out)
    if not results['seeds']:
      sys.exit(f'{args.out} holds no statistics: give the workdirs to compute them from')
    results['arms'] = over_seeds(results['seeds'])
  table, notes = rows(results)
  print(plain(table) + '\n' + '\n'.join(notes))
  if args.readme:
    source = os.path.relpath(os.path.abspath(args.out), root_of(args.readme))
    write_blocks(args.readme, BLOCK, markdown(table) + '\n\n' + '\n'.join(f'- {n}' for n in notes),
                 f'python -m attn_jax.tables.meister_heads --out {source}', [source])


if __name__ == '__main__':
  main()
