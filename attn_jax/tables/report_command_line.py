"""`python -m attn_jax.report <command> ...`: measured vs published numbers,
and the generated Markdown blocks of README.md and docs/ made from them.

The commands are those the report modules register (`registry.COMMANDS`):
J&W's `training`, `data` and `analyses` (with S&S's rows), `wp`, `meister`,
the benchmark tables, `reproduce` (one HTML and Markdown report of
everything), and `study` (a study's table; registered by `attn_jax.studies`,
whose `python -m attn_jax.studies report` prints the same). `--readme FILE`
rewrites that table's block in FILE (a Markdown file with
`<!-- BLOCK:start -->` / `<!-- BLOCK:end -->` markers); given several
times, in each file that holds it.
"""

import argparse
import os

from attn_jax.core import errors, leases, output_folders
from attn_jax.tables.report_registry import COMMANDS


def parser() -> argparse.ArgumentParser:
  commands = COMMANDS.values()
  epilog = '\n'.join(f'  {c.name:17}{c.about}\n  {"":17}  {c.name} {c.usage}' for c in commands)
  p = argparse.ArgumentParser(prog='python -m attn_jax.report', description='Measured vs published numbers.',
                              epilog='commands:\n' + epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('table', choices=[c.name for c in commands])
  p.add_argument('runs', nargs='*', help='training, reproduce: workdirs or results/<run> folders; '
                 'data: a saved data_splits.json to show instead of measuring')
  p.add_argument('--save', help='folder to copy / write the result files into')
  p.add_argument('--save-as', action='append', default=[], dest='save_as',
                 help='training, analyses: the saved folder\'s name for each run, in order (default: the '
                 'run folder\'s name), e.g. workdirs/sst_bilstm_tanh_softmax --save results --save-as sst_bilstm')
  p.add_argument('--readme', action='append', help='rewrite the table\'s block in this Markdown file (README.md '
                 'or docs/*.md; repeatable: each file that holds the block)')
  p.add_argument('--block', help='analyses: the blocks\' name (default: analysis)')
  p.add_argument('--out', default='report', help='reproduce: the folder for index.html and REPORT.md')
  p.add_argument('--force', action='store_true', help='reproduce: write into a folder that holds files attn-jax did '
                 'not write (none of them is overwritten or removed; without it such a folder is refused)')
  p.add_argument('--text', action='append', default=[],
                 help='reproduce: a text of your own to explain with each run (repeatable)')
  p.add_argument('--root', help='study: the study\'s folder (default: workdirs/<study>)')
  p.add_argument('--reference', help='study: the other side its table compares with (see python -m '
                 'attn_jax.studies --help)')
  p.add_argument('--seeds', type=int, help='study: seeds per arm, when not the study\'s own')
  p.add_argument('--variant', help="study: the arms' config variant, e.g. 'smoke'")
  return p


def main(argv=None):
  p = parser()
  args = p.parse_args(argv)
  try:
    # A --save or --out folder that cannot be written: one line naming it and the option.
    with output_folders.writing_into(args.save, '--save'), \
        output_folders.writing_into(args.out if args.table == 'reproduce' else None, '--out'):
      COMMANDS[args.table].run(p, args, argv)
  except errors.AttnJaxError as e:
    errors.exit_with(e, 1)
  except KeyboardInterrupt:
    errors.exit_interrupted('each file is written whole or not at all; rerun the same command')
  for line in still_computing(args.runs):
    print(line)


def still_computing(paths) -> list[str]:
  """A note per result still being written under the report's folders: a
  report never waits for them, it shows what is finished."""
  lines = []
  for path in paths:
    if os.path.isdir(path):
      for lock, holder in leases.held(path):
        if not leases.is_stale(lock, holder):
          lines.append(f'note: still being computed, not shown: {(holder or {}).get("what", lock)} '
                       f'({leases.describe(holder)})')
  return lines
