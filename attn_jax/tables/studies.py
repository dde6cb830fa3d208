"""A study's table: per arm, mean ± 95 % CI over seeds, beside J&W's numbers.

Each kind of study (`Study.kind`) has its table registered in
`report_registry.TABLES` (kind 'study'): the J&W grid's and the fidelity study's here, the
vector- and batch-seed studies' in `study_seeds`, W&P's Table 2 in
`wiegreffe_pinter_table2`, S&S's models here (`report ss`'s tables). A
study's definition (its arms) is in `attn_jax.studies`; its results are read
from the folders alone.

`python -m attn_jax.studies report STUDY --root=WORKDIRS [--save=results/STUDY]
[--reference=results/jw_reference] [--readme=README.md --readme=docs/jain_wallace.md]`
prints the table (for the J&W grid, then J&W's own code on the same inputs
beside it, when `--reference` holds any arm); `--save` copies each model's small
result files (eval.json, config.json, metrics.jsonl, embeddings.json,
analyses/*/summary.json) and the study's wall-time record into
`results/STUDY/<arm>/<model>/`, and `--readme` rewrites the table's block in each
Markdown file given (README.md, docs/jain_wallace.md)
from those saved files (so the documents show what is committed).
"""

import os

from attn_jax import config as config_lib
from attn_jax.core import atomic_io, errors
from attn_jax.core.registry import EXPERIMENTS, STAGES
from attn_jax.papers import published
from attn_jax.analysis import statistics, verdicts
from attn_jax.tables import jain_wallace_reference, serrano_smith_models_report as serrano_smith_models, serrano_smith_recipe
from attn_jax.tables import jain_wallace_summary, study_results
from attn_jax.tables.jain_wallace_summary import published_values
from attn_jax.tables.common import refuse_if_other_model, embeddings_source, markdown, plain, root_of, trained_items, write_blocks
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.study_results import STATISTICS, cell, collect_arm, models as collect_models, unfinished, varies as collect_varies
from attn_jax.stages import feature_importance, stage_store as store
from attn_jax.workdirs import model_axis

MODEL_FILES = ('eval.json', 'config.json', 'metrics.jsonl', 'data.json', 'embeddings.json')
TAU_PAIRS = tuple(feature_importance.PAIRS)  # J&W's three τ, as the kendall stage names them
COMPACT = {'gradient': 'grad'}  # the narrow tables' τ labels: τ(α, grad)


def wall_seconds(root: str, arm: str):
  """Seconds of the completed invocations for `arm` (and of a cut-off one up
  to the last model it finished alone: `--one-at-a-time`), and whether any
  was cut off."""
  runs = study_results.read_record(root)['arms'].get(arm, [])
  done = [r['seconds'] for r in runs if r.get('seconds') is not None]
  return (sum(done) if done else None), any(not r.get('completed') for r in runs)


def analysed_cell(docs: list) -> str:
  """How many documents the seeds' analyses cover (their most complete
  results: `attn_jax.stages.stage_store`), e.g. '1725' or '400–1725'."""
  docs = sorted({d for d in docs if d is not None})
  return '–' if not docs else str(docs[0]) if len(docs) == 1 else f'{docs[0]}–{docs[-1]}'


def embeddings_cell(arm_dir: str) -> str:
  """What the arm's models started from, read from their config.json:
  'skip-gram' / 'CBOW' (the in-domain vectors' recipe), 'scratch σ=0.1', or
  the vectors file's name; '–' before any model is saved. The defaults moved
  from CBOW (and from scratch on 20 Newsgroups) to skip-gram on 2026-11-25, so
  a row trained before says so."""
  names = set()
  for member in collect_models(arm_dir):
    path = os.path.join(member, 'config.json')
    if not os.path.exists(path):
      continue
    kind, what = embeddings_source(atomic_io.read_json(path))
    names.add(f'scratch σ={what}' if kind == 'scratch' else what)
  return ' + '.join(sorted(names)) or '–'


_ABSENT = object()  # a key one side's config does not have


def earlier_recipe(study, arm, folder: str) -> list[str]:
  """The keys that change a trained model (`config.training_items`) where the
  row's saved seeds differ from what the study trains today: [] when they
  are today's recipe (or no seed is saved). A recipe fix changes a default;
  rows trained before it stay in the table until retrained, and say so."""
  cfg = arm.config(study.seeds, study.analyses)
  members = {f"seed{v['seed']}": v for v in model_axis.sweep_values(cfg) if 'seed' in v}
  changed = set()
  for name, overrides in members.items():
    path = os.path.join(folder, name, 'config.json')
    if not os.path.exists(path):
      continue
    saved = trained_items(path)
    today = config_lib.training_items(model_axis.model_config(cfg, overrides))
    changed |= {k for k in set(saved) | set(today) if saved.get(k, _ABSENT) != today.get(k, _ABSENT)}
  return sorted(changed)


def seeds_cell(study, arm, folder: str, n: int) -> str:
  """The table's seeds cell: the count, and the keys of an earlier recipe."""
  if not n:
    return '0 (not run yet)'
  changed = earlier_recipe(study, arm, folder)
  return (str(n) + (f' of {study.seeds_of(arm)} (unfinished; not counted below)' if unfinished(study, n) else '')
          + (f' (earlier recipe: {", ".join(changed)})' if changed else ''))


def grid_rows(study, root: str) -> list[list[str]]:
  rows = [['configuration', 'embeddings', 'seeds', 'accuracy [J&W]', 'F1 pos [J&W]', 'ROC-AUC [J&W]',
           *[f'{feature_importance.tau_label(p, COMPACT)} [J&W]' for p in TAU_PAIRS],
           'adv. max JSD neg / pos [J&W ≈]', 'perm. median ∣Δŷ∣ neg / pos', 'test docs analysed',
           'wall time']]
  # Every configuration gets its row, run or not, so the table says what is missing.
  for arm in study.arms:
    c = collect_arm(os.path.join(root, study.folder_name(arm)))['ci']
    paper = published.JAIN_WALLACE_GRID.get((arm.dataset, arm.encoder, arm.overrides['model.attention']), {})
    test, tau = paper.get('test', {}), paper.get('tau', {})
    adv = paper.get('adversarial_max_jsd')
    tau_cell = lambda pair: cell(c[f'tau_{pair}'], paper=(tau.get(pair) or (None,))[0])
    seconds, cut = wall_seconds(root, study.folder_name(arm))
    rows.append([arm.name, embeddings_cell(os.path.join(root, study.folder_name(arm))),
                 seeds_cell(study, arm, os.path.join(root, study.folder_name(arm)), c['accuracy']['n']),
                 *[cell(c[m], paper=test.get(m)) for m in ('accuracy', 'f1_pos', 'roc_auc')],
                 *[tau_cell(p) for p in TAU_PAIRS],
                 f'{cell(c["adversarial_neg"], 2)} / {cell(c["adversarial_pos"], 2)}'
                 + (f' [≈{adv["neg"]:.2f} / {adv["pos"]:.2f}]' if adv else ''),
                 f'{cell(c["permutation_neg"])} / {cell(c["permutation_pos"])}',
                 analysed_cell(collect_arm(os.path.join(root, study.folder_name(arm)))['values']['analysed_docs']),
                 '–' if seconds is None and not c['accuracy']['n'] else
                 '– (unfinished)' if seconds is None else
                 f'{seconds / 60:.0f} min' + (' (+ a run cut off)' if cut else '')])
  return rows


FIDELITY_COLUMNS = ('coverage', 'accuracy', 'f1_pos', 'roc_auc', 'dev_roc_auc', 'dev_accuracy',
                    'selected_epoch', 'max_attention_median', 'max_attention_ge_075', 'entropy',
                    *[f'tau_{p}' for p in TAU_PAIRS], 'adversarial_neg', 'adversarial_pos')


def fidelity_rows(study, root: str) -> list[list[str]]:
  rows = [['embeddings', 'seeds', *[STATISTICS[k][0] for k in FIDELITY_COLUMNS]]]
  for arm in study.arms:
    c = collect_arm(os.path.join(root, study.folder_name(arm)))['ci']
    if c['accuracy']['n'] == 0:
      continue
    paper = published.JAIN_WALLACE_GRID.get((arm.dataset, arm.encoder, 'tanh'), {})
    published_values = {**paper.get('test', {}),
                        **{f'tau_{pair}': v[0] for pair, v in paper.get('tau', {}).items()}}
    rows.append([arm.name, str(c['accuracy']['n']),
                 *[cell(c[k], 2 if k == 'selected_epoch' else 3, paper=published_values.get(k))
                   for k in FIDELITY_COLUMNS]])
  return rows


APART, MEANS_ONLY, NOT_ABOVE = 'yes (intervals apart)', 'yes (means only; intervals overlap)', 'NO'


def above(a: dict, *others: dict) -> str:
  """Is a's mean above each of the others', and are the intervals apart?
  The weakest verdict over the others: one NO makes NO, one overlap makes
  'means only'."""
  if not all(a['mean'] > b['mean'] for b in others):
    return NOT_ABOVE
  return APART if all(a['low'] > b['high'] for b in others) else MEANS_ONLY





def agreement(rows: list[tuple[str, str, dict, dict]], tolerance: float = 0.08) -> list[str]:
  """How close the grid's τ are to J&W's, counted per dataset and overall.

  rows: (arm, dataset, {pair: seed interval}, {pair: J&W's (mean, std, sig)})
  for each arm with seeds and published τ. A row "agrees" when all three of
  its τ means are within `tolerance` of J&W's; a published τ is "inside"
  when it lies in our 95 % interval over seeds."""
  def counts(subset):
    agree = [arm for arm, _, ci, paper in subset
             if all(p in paper and abs(ci[p]['mean'] - paper[p][0]) <= tolerance for p in TAU_PAIRS)]
    pairs = [(ci[p], paper[p][0]) for _, _, ci, paper in subset for p in TAU_PAIRS if p in paper]
    inside = sum(bool(statistics.contains(c, value)) for c, value in pairs)
    near = sum(abs(c['mean'] - value) <= tolerance for c, value in pairs)
    return (f'{len(agree)} of {len(subset)} rows with all three τ within {tolerance:g} of J&W\'s'
            + (f' ({", ".join(agree)})' if agree else '')
            + f'; {inside} of {len(pairs)} published τ inside our intervals, {near} within {tolerance:g} of our means')
  lines = [f'{d}: {counts([r for r in rows if r[1] == d])}' for d in sorted({r[1] for r in rows})]
  return lines + ([f'all datasets: {counts(rows)}'] if len({r[1] for r in rows}) > 1 else [])


def agreement_rows(study, root: str) -> list[tuple[str, str, dict, dict]]:
  out = []
  for arm in study.arms:
    c = collect_arm(os.path.join(root, study.folder_name(arm)))['ci']
    paper = {pair: v for pair, v in published.JAIN_WALLACE_GRID.get(
        (arm.dataset, arm.encoder, arm.overrides.get('model.attention')), {}).get('tau', {}).items()
             if v and v[0] is not None}  # J&W left some cells blank
    if paper and all(c[f'tau_{p}']['n'] > 0 for p in TAU_PAIRS) and not unfinished(study, c['accuracy']['n']):
      out.append((arm.name, arm.dataset, {p: c[f'tau_{p}'] for p in TAU_PAIRS}, paper))
  return out


def patterns(study, root: str) -> list[str]:
  """J&W's qualitative claims, checked per dataset on the intervals over seeds:
  τ(grad, LOO) above τ(α, ·) for the BiLSTM; the Average encoder with the
  highest τ(α, ·); dot attention below tanh. τ(α, ·) is the mean of τ(α, grad)
  and τ(α, LOO), per seed."""
  lines = []
  for dataset in sorted({a.dataset for a in study.arms}):
    alpha, grad_loo = {}, {}
    for arm in study.arms:
      if arm.dataset != dataset:
        continue
      v = collect_arm(os.path.join(root, study.folder_name(arm)))['values']
      per_seed = [(g + l) / 2 for g, l in zip(v['tau_attention_gradient'], v['tau_attention_loo'])
                  if g is not None and l is not None]
      if per_seed and not unfinished(study, len(per_seed)):
        key = (arm.encoder, arm.overrides.get('model.attention'))
        alpha[key] = statistics.t_interval(per_seed)
        grad_loo[key] = statistics.t_interval(v['tau_gradient_loo'])
    bilstm = sorted(k for k in alpha if k[0] == 'bilstm')
    if bilstm:  # J&W's headline: gradient and LOO agree far more with each other than with α
      verdicts = [above(grad_loo[k], alpha[k]) for k in bilstm]
      held = ('holds, intervals apart' if all(v == APART for v in verdicts) else
              'does not hold' if any(v == NOT_ABOVE for v in verdicts) else 'holds on means only')
      lines.append(f'{dataset}: J&W\'s pattern, τ(grad, LOO) above τ(α, ·) for the BiLSTM '
                   f'({", ".join(k[1] for k in bilstm)}): {held}')
    for key in bilstm:
      lines.append(f'{dataset}: BiLSTM + {key[1]}: τ(grad, LOO) {grad_loo[key]["mean"]:.3f} above '
                   f'τ(α, ·) {alpha[key]["mean"]:.3f}: {above(grad_loo[key], alpha[key])}')
    for attention in ('tanh', 'dot'):
      average = alpha.get(('average', attention))
      others = {k: v for k, v in alpha.items() if k[1] == attention and k[0] != 'average'}
      if average and others:
        verdict = above(average, *others.values())
        lines.append(f'{dataset}: {attention}: Average has the highest τ(α, ·) ({average["mean"]:.3f} vs '
                     + ', '.join(f'{k[0]} {v["mean"]:.3f}' for k, v in others.items()) + f'): {verdict}')
    for encoder in sorted({e for e, _ in alpha}):
      if (encoder, 'dot') in alpha and (encoder, 'tanh') in alpha:
        lines.append(f'{dataset}: {encoder}: dot below tanh in τ(α, ·) '
                     f'({alpha[(encoder, "dot")]["mean"]:.3f} vs {alpha[(encoder, "tanh")]["mean"]:.3f}): '
                     + above(alpha[(encoder, 'tanh')], alpha[(encoder, 'dot')]))
  return lines


REFERENCE_COLUMNS = (('accuracy', 'accuracy'),
                     *((f'tau_{p}', feature_importance.tau_label(p, COMPACT)) for p in TAU_PAIRS))


def reference_comparisons(study, root: str, reference: str) -> list[tuple[str, dict, dict]]:
  """(arm, jain_wallace_reference.compare, published) for each arm of the reference, in
  the study's order. A reference arm is the study's arm of the same name, or
  a variant of it named with a suffix (`sst_bilstm_tanh_scratch`: attn-jax's
  side from `jain_wallace_reference.EXTRA_OURS`), compared with J&W's published
  numbers of that configuration."""
  out = []
  for name in jain_wallace_reference.arms(reference):
    matches = [a for a in study.arms if name == a.name or name.startswith(a.name + '_')]
    arm = max(matches, key=lambda a: len(a.name), default=None)
    folder = study.folder_name(arm) if arm is not None and arm.name == name else None
    place = study.arms.index(arm) if arm is not None else len(study.arms)
    ours = jain_wallace_reference.ours_dir(root, name, folder)
    comparison = jain_wallace_reference.compare(os.path.join(reference, name), ours)
    comparison['ours_varies'] = collect_varies(collect_models(ours))
    if os.path.dirname(os.path.normpath(ours)) != os.path.normpath(root):  # said under the table
      comparison['ours_from'] = os.path.relpath(ours, os.path.dirname(os.path.normpath(root)))
    out.append((place, name, comparison, published_values(arm) if arm is not None else {}))
  return [row[1:] for row in sorted(out, key=lambda row: row[:2])]


verdict = jain_wallace_reference.verdict  # the side-by-side table's equivalence column


def reference_rows(comparisons) -> list[list[str]]:
  """Per arm and statistic: attn-jax, J&W's code on the same inputs, J&W's
  published number, and the equivalence test of the two implementations."""
  rows = [['configuration', 'seeds (ours / J&W code)',
           *[f'{label}: {side}' for _, label in REFERENCE_COLUMNS
             for side in ('attn-jax', 'J&W code', 'J&W published', 'verdict')]]]
  for arm, c, paper in comparisons:
    ours, theirs = c['ours']['ci'], c['theirs']['ci']
    rows.append([arm, f'{ours["accuracy"]["n"]} / {len(c["theirs"]["seeds"])}',
                 *[text for s, _ in REFERENCE_COLUMNS for text in (
                     cell(ours[s]), cell(theirs[s]), '–' if paper.get(s) is None else f'{paper[s]:.3f}',
                     verdict(c['tests'][s]))]])
  return rows


def reference_notes(comparisons) -> list[str]:
  """The verdicts of attn-jax against J&W's code (cells and rows, as measured
  and with Holm's correction), what more seeds could decide, and per row
  where each τ's gap to the published number comes from
  (`jain_wallace_reference.gap_source`), with the count of gaps a test
  attributes and of those it cannot."""
  ref = jain_wallace_reference
  tests = [c['tests'][s] for _, c, _ in comparisons for s, _ in REFERENCE_COLUMNS]
  found = ref.counts(tests)
  equivalent = [arm for arm, c, _ in comparisons if all(ref.agree(c['tests'][s]) for s, _ in REFERENCE_COLUMNS)]
  lines = [f'{ref.MARGINS_TEXT}.',
           f'cells (row × statistic): {ref.counts_text(found)}; rows with all four statistics shown equivalent '
           f'(≡ or ≡Δ): {len(equivalent)} of {len(comparisons)}' + (f' ({", ".join(equivalent)})' if equivalent else '')
           + seeds_needed_text(tests)]
  lines.append(ref.GAP_LEGEND)
  lines.append('J&W code\'s intervals: seed k seeds Python\'s, NumPy\'s and PyTorch\'s generators, so each seed has '
               'its own initial weights and batch order; every seed gets the same inputs (one set of vectors)')
  lines += [f'attn-jax\'s intervals over {kind} ({", ".join(arms)})'
            for kind, arms in _by_kind((arm, c.get('ours_varies')) for arm, c, _ in comparisons).items()]
  sources = []
  for arm, c, paper in comparisons:
    documents = ref.documents_note(c['ours'], c['theirs'])
    source = c.get('ours_from') if c['ours']['models'] else None
    gaps = [(label, ref.gap_source(c['ours']['ci'][s], paper.get(s), c['tests'][s], c['theirs']['values'][s]))
            for s, label in REFERENCE_COLUMNS[1:]]
    sources += [g for _, g in gaps]
    lines.append(f'{arm}: ' + ', '.join(f'{label} {g}' for label, g in gaps) + (f'; {documents}' if documents else '')
                 + (f'; attn-jax\'s side from {source}/, not this root' if source else ''))
  lines.insert(3, gap_count_text(sources))
  return lines


def gap_count_text(sources: list[str]) -> str:
  """'τ gaps to J&W's published values: 20 (attn-jax's interval misses the value); attributed to the inputs or
  library versions: 3; not attributable by these tests: 17 (…)'."""
  ref = jain_wallace_reference
  gaps = [g for g in sources if g not in (ref.INSIDE, ref.UNKNOWN)]
  by = {k: gaps.count(k) for k in (ref.BEYOND_RUN, ref.NOT_OURS, ref.OURS, ref.UNDECIDED)}
  return (f'τ gaps to J&W\'s published values (attn-jax\'s interval misses the value): {len(gaps)}; attributed to '
          f'the inputs or library versions (not the reimplementation, not one run\'s luck): {by[ref.BEYOND_RUN]}; not '
          f'attributable by these tests: {len(gaps) - by[ref.BEYOND_RUN]} ({by[ref.NOT_OURS]} not the reimplementation '
          f'but within one run of J&W\'s code, {by[ref.OURS]} where the reimplementation differs, {by[ref.UNDECIDED]} '
          'undecided)')


def seeds_needed_text(tests) -> str:
  """'; inconclusive cells: 4–563 seeds a side would show equivalence if the differences and spreads were as
  observed (17 cells), …'."""
  parts = []
  for kind, what in (('equivalence', 'would show equivalence if the differences and spreads were as observed'),
                     ('difference', 'would show a difference if it were as observed (equivalence out of reach)')):
    needed = [t['seeds_needed'] for t in tests if t.get('seeds_needed_for') == kind]
    if needed:
      most = f'{max(needed):,}' + (' or more' if max(needed) >= verdicts.MOST_SEEDS else '')
      parts.append(f'{min(needed)}–{most} seeds a side {what} ({len(needed)} cell{"s" * (len(needed) > 1)})')
  return ('; inconclusive cells: ' + '; '.join(parts)) if parts else ''


def root_variant(study_name: str, root: str):
  """The folder's name when a study's root is named `<study>_<something>`
  (results/jw_grid_fixed: another recipe beside the study's own), else None."""
  folder = os.path.basename(os.path.normpath(root))
  return folder if folder.startswith(study_name + '_') else None


def reference_block(root: str) -> str:
  """The Markdown block the side-by-side table of a grid root is written to:
  `jw_reference-table`, or `jw_reference-table-<folder>` for a root named
  `jw_grid_<something>` (results/jw_grid_fixed), so each has its own."""
  variant = root_variant('jw_grid', root)
  return 'jw_reference-table' + ('' if variant is None else f'-{variant}')


def reference_table(study, root: str, reference: str, readme=None) -> list[list[str]] | None:
  """Prints J&W's code on the same inputs beside attn-jax (and rewrites the
  `jw_reference-table` block of those `readme` files that hold it: README.md
  carries only the grid's table); None, printing nothing, when `reference`
  holds no arm. The block is `reference_block(root)`'s."""
  comparisons = reference_comparisons(study, root, reference)
  if not comparisons:
    return None
  rows = reference_rows(comparisons)
  jain_wallace_reference.print_and_write(study, root, reference, readme, reference_block(root), rows,
                                         reference_notes(comparisons))
  return rows


def save(study, root: str, target: str) -> None:
  """Copies the small result files of each arm's models from `root` to
  `target`, with the wall-time records of those arms only
  (`study_results.copy_records`). A model folder in `target` holding another
  model's records is refused before anything is copied, never replaced."""
  saved = []
  arms = [(study.folder_name(arm), collect_arm(os.path.join(root, study.folder_name(arm)))['models'])
          for arm in study.arms]
  for folder, models in arms:  # every model checked before anything is copied
    for model in models:
      refuse_if_other_model(os.path.join(root, folder, model), os.path.join(target, folder, model))
  for folder, models in arms:
    saved += [folder] if models else []
    for model in models:
      source, dest = os.path.join(root, folder, model), os.path.join(target, folder, model)
      os.makedirs(dest, exist_ok=True)
      for name in MODEL_FILES:
        if os.path.exists(os.path.join(source, name)):
          atomic_io.copy_file(os.path.join(source, name), os.path.join(dest, name))
      for stage in STAGES.names():
        found = store.most_complete(source, stage)
        if found is not None and found.intact:
          relative = os.path.relpath(found.directory, source)
          atomic_io.write_json(os.path.join(dest, relative, 'summary.json'), store.summary_copy(found))
          store.copy_kept(found, os.path.join(dest, relative))  # the stage's small per-document arrays
      for experiment in EXPERIMENTS.names():  # an experiment's summary (its pointer copy)
        summary = os.path.join(source, 'experiments', experiment, 'summary.json')
        if os.path.exists(summary):
          atomic_io.copy_file(summary, os.path.join(dest, 'experiments', experiment, 'summary.json'))
  study_results.copy_records(root, target, saved)


def _ss_tables(study, root: str, save_to, readme, previous: str | None = None) -> list[list[str]]:
  """`python -m attn_jax.report ss` over the study's finished arms, and their
  wall times; beside the runs of the earlier recipe saved in `previous`
  (default: `ss_models_previous` beside the folder the table is read from).
  Arms of several seeds are saved model by model in their `<arm>/seed<k>`
  folders (`save`): S&S's own copy names a model by its config, which the
  seeds of one arm share."""
  if save_to and any(len(collect_models(os.path.join(root, study.folder_name(a)))) > 1 or
                     os.path.exists(os.path.join(root, study.folder_name(a), 'seed0')) for a in study.arms):
    save(study, root, save_to)
    root, save_to = save_to, None

  def finished_folder(arm):
    """The arm's folder in `root`, else its copy saved in `save_to` by an
    earlier session (whose workdir may be gone); None if in neither."""
    for place in [root] + ([save_to] if save_to else []):
      folder = os.path.join(place, study.folder_name(arm))
      if collect_models(folder):
        return folder
    return None

  found = [(arm, finished_folder(arm)) for arm in study.arms]
  finished = [folder for _, folder in found if folder]
  missing = [study.folder_name(arm) for arm, folder in found if folder is None]
  here = root_of(readme) if readme else os.getcwd()
  command = (f'python -m attn_jax.studies report {study.name} '
             f'--root={os.path.relpath(save_to or root, here)}')
  source = os.path.relpath(save_to or root, here)
  previous = previous or os.path.join(os.path.dirname(os.path.abspath(save_to or root)),
                                      'ss_models_previous')
  before = serrano_smith_recipe.load_folder(previous)
  if before:
    command += f' --reference={os.path.relpath(previous, here)}'
  files = [f'{source}/<arm>/eval.json', f'{source}/<arm>/analyses/erasure/summary.json', f'{source}/study.json']
  if before:
    files.append(f'{os.path.relpath(previous, here)}/<arm>/analyses/erasure/summary.json')
  made = serrano_smith_models.write([m for f in finished for m in collect_models(f)], save_to, readme, missing,
                         command, files, before)
  if save_to:
    study_results.copy_records(root, save_to, [study.folder_name(arm) for arm in study.arms
                                               if collect_models(os.path.join(root, study.folder_name(arm)))])
  print('\n'.join(totals(study, root)))
  return made['ss-table3'][0]


def _by_kind(named_kinds) -> dict:
  """{kind: [names]} from (name, kind) pairs, in first-seen order; None kinds left out."""
  kinds = {}
  for name, kind in named_kinds:
    if kind is not None:
      kinds.setdefault(kind, []).append(name)
  return kinds


def interval_kinds(study, root: str) -> list[str]:
  """One line per kind of interval the rows have (`collect.varies`): what
  differs among each row's models, so what its ± covers and leaves out."""
  kinds = _by_kind((arm.name, collect_varies(collect_models(os.path.join(root, study.folder_name(arm)))))
                   for arm in study.arms)
  everyone = len(kinds) == 1 and len(next(iter(kinds.values()), [])) == len(study.arms)
  return [f'intervals over {kind} ({"every row" if everyone else ", ".join(names)})'
          for kind, names in kinds.items()]


def damaged(study, root: str) -> list[str]:
  """A line per model result a table leaves out because it is damaged: an
  eval.json without its accuracy, a stage summary that is not one or whose
  files changed (`stage_store.find`) — named, never dropped silently."""
  lines = []
  for arm in study.arms:
    arm_dir = os.path.join(root, study.folder_name(arm))
    for member in collect_models(arm_dir):  # each model's folder
      shown = os.path.relpath(member, root)
      evaluated = study_results._read(os.path.join(member, 'eval.json'))  # pylint: disable=protected-access
      if not isinstance(evaluated, dict) or not isinstance(evaluated.get('accuracy'), (int, float)):
        lines.append(f'damaged, not counted: {shown}/eval.json (no test accuracy): restore it or rerun the model')
      for stage in STAGES.names():
        found = store.find(member, stage)
        if found and not found[0].intact:
          lines.append(f'damaged, not counted: {shown}, {stage}: {found[0].problem}')
  return lines


def totals(study, root: str) -> list[str]:
  """Wall time per dataset; an arm whose models another study trained
  (`--reuse`) counts only its own invocations, and the line names it. The
  damaged results left out of the table come first (`damaged`)."""
  return damaged(study, root) + _wall_times(study, root)


def _wall_times(study, root: str) -> list[str]:
  by_dataset, lent = {}, {}
  for arm in study.arms:
    seconds, cut = wall_seconds(root, study.folder_name(arm))
    if seconds is not None:
      total, arms, any_cut = by_dataset.get(arm.dataset, (0.0, 0, False))
      by_dataset[arm.dataset] = (total + seconds, arms + 1, any_cut or cut)
    runs = study_results.read_record(root)['arms'].get(study.folder_name(arm), [])
    sources = sorted({r['trained_in'] for r in runs if r.get('trained_in')})
    if sources:
      lent.setdefault(arm.dataset, []).append(f'{arm.name} from {", ".join(sources)}')
  return [f'{d}: {arms} arm(s), {total / 60:.0f} min of wall time in completed invocations'
          + (' (some arms resumed after an interruption: their cut-off part is not counted)' if cut else '')
          + (f'; models trained by another study, their training not counted: {"; ".join(lent[d])}'
             if d in lent else '')
          for d, (total, arms, cut) in by_dataset.items()]


def saved(study, root: str, save_to: str | None) -> str:
  """The folder a table is read from: `save_to` after copying the study's
  small result files there (`save`), else `root`."""
  if not save_to:
    return root
  save(study, root, save_to)
  return save_to


def _tabulate(study, root: str, save_to, readme, reference) -> list[list[str]]:
  """The J&W grid's table (kind 'grid', followed by J&W's own code on the
  same inputs: `reference_table`) or the fidelity study's (kind 'fidelity')."""
  root = saved(study, root, save_to)
  rows = (fidelity_rows if study.kind == 'fidelity' else grid_rows)(study, root)
  print(plain(rows))
  notes = ([] if study.kind == 'fidelity' else
           patterns(study, root) + agreement(agreement_rows(study, root)) + interval_kinds(study, root)
           ) + totals(study, root)
  print('\n'.join(notes))
  if readme:
    here = root_of(readme)
    source = os.path.relpath(root, here)
    table = markdown(rows) + ('\n\n' + '\n'.join(f'- {n}' for n in notes) if notes else '')
    # A root named `<study>_<variant>` (results/jw_grid_fixed) writes its own
    # block, `<study>-table-<folder>`, where a page holds one.
    variant = root_variant(study.name, root)
    own = variant is None
    write_blocks(readme, f'{study.name}-table' + ('' if own else f'-{variant}'), table,
                 f'python -m attn_jax.studies report {study.name} --root={source}'
                 + (f' --seeds={study.seeds}' if study.folder_suffix else ''),
                 [f'{source}/<arm>/<seed>/eval.json', f'{source}/<arm>/<seed>/analyses/*/summary.json',
                  f'{source}/study.json'], optional=not own)
  if study.kind == 'grid':
    reference = reference or jain_wallace_reference.default_folder(root)
    reference_table(study, root, reference, readme)
    jain_wallace_summary.write(study, root, reference, readme)
  return rows


TABLES.register(Table('grid', 'study', 10, _tabulate, paper='jw'))
TABLES.register(Table('fidelity', 'study', 20, _tabulate, paper='jw'))
TABLES.register(Table('ss', 'study', 60, lambda study, root, save_to, readme, reference:
                                 _ss_tables(study, root, save_to, readme, reference)))


def write(study, root: str, save_to: str | None = None, readme=None,
          reference: str | None = None) -> list[list[str]]:
  """Prints the study's table (from `save_to` after copying there, if given) and
  rewrites `readme`'s block; returns the rows. The table is the one
  registered for the study's kind (`report_registry.TABLES`): S&S's study
  (kind 'ss') prints `report ss`'s tables of its finished arms; the
  vector-seed study (kind 'vector_seeds') its two intervals per statistic
  (`study_seeds.vector_seed_rows`, the grid read from `jw_grid` beside the
  root). A grid is followed by J&W's own code on the same inputs
  (`reference_table`), read from `reference`, by default `jw_reference`
  beside the folder the table is read from (`save_to`'s, else `root`'s:
  results/jw_reference for results/jw_grid)."""
  if not os.path.isdir(root) and not (save_to and os.path.isdir(save_to)):  # saved arms stand in for gone workdirs
    raise errors.NothingToReport(
        f'{root} is not a folder: give the root a `python -m attn_jax.studies run {study.name}` wrote '
        f'(--root, default workdirs/{study.name}) or the results it saved (e.g. results/{study.name})')
  _require_models(study, [r for r in (root, save_to) if r and os.path.isdir(r)])
  return TABLES[study.kind].rows(study, root, save_to, readme, reference)


def _require_models(study, roots: list[str]) -> None:
  """Raises `NothingToReport` when no arm of `study` has a finished model in
  any of `roots`, naming the folders of another seed count or variant that
  are there instead (`--seeds`, `--variant`)."""
  if any(collect_arm(os.path.join(r, study.folder_name(a)))['models'] for r in roots for a in study.arms):
    return
  own = {study.folder_name(a) for a in study.arms}
  others = sorted({n for r in roots for n in os.listdir(r) if os.path.isdir(os.path.join(r, n)) and n not in own
                   and any(n.startswith(a.name + '-') for a in study.arms)})
  hint = (f'; it holds {", ".join(others[:3])}{" …" if len(others) > 3 else ""}: add the --seeds=N or --variant=NAME '
          'they were run with' if others else
          f': run it first (python -m attn_jax.studies run {study.name} --root=...)')
  raise errors.NothingToReport(f'nothing to report: {", ".join(roots)} holds no finished model of '
                               f'{study.name}\'s arms{study.folder_suffix and f" ({study.folder_suffix[1:]})"}{hint}')
