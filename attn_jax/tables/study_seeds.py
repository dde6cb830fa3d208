"""The tables of the studies that add a random factor to the J&W grid's
rows: the vectors' seed (`vector_seeds`) and the batch order (`batch_seeds`),
each interval over seeds set beside the grid's, which shares that factor
(attn_jax.studies.vector_seeds, attn_jax.studies.batch_seeds).
"""

import os

from attn_jax.analysis import statistics
from attn_jax.tables import jain_wallace_reference, study_results
from attn_jax.tables.common import plain, root_of, with_notes, write_blocks
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.studies import root_variant, saved, totals
from attn_jax.tables.study_results import STATISTICS, cell, collect_arm, models as collect_models


# The J&W grid's row of the vector-seed study's configuration, per dataset.
VECTOR_SEEDS_GRID_ROW = '{dataset}_bilstm_tanh'
VECTOR_SEED_STATISTICS = ('accuracy', 'tau_attention_gradient', 'tau_attention_loo', 'tau_gradient_loo')
_TOST_TEXT = jain_wallace_reference.MARGINS_TEXT.split('; Δ')[0]  # the test and its margins


def grid_beside(root: str) -> str:
  """The J&W grid's folder beside a study's root (results/jw_grid for
  results/vector_seeds, workdirs/jw_grid for workdirs/vector_seeds)."""
  return os.path.join(os.path.dirname(os.path.normpath(root)), 'jw_grid')


def _interval_cell(ci: dict) -> str:
  """The grid table's cell, '–' with fewer than 2 models (no interval)."""
  return cell(ci) if ci['n'] >= 2 else '–'


def vector_seed_rows(study, root: str, grid: str | None = None) -> list[list[str]]:
  """Per dataset and statistic: (a) the J&W grid's BiLSTM + tanh row over its
  5 model seeds (one set of vectors, vectors seed 0), and (b) that row's
  seed 0 with the study's arms of the dataset (vector seed k, model seed k):
  each mean ± 95 % Student-t half-width with its n, and the ratio of the
  half-widths (b / a) and of the standard deviations (the same when both
  sides have as many models; with fewer on one side its t-quantile widens the
  half-width, not the sd); '–' where a side has fewer than 2 models. `grid`:
  the J&W grid's root (default `grid_beside(root)`); it must be trained with
  the recipe the study's arms train with."""
  grid = grid or grid_beside(root)
  rows = [['dataset', 'statistic', 'model seeds only', 'n', 'vectors and model seeds', 'n',
           'half-width ratio', 'sd ratio', 'TOST (vectors and model seeds vs model seeds only)']]
  for dataset in dict.fromkeys(a.dataset for a in study.arms):
    grid_arm = os.path.join(grid, VECTOR_SEEDS_GRID_ROW.format(dataset=dataset))
    model_only = collect_arm(grid_arm)['values']
    seed0 = os.path.join(grid_arm, 'seed0')
    both_members = ([seed0] if os.path.exists(os.path.join(seed0, 'eval.json')) else []) + [
        m for arm in study.arms if arm.dataset == dataset
        for m in collect_models(os.path.join(root, study.folder_name(arm)))]
    for stat in VECTOR_SEED_STATISTICS:
      varied = [STATISTICS[stat][1](m) for m in both_members]
      a, b = statistics.t_interval(model_only[stat]), statistics.t_interval(varied)
      both = a['n'] >= 2 and b['n'] >= 2 and a['half_width'] > 0
      test = jain_wallace_reference.equivalence(varied, model_only[stat], stat)
      rows.append([dataset, STATISTICS[stat][0], _interval_cell(a), str(a['n']), _interval_cell(b),
                   str(b['n']), f'{b["half_width"] / a["half_width"]:.2f}' if both else '–',
                   f'{b["std"] / a["std"]:.2f}' if both else '–', jain_wallace_reference.verdict(test)])
  return rows


def vector_seed_notes(study, grid: str = 'jw_grid beside the root') -> list[str]:
  return [f'model seeds only: the J&W grid\'s <dataset>_bilstm_tanh ({grid}), model seeds 0..4 '
          'from one set of vectors (vectors.seed 0); vectors and model seeds: its seed0 with vector seed k and '
          f'model seed k, k = 1..4 ({study.name}: <dataset>_bilstm_tanh_vectors<k>); every model with the grid\'s '
          'batch order (train.batch_seed 0). Mean ± 95 % Student-t half-width over the models; half-width ratio: '
          'vectors and model seeds over model seeds only, and the same of the standard deviations; – where a side '
          'has fewer than 2 models.',
          f'{_TOST_TEXT}; Δ = vectors and model seeds − model seeds only. The two sides share the grid\'s seed 0 '
          'model, which makes the test conservative (it widens the interval of the difference).']


def vector_seed_table(study, root: str, readme, grid: str | None = None) -> list[list[str]]:
  """Prints the vector-seed study's table (`vector_seed_rows`, the grid read
  from `grid`, by default `jw_grid` beside the root) and rewrites the
  `vector_seeds-table` block of those `readme` files that hold it
  (`vector_seeds-table-<folder>` for a root named `vector_seeds_<something>`:
  another recipe beside the study's own, as for the grid)."""
  grid_root = grid or grid_beside(root)
  rows = vector_seed_rows(study, root, grid_root)
  notes = vector_seed_notes(study, grid_root) + totals(study, root)
  print(plain(rows) + '\n' + '\n'.join(notes))
  if readme:
    here = root_of(readme)
    source, grid = os.path.relpath(root, here), os.path.relpath(grid_root, here)
    notes = vector_seed_notes(study, grid) + totals(study, root)
    variant = root_variant(study.name, root)
    write_blocks(readme, f'{study.name}-table' + ('' if variant is None else f'-{variant}'), with_notes(rows, notes),
                 f'python -m attn_jax.studies report {study.name} --root={source}'
                 + ('' if grid_root == grid_beside(root) else f' --reference={grid}'),
                 [f'{source}/<arm>/eval.json', f'{source}/<arm>/analyses/kendall/*/summary.json',
                  f'{grid}/<dataset>_bilstm_tanh/<seed>/eval.json',
                  f'{grid}/<dataset>_bilstm_tanh/<seed>/analyses/kendall/*/summary.json',
                  f'{source}/study.json'], optional=True)
  return rows


def arm_row(arm_name: str) -> str:
  """'sst_cnn_tanh_batches3' -> 'sst_cnn_tanh'."""
  return arm_name.rsplit('_batches', 1)[0]


def default_grid(root: str) -> str:
  """The grid trained with the recipe the arms train with: `jw_grid_lstm2`
  beside the root (results/jw_grid_lstm2 for results/batch_seeds)."""
  return os.path.join(os.path.dirname(os.path.normpath(root)), 'jw_grid_lstm2')


def default_reference(root: str) -> str:
  """J&W's code on the same inputs: `jw_reference` beside the root."""
  return jain_wallace_reference.default_folder(root)


def members(study, root: str, grid: str, row: str) -> tuple[list[str], list[str]]:
  """(the grid row's models: model seeds 0..4, one batch order; its seed 0
  with the study's arms of the row: model seed = batch seed = k)."""
  grid_arm = os.path.join(grid, row)
  shared = study_results.models(grid_arm)
  seed0 = os.path.join(grid_arm, 'seed0')
  independent = ([seed0] if seed0 in shared else []) + [
      m for arm in study.arms if arm_row(arm.name) == row
      for m in study_results.models(os.path.join(root, study.folder_name(arm)))]
  return shared, independent


def rows(study, root: str, grid: str, reference: str) -> tuple[list[list[str]], dict]:
  """Per grid row and statistic (accuracy, the three τ, the selected epoch): the grid's
  interval (one batch order shared by its 5 model seeds), the interval over
  its seed 0 and the study's arms (model seed and batch order both vary),
  J&W's code's (its own per-seed orders), and the equivalence test (TOST) of
  each attn-jax side against J&W's code. Returns (rows, counts): per side
  ('one', 'own'), the cells shown equivalent / different / inconclusive (`notes`)."""
  table = [['configuration', 'statistic', 'attn-jax, one batch order', 'attn-jax, own batch orders',
            'J&W code', 'TOST (one order)', 'TOST (own orders)', 'sd ratio (own / one)']]
  tested = {'one': [], 'own': []}
  for row in dict.fromkeys(arm_row(a.name) for a in study.arms):
    shared, independent = members(study, root, grid, row)
    if len(independent) < 2:
      continue
    theirs = jain_wallace_reference.read_arm(os.path.join(reference, row))['values']
    # J&W's summaries count epochs from 0, the table (collect) from 1.
    theirs = {**theirs, 'selected_epoch': [None if e is None else e + 1 for e in
                                           theirs.get('selected_epoch', [])]}
    for stat in jain_wallace_reference.COMPARED + ('selected_epoch',):
      read = study_results.STATISTICS[stat][1]
      one, own = [read(m) for m in shared], [read(m) for m in independent]
      a, b = statistics.t_interval(one), statistics.t_interval(own)
      if stat in jain_wallace_reference.COMPARED:
        tests = {side: jain_wallace_reference.equivalence(values, theirs[stat], stat)
                 for side, values in (('one', one), ('own', own))}
        for side, test in tests.items():
          tested[side].append(test)
        verdicts = [jain_wallace_reference.verdict(tests['one']), jain_wallace_reference.verdict(tests['own'])]
      else:
        verdicts = ['–', '–']  # shown, not tested
      ratio = f'{b["std"] / a["std"]:.2f}' if a['n'] >= 2 and b['n'] >= 2 and a['std'] > 0 else '–'
      digits = 1 if stat == 'selected_epoch' else 3
      c = statistics.t_interval(theirs[stat])
      table.append([row, study_results.STATISTICS[stat][0], f'{study_results.cell(a, digits)} (n={a["n"]})',
                    f'{study_results.cell(b, digits)} (n={b["n"]})', f'{study_results.cell(c, digits)} (n={c["n"]})',
                    *verdicts, ratio])
  return table, {side: jain_wallace_reference.counts(tests) for side, tests in tested.items()}


def notes(study_name: str, counts: dict, grid: str, reference: str) -> list[str]:
  """The lines under `rows`' table: what each side is, and how many cells
  are shown equivalent to J&W's code with one batch order and with own
  orders (`counts`); `grid` and `reference` as the reader should see them."""
  return [
      f'one batch order: the J&W grid\'s row ({grid}), model seeds 0..4 trained as one program with '
      'train.batch_seed 0 (IMDB from scratch: seeds 0..2); own batch orders: its seed0 with model seed k and '
      'batch seed k, k = 1..4 (IMDB from scratch: 1..2, as J&W\'s code has 3 seeds there) '
      f'({study_name}: <row>_batches<k>); J&W code: benchmarks/original_code/jain_wallace_reference.py ({reference}), each seed '
      'with its own batch order. Mean ± 95 % Student-t half-width; '
      f'{jain_wallace_reference.MARGINS_TEXT}; the selected epoch (by dev ROC-AUC, never the first) is '
      'shown, not tested.',
      f'cells against J&W\'s code, one batch order: {jain_wallace_reference.counts_text(counts["one"])}; '
      f'own batch orders: {jain_wallace_reference.counts_text(counts["own"])}.']


def batch_seed_table(study, root: str, reference, readme) -> list[list[str]]:
  """Prints the batch-seed study's table (`rows`: the grid read
  from `jw_grid_lstm2` beside the root, J&W's code from `reference`, by
  default `jw_reference` beside it) and rewrites the `batch_seeds-table`
  block of those `readme` files that hold it."""
  reference = reference or default_reference(root)
  grid = default_grid(root)
  table_rows, counts = rows(study, root, grid, reference)
  spent = totals(study, root)
  print(plain(table_rows) + '\n' + '\n'.join(notes(study.name, counts, grid, reference) + spent))
  if readme:
    here = root_of(readme)
    source, ref, shown_grid = (os.path.relpath(p, here) for p in (root, reference, grid))
    lines = notes(study.name, counts, shown_grid, ref) + spent
    default = os.path.abspath(reference) == os.path.abspath(default_reference(root))
    write_blocks(readme, f'{study.name}-table', with_notes(table_rows, lines),
                 f'python -m attn_jax.studies report {study.name} --root={source}'
                 + ('' if default else f' --reference={ref}'),
                 [f'{source}/<arm>/eval.json', f'{source}/<arm>/analyses/kendall/*/summary.json',
                  f'{shown_grid}/<row>/<seed>/eval.json',
                  f'{shown_grid}/<row>/<seed>/analyses/kendall/*/summary.json',
                  f'{ref}/<row>/<seed>/summary.json', f'{source}/study.json'], optional=True)
  return table_rows


TABLES.register(Table(
    'vector_seeds', 'study', 30, lambda study, root, save_to, readme, reference:
    vector_seed_table(study, saved(study, root, save_to), readme, reference)))
TABLES.register(Table(
    'batch_seeds', 'study', 40, lambda study, root, save_to, readme, reference:
    batch_seed_table(study, saved(study, root, save_to), reference, readme)))
