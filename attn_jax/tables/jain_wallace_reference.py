"""J&W's own code on attn-jax's inputs: its per-seed numbers beside ours.

`python benchmarks/original_code/jain_wallace_reference.py` trains J&W's PyTorch models (their code,
minimally changed) on exactly the splits, vocabulary and embedding matrix an
attn-jax arm used, one seed at a time, and writes

    <reference>/<arm>/seed<k>/summary.json   accuracy, roc_auc, f1_pos, the three τ, ...
                                             (any value null: not computed)

This reads those files and, for the same arm, attn-jax's seeds
(`attn_jax.tables.study_results`), and compares the two implementations per
statistic with the project's one verdict (`attn_jax.analysis.verdicts.compare`:
TOST at `verdicts.MARGINS`, 0.02 for accuracy and F1, 0.05 for each τ, and
the test of a zero difference): equivalent, equivalent with a difference
smaller than the margin, different, or inconclusive (with what more seeds
could decide).

What it can say about a gap between attn-jax and J&W's *published* number
(`gap_source`): where attn-jax is equivalent to J&W's code on the same inputs,
the gap is not attn-jax's reimplementation. Where, besides, the published
value lies outside the 95 % prediction interval of one run of J&W's code on
these inputs, it is not the luck of J&W's single published run either: it
goes with what differs between J&W's run and this one — the inputs (splits,
vocabulary, vectors) and the library versions, which nothing here separates.
"""

import json
import os
import re
from typing import Optional

from attn_jax.analysis import statistics, verdicts
from attn_jax.core import atomic_io
from attn_jax.tables import study_results as collect
from attn_jax.tables.common import plain, root_of, with_notes, write_blocks

# What the summaries may hold, and the four the table tests.
STATISTICS = ('accuracy', 'f1_pos', 'roc_auc', 'tau_attention_gradient', 'tau_attention_loo', 'tau_gradient_loo',
              'entropy', 'max_attention_median', 'documents', 'selected_epoch')
COMPARED = ('accuracy', 'tau_attention_gradient', 'tau_attention_loo', 'tau_gradient_loo')

# Reference arms whose attn-jax side is not `<root>/<arm>`: {arm: its folder,
# relative to the folder that holds the grid's root (results/)}. From scratch,
# both sides start from N(0, 1) embeddings (PyTorch's nn.Embedding default,
# which J&W's code keeps), the fidelity study's `scratch_1` arms.
EXTRA_OURS: dict[str, str] = {
    'sst_bilstm_tanh_scratch': 'fidelity/scratch_1',
    '20news_bilstm_tanh_scratch': 'fidelity/20news_scratch_1',
    'imdb_bilstm_tanh_scratch': 'fidelity/imdb_scratch_1',
}

# Where a gap to J&W's published value comes from, as far as the tests show (`gap_source`).
INSIDE = '—'                          # the published value lies inside attn-jax's interval: no gap
BEYOND_RUN = 'inputs or versions'     # ≡ J&W's code, and published outside one run of it
NOT_OURS = 'not the reimplementation'  # ≡ J&W's code; one run of it may reach the published value
OURS = 'reimplementation differs'     # attn-jax different from J&W's code on the same inputs
UNDECIDED = 'undecided'               # the comparison with J&W's code is inconclusive
UNKNOWN = 'n/a'                       # no published value, interval or comparison
GAP_LEGEND = (f'gap to J&W\'s published value: "{INSIDE}" inside attn-jax\'s interval; "{NOT_OURS}" = outside it, '
              'attn-jax equivalent to J&W\'s code on the same inputs (≡ or ≡Δ), and the published value inside the 95 % '
              f'prediction interval of one run of J&W\'s code; "{BEYOND_RUN}" = the same, but the published value outside '
              'that prediction interval too: neither the reimplementation nor one run\'s luck, so the inputs (splits, '
              f'vocabulary, vectors) or library versions, which no test here separates; "{OURS}" = attn-jax different '
              f'from J&W\'s code; "{UNDECIDED}" = that comparison inconclusive; "{UNKNOWN}" = no published value, '
              'interval or comparison')


def default_folder(root: str) -> str:
  """The reference's usual place: `jw_reference` beside the grid's folder
  (results/jw_grid -> results/jw_reference)."""
  return os.path.join(os.path.dirname(os.path.normpath(root)), 'jw_reference')


def _seed_files(arm_dir: str) -> list[str]:
  """`seed<k>/summary.json` of an arm, in seed order."""
  if not os.path.isdir(arm_dir):
    return []
  seeds = sorted(int(m.group(1)) for n in os.listdir(arm_dir) if (m := re.fullmatch(r'seed(\d+)', n)))
  paths = [os.path.join(arm_dir, f'seed{k}', 'summary.json') for k in seeds]
  return [p for p in paths if os.path.isfile(p)]


def arms(reference: str) -> list[str]:
  """The arms with at least one finished reference model, by name."""
  if not os.path.isdir(reference):
    return []
  return sorted(n for n in os.listdir(reference) if _seed_files(os.path.join(reference, n)))


def read_arm(arm_dir: str) -> dict:
  """{'seeds': [k], 'values': {stat: [per seed]}, 'ci': {stat: t_interval}};
  a summary that does not read (being written) is left out, like a model
  without its eval.json in `collect`."""
  read = [(path, atomic_io.read_json_object(path)) for path in _seed_files(arm_dir)]
  read = [(int(os.path.basename(os.path.dirname(p))[4:]), s) for p, s in read if s is not None]
  values = {name: [s.get(name) for _, s in read] for name in STATISTICS}
  samples = {json.dumps(s.get('test_sample'), sort_keys=True) for _, s in read}
  return {'seeds': [k for k, _ in read], 'values': values,
          'ci': {name: statistics.t_interval(v) for name, v in values.items()},
          'test_sample': [json.loads(x) for x in sorted(samples)]}


def documents_note(ours: dict, theirs: dict) -> Optional[str]:
  """What the τ of an arm were computed over, when not the whole test split
  on both sides or not the same count: a seeded sample (J&W's code is given
  attn-jax's indices), or a mismatch to read the row with."""
  mine = sorted({n for n in ours['values'].get('analysed_docs', []) if n is not None})
  yours = sorted({n for n in theirs['values'].get('documents', []) if n is not None})
  samples = [x for x in theirs.get('test_sample', []) if x]
  if not samples and (mine == yours or not mine or not yours):  # nothing to say, or a side not told
    return None
  counts = lambda values: '/'.join(map(str, values))
  text = (f'τ over {counts(mine)} test documents (attn-jax), {counts(yours) or "?"} (J&W\'s code)' if mine
          else f'τ over {counts(yours) or "?"} test documents (J&W\'s code)')
  if samples:
    text += '; ' + ', '.join(f'a sample of {x["docs"]} drawn with seed {x["seed"]}' for x in samples)
    text += (' (`analysis.sample_docs`; the same documents on both sides)' if mine == yours and len(samples) == 1
             else '')
  return text


def ours_dir(root: str, arm: str, folder: Optional[str] = None) -> str:
  """The attn-jax folder an arm is compared with: `<root>/<arm>` when the
  root holds one of that name (a variant trained beside the grid, e.g. from
  scratch with today's recipe), else `EXTRA_OURS`'s entry, else
  `<root>/<folder or arm>`."""
  if arm in EXTRA_OURS and not os.path.isdir(os.path.join(root, arm)):
    return os.path.join(os.path.dirname(os.path.normpath(root)), EXTRA_OURS[arm])
  return os.path.join(root, folder or arm)


def margin(stat: str) -> float:
  """The equivalence margin of a statistic: accuracy / F1 / ROC-AUC or a τ."""
  return verdicts.MARGINS['tau'] if stat.startswith('tau_') else verdicts.MARGINS['accuracy']


def equivalence(ours, theirs, stat: str) -> dict:
  """The verdict (`verdicts.compare`) of two lists of per-seed values at the statistic's margin."""
  return verdicts.compare(ours, theirs, margin(stat))


def compare(reference_arm: str, ours: str) -> dict:
  """{'ours': collect_arm, 'theirs': read_arm, 'tests': {stat: equivalence(ours, theirs)}}."""
  mine, theirs = collect.collect_arm(ours), read_arm(reference_arm)
  return {'ours': mine, 'theirs': theirs,
          'tests': {s: equivalence(mine['values'][s], theirs['values'][s], s) for s in COMPARED}}


def agree(test: dict) -> Optional[bool]:
  """True when shown equivalent (with or without a difference smaller than
  the margin), False when not (different, or inconclusive), None untested
  (< 2 seeds on a side)."""
  return None if test['difference'] is None else bool(test['equivalent'])


def verdict(test: dict) -> str:
  """'equivalent (Δ +0.004 [−0.010, +0.018])', 'different (…)', 'inconclusive (…; ~n seeds a side …)',
  '–' under 2 seeds a side. Δ: the first side minus the second, its 95 % Welch interval."""
  if test['difference'] is None:
    return '–'
  shown = lambda x: round(x, 3) + 0.0  # no '-0.000'
  text = (f'{verdicts.SHORT[test["verdict"]]} (Δ {shown(test["difference"]):+.3f} '
          f'[{shown(test["low95"]):+.3f}, {shown(test["high95"]):+.3f}]')
  if test.get('seeds_needed'):
    text += f'; {verdicts.seeds_text(test)}'
  return text + ')'


def counts(tests) -> dict:
  """The verdicts of the tested ones among `tests` (`verdicts.count`: as
  measured and with Holm's correction across them)."""
  return verdicts.count([t for t in tests if t['difference'] is not None])


def counts_text(found: dict) -> str:
  """'56 tested: 30 equivalent, …; with Holm's correction across the 56: …'."""
  return (f'{found["tested"]} tested: {verdicts.describe_counts(found)}; with Holm\'s correction across the '
          f'{found["tested"]}: {verdicts.describe_counts(found, "holm")}')


MARGINS_TEXT = (f'TOST (α = 0.05) at margins {verdicts.MARGINS["accuracy"]:g} for accuracy and F1, '
                f'{verdicts.MARGINS["tau"]:g} for each τ, and the test of a zero difference (Welch, α = 0.05): '
                f'{verdicts.LEGEND}; Δ = attn-jax − the other side, with its 95 % Welch interval')


def gap_source(ours: dict, published: Optional[float], test: dict, theirs_values=()) -> str:
  """Where attn-jax's gap to J&W's published value comes from, as far as the
  tests show (the constants above, `GAP_LEGEND`): `ours` attn-jax's t
  interval, `test` attn-jax against J&W's code (`equivalence`),
  `theirs_values` J&W's code's per-seed values (for the prediction interval
  of one of its runs)."""
  inside = statistics.contains(ours, published)
  if inside is None:
    return UNKNOWN
  if inside:
    return INSIDE
  if test['difference'] is None:
    return UNKNOWN
  if test['verdict'] == verdicts.INCONCLUSIVE:
    return UNDECIDED
  if not test['equivalent']:
    return OURS
  one_run = statistics.prediction_interval(theirs_values)
  reached = statistics.contains(one_run, published)
  return BEYOND_RUN if reached is False else NOT_OURS


def print_and_write(study, root: str, reference: str, readme, block: str, rows: list[list[str]],
                    notes: list[str]) -> None:
  """Prints a table of attn-jax's `root` beside J&W's code in `reference`, and
  rewrites `block` in those `readme` files that hold it, with the command
  that prints it and the files it reads."""
  print('\n' + plain(rows) + '\n' + '\n'.join(notes))
  if readme:
    here = root_of(readme)
    source, ref = os.path.relpath(root, here), os.path.relpath(reference, here)
    default = os.path.abspath(reference) == os.path.abspath(default_folder(root))
    write_blocks(readme, block, with_notes(rows, notes),
                 f'python -m attn_jax.studies report {study.name} --root={source}'
                 + (f' --seeds={study.seeds}' if study.folder_suffix else '')
                 + ('' if default else f' --reference={ref}'),
                 [f'{ref}/<arm>/<seed>/summary.json', f'{source}/<arm>/<seed>/eval.json',
                  f'{source}/<arm>/<seed>/analyses/kendall/*/summary.json'], optional=True)
