"""What a workdir (or an --output_dir) holds, read without changing anything.

    python -m attn_jax.contents WORKDIR [WORKDIR ...]

For each model folder (the workdir, and each model of a program under it):
its config and data, whether its description files match their recorded
sha256, training and selection, the test metrics, and every set of analysis
results per stage — key, split, document count, settings, intact or damaged,
or still in progress — with the one a report shows by default marked `*`.
"""

import argparse
import os

from attn_jax.core import atomic_io, environment, leases
from attn_jax.core.registry import EXPERIMENTS, STAGES
from attn_jax.workdirs import workdir as workdir_lib
from attn_jax.core import errors
from attn_jax.core.errors import AttnJaxError
from attn_jax.stages import stage_store as store
from attn_jax.training import checkpoints as checkpoint_files
from attn_jax.core import console


def _read(path: str):
  try:
    return atomic_io.read_json(path)
  except (OSError, ValueError):
    return None


def model_folders(root: str) -> list[str]:
  """`root` and the folders under it that hold a model's files, in name order."""
  found = []
  for directory, subdirs, files in os.walk(root, onerror=lambda e: None):
    subdirs[:] = sorted(d for d in subdirs if d not in ('checkpoints', 'analyses') and not d.startswith('.'))
    if 'config.json' in files or 'eval.json' in files or 'analyses' in os.listdir(directory):
      found.append(directory)
  return found


def _description_lines(folder: str) -> list[str]:
  lines = []
  config = _read(os.path.join(folder, 'config.json'))
  if isinstance(config, dict):
    model = config.get('model', {})
    lines.append(f'  config: {config.get("name")} ({config.get("data", {}).get("dataset")}), '
                 f'{model.get("encoder")} + {model.get("attention")} / {model.get("projection")}, '
                 f'seed {config.get("seed")}')
  problems = []
  for name in workdir_lib.DESCRIPTION:
    try:
      workdir_lib.verify(folder, name)
    except AttnJaxError as e:
      problems.append(str(e))
  if not os.path.exists(os.path.join(folder, workdir_lib.CHECKSUMS)):
    lines.append('  description files: no checksums.json (written by attn-jax <= 0.2, or not a workdir)')
  else:
    lines.append('  description files: ' + ('sha256 as recorded' if not problems else 'DAMAGED'))
  lines += [f'    {p}' for p in problems]
  data = _read(os.path.join(folder, 'data.json'))
  if isinstance(data, dict):
    source = data.get('source') or {}
    standard = {True: 'reference copy', False: 'NON-STANDARD: ' + '; '.join(source.get('notes', []))}
    lines.append(f'  data: fingerprint {data.get("fingerprint")}, '
                 f'{standard.get(source.get("standard"), "source not recorded")}')
  return lines


def _training_lines(folder: str) -> list[str]:
  lines = []
  checkpoints = os.path.join(folder, 'checkpoints')
  for kind in ('latest', 'best'):
    directory = os.path.join(checkpoints, kind)
    if os.path.isdir(directory):
      steps = sorted((int(n) for n in os.listdir(directory) if n.isdigit()))
      shown = []
      for step in steps:
        why = checkpoint_files.damage(os.path.join(directory, str(step)))
        shown.append(str(step) if why is None else f'{step} DAMAGED ({why})')
      lines.append(f'  checkpoints/{kind}: step ' + (', '.join(shown) if steps else 'none'))
    elif kind == 'best' and os.path.isdir(os.path.join(checkpoints, 'latest')):
      lines.append('  checkpoints/best: missing (a run rebuilds it from latest when both are at the selected step)')
  record = _read(os.path.join(folder, 'training.json'))
  if isinstance(record, dict):
    # The trainer's record sits under 'progress' (older ones at the top).
    progress = record.get('progress') if isinstance(record.get('progress'), dict) else record
    epochs = progress.get('epoch')
    lines.append(f'  training: finished ({epochs} epochs)' if progress.get('finished')
                 else f'  training: {epochs} epoch(s) done, not finished' if isinstance(epochs, int)
                 else '  training: record unreadable')
  results = _read(os.path.join(folder, 'eval.json'))
  if isinstance(results, dict):
    number = lambda k: results[k] if isinstance(results.get(k), (int, float)) else float('nan')
    second = ('roc-auc', 'roc_auc') if 'roc_auc' in results else ('macro-f1', 'macro_f1')  # multi-class
    lines.append(f'  test: accuracy {number("accuracy"):.4f}, {second[0]} {number(second[1]):.4f} on '
                 f'{results.get("n")} documents (selected epoch {number("selected_epoch") + 1:.0f}, 1 = first)')
    for i, where in enumerate(results.get('trained_in') or []):
      lines.append(f'  {"trained in" if i == 0 else "then in"}: {environment.summary(where)}')
  return lines


def _stage_lines(folder: str) -> list[str]:
  lines = []
  for stage in STAGES.names():
    found = store.find(folder, stage)
    root = store.stage_root(folder, stage)
    partial = [n for n in (sorted(os.listdir(root)) if os.path.isdir(root) else [])
               if os.path.exists(os.path.join(root, n, store.PARTIAL))
               and not os.path.exists(os.path.join(root, n, store.SUMMARY))]
    for i, f in enumerate(found):
      key = f.summary.get('key') if isinstance(f.summary.get('key'), dict) else {}
      state = 'intact' if f.intact and 'sha256' in f.summary else (
          'summary only (no sha256 recorded)' if f.intact else f'DAMAGED: {f.problem}')
      lines.append(f'  {"*" if i == 0 and f.intact else " "} {stage}: {f.documents} {key.get("split", "?")} docs, '
                   f'key {f.key_hash}, settings {key.get("settings", {})}, {state} '
                   f'[{os.path.relpath(f.directory, folder)}]')
    lines += [f'    {stage}: in progress (partial results) [{os.path.relpath(os.path.join(root, n), folder)}]'
              for n in partial]
  return lines


def _experiment_lines(folder: str) -> list[str]:
  """Each experiment's result folders (the one `report wp` shows starred)."""
  from attn_jax.experiments import experiment_store  # pylint: disable=g-import-not-at-top  (heavy: only when listing)
  lines = []
  for name in EXPERIMENTS.names():
    shown = experiment_store.latest(folder, name)
    for directory, summary in experiment_store.find(folder, name):
      star = '*' if shown and shown[0] == directory else ' '
      lines.append(f'  {star} experiment {name}: {summary.get("n", "?")} {summary.get("split", "?")} docs, '
                   f'settings {summary["key"].get("settings", {})}, intact, models in '
                   f'{summary.get("models_folder", "?")} [{os.path.relpath(directory, folder)}]')
  return lines


def _lease_lines(root: str) -> list[str]:
  """What other processes are writing now (their leases), or left behind."""
  lines = []
  for path, holder in leases.held(root):
    reason = leases.stale_reason(path, holder)
    state = 'being computed' if reason is None else f'stale ({reason}); the next run takes it over'
    lines.append(f'  in progress: {(holder or {}).get("what", "?")} — {state} '
                 f'({leases.describe(holder)}) [{os.path.relpath(path, root)}]')
  return lines


def describe(root: str) -> str:
  if not os.path.isdir(root):
    raise AttnJaxError(f'{root} is not a folder; pass a workdir made by run.py')
  blocks = []
  busy = _lease_lines(root)
  if busy:
    blocks.append('\n'.join([f'{root}: other processes are writing here (what they finish will show below '
                             'when done):'] + busy))
  for folder in model_folders(root):
    lines = ([f'{folder}:'] + _description_lines(folder) + _training_lines(folder) + _stage_lines(folder)
             + _experiment_lines(folder))
    blocks.append('\n'.join(lines))
  if not blocks:
    return f'{root}: no attn-jax model or results found'
  return '\n\n'.join(blocks) + ('\n\n* = the results a report shows by default (most documents, intact, newest)')


def main(argv=None):
  parser = argparse.ArgumentParser(description='What workdirs hold: models, results per setting, damage.')
  parser.add_argument('workdirs', nargs='+')
  args = parser.parse_args(argv)
  try:
    print('\n\n'.join(describe(w) for w in args.workdirs))
  except AttnJaxError as e:
    errors.exit_with(e)


if __name__ == '__main__':
  console.run(main)
