"""The batch order as a random factor: J&W grid rows whose five models each
draw their own batch order, as five runs of J&W's code do.

The J&W grid (`jw_grid`) trains a configuration's five model seeds as one
program (attn_jax.runs.model_axis), and they share its batch order
(`train.batch_seed` 0): their interval leaves out the batch order's
randomness, which every seed there shares. Each run of J&W's own code
(benchmarks/jw_reference.py) seeds NumPy's global generator, which draws its
noisy length sort and batch shuffle, so its five seeds have five batch
orders. This study trains, for the grid rows where the two implementations
disagreed, model seed k with batch seed k for k = 1..4 (one model per arm,
`<row>_batches<k>`); with the grid's seed 0 (model seed 0, batch seed 0)
they are five models whose initial parameters AND batch orders both vary.
Its report (kind 'batch_seeds', `rows`) sets per row and statistic the grid's
interval (shared order), this one (independent orders) and J&W's code's,
with Welch's test of each against J&W's code.

The vectors are the grid's (vectors seed 0) in every arm: only the batch
order is added.
"""

import os

from attn_jax.analysis import statistics
from attn_jax.studies import collect, jain_wallace_reference
from attn_jax.studies.arms import Arm

# J&W's code from scratch: nn.Embedding's default N(0, 1) (as the fidelity study's scratch_1 arms).
SCRATCH = {'model.embeddings_file': None, 'model.embed_init_std': 1.0}
BATCH_SEEDS = (1, 2, 3, 4)  # 0 is the J&W grid's seed 0


def grid_row(dataset: str, encoder: str, attention: str, suffix: str = '') -> str:
  """The J&W grid's arm of the same configuration (attn_jax.studies.jain_wallace_grid);
  `suffix` '_scratch' names the grid folder's from-scratch rows."""
  return f'{dataset}_{encoder}_{attention}{suffix}'


# The rows where attn-jax (all three fixes) and J&W's code disagreed on a τ,
# and one that agreed (SST BiLSTM + tanh) as a control; cheapest first:
# (dataset, encoder, attention, row-name suffix, overrides, batch seeds).
# IMDB from scratch has 3 seeds a side (J&W's loops are slow on IMDB), so 2 arms.
ROWS = (('sst', 'average', 'tanh', '', {}, BATCH_SEEDS),
        ('sst', 'average', 'dot', '', {}, BATCH_SEEDS),
        ('sst', 'cnn', 'tanh', '', {}, BATCH_SEEDS),
        ('20news', 'average', 'tanh', '', {}, BATCH_SEEDS),
        ('20news', 'cnn', 'dot', '', {}, BATCH_SEEDS),
        ('sst', 'bilstm', 'tanh', '', {}, BATCH_SEEDS),
        ('imdb', 'bilstm', 'tanh', '_scratch', SCRATCH, (1, 2)))
ANALYSES = 'gradient,loo,kendall'  # the three τ (accuracy comes with every model)

ARMS = tuple(Arm(f'{grid_row(dataset, encoder, attention, suffix)}_batches{k}', dataset, encoder,
                 {**overrides, 'model.attention': attention, 'seed': k, 'train.batch_seed': k})
             for dataset, encoder, attention, suffix, overrides, seeds in ROWS for k in seeds)


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
  shared = collect.models(grid_arm)
  seed0 = os.path.join(grid_arm, 'seed0')
  independent = ([seed0] if seed0 in shared else []) + [
      m for arm in study.arms if arm_row(arm.name) == row
      for m in collect.models(os.path.join(root, study.folder_name(arm)))]
  return shared, independent


def rows(study, root: str, grid: str, reference: str) -> tuple[list[list[str]], dict]:
  """Per grid row and statistic (accuracy, the three τ, the selected epoch): the grid's
  interval (one batch order shared by its 5 model seeds), the interval over
  its seed 0 and the study's arms (model seed and batch order both vary),
  J&W's code's (its own per-seed orders), and Welch's test of each attn-jax
  side against J&W's code (α = 0.05). Returns (rows, counts): per side
  ('one', 'own'), [statistics that differ, statistics tested] (`notes`)."""
  table = [['configuration', 'statistic', 'attn-jax, one batch order', 'attn-jax, own batch orders',
            'J&W code', 'Welch (one order)', 'Welch (own orders)', 'sd ratio (own / one)']]
  counts = {'one': [0, 0], 'own': [0, 0]}  # [differ, tested]
  for row in dict.fromkeys(arm_row(a.name) for a in study.arms):
    shared, independent = members(study, root, grid, row)
    if len(independent) < 2:
      continue
    theirs = jain_wallace_reference.read_arm(os.path.join(reference, row))['values']
    # J&W's summaries count epochs from 0, the table (collect) from 1.
    theirs = {**theirs, 'selected_epoch': [None if e is None else e + 1 for e in
                                           theirs.get('selected_epoch', [])]}
    for stat in jain_wallace_reference.COMPARED + ('selected_epoch',):
      read = collect.STATISTICS[stat][1]
      one, own = [read(m) for m in shared], [read(m) for m in independent]
      a, b = statistics.t_interval(one), statistics.t_interval(own)
      tests = {'one': statistics.welch_t_test(one, theirs[stat]), 'own': statistics.welch_t_test(own, theirs[stat])}
      for side, test in tests.items():
        if stat in jain_wallace_reference.COMPARED and jain_wallace_reference.agree(test) is not None:
          counts[side][1] += 1
          counts[side][0] += not jain_wallace_reference.agree(test)
      ratio = f'{b["std"] / a["std"]:.2f}' if a['n'] >= 2 and b['n'] >= 2 and a['std'] > 0 else '–'
      digits = 1 if stat == 'selected_epoch' else 3
      c = statistics.t_interval(theirs[stat])
      table.append([row, collect.STATISTICS[stat][0], f'{collect.cell(a, digits)} (n={a["n"]})',
                    f'{collect.cell(b, digits)} (n={b["n"]})', f'{collect.cell(c, digits)} (n={c["n"]})',
                    jain_wallace_reference.verdict(tests['one']), jain_wallace_reference.verdict(tests['own']), ratio])
  return table, counts


def notes(study_name: str, counts: dict, grid: str, reference: str) -> list[str]:
  """The lines under `rows`' table: what each side is, and how many
  statistics differ from J&W's code with one batch order and with own
  orders (`counts`); `grid` and `reference` as the reader should see them."""
  return [
      f'one batch order: the J&W grid\'s row ({grid}), model seeds 0..4 trained as one program with '
      'train.batch_seed 0 (IMDB from scratch: seeds 0..2); own batch orders: its seed0 with model seed k and '
      'batch seed k, k = 1..4 (IMDB from scratch: 1..2, as J&W\'s code has 3 seeds there) '
      f'({study_name}: <row>_batches<k>); J&W code: benchmarks/jw_reference.py ({reference}), each seed '
      'with its own batch order. Mean ± 95 % Student-t half-width; Welch\'s t-test against J&W\'s code, '
      f'two-sided, α = {jain_wallace_reference.ALPHA:g}; the selected epoch (by dev ROC-AUC, never the first) is '
      'shown, not counted.',
      f'statistics that differ from J&W\'s code: {counts["one"][0]} of {counts["one"][1]} with one batch order, '
      f'{counts["own"][0]} of {counts["own"][1]} with own batch orders (about '
      f'{jain_wallace_reference.ALPHA * counts["own"][1]:.1f} expected by chance when the implementations are the same).']
