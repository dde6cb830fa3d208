"""python -m attn_jax.studies {run,report} STUDY [options]; see attn_jax.studies."""

import argparse
import ast
import time

from attn_jax import config as config_lib
from attn_jax.core import errors
from attn_jax.core.errors import AttnJaxError, ConfigError
from attn_jax.studies import STUDIES, study_runner as runner
from attn_jax.core import console, output_folders


def analysis_overrides(settings) -> dict:
  """`--set KEY=VALUE` as {dotted key: Python value} (a value that is not a
  Python literal is a string). Only the analysis sections may be set: a
  study's arms fix how each model is trained."""
  overrides = {}
  for setting in settings:
    key, sep, text = setting.partition('=')
    if not sep:
      raise ConfigError(f'--set {setting!r}: write KEY=VALUE, e.g. --set analysis.sample_docs=500')
    if key.split('.')[0] not in config_lib.ANALYSIS_SECTIONS:
      raise ConfigError(f'--set {key}: only analysis settings ({", ".join(config_lib.ANALYSIS_SECTIONS)}) '
                        "can be set for a study's arms; their training is the study's definition")
    message = config_lib.unknown_override(config_lib.default_config('sst', 'bilstm'), [key])
    if message:
      raise ConfigError(message)
    try:
      overrides[key] = ast.literal_eval(text)
    except (ValueError, SyntaxError):
      overrides[key] = text
  return overrides


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description='Run or report a study (attn_jax.studies).')
  parser.add_argument('action', choices=['run', 'report'])
  parser.add_argument('study', choices=sorted(STUDIES))
  parser.add_argument('--root', default=None, help='default: workdirs/<study>')
  parser.add_argument('--only', default=None, help='comma-separated glob patterns of arm names')
  parser.add_argument('--seeds', type=int, default=None,
                      help='seeds per arm (default: the study\'s; another count trains, and reports, '
                      'in <arm>-<S>seeds beside the study\'s own folders)')
  parser.add_argument('--variant', default=None,
                      help="every arm at this config variant, e.g. 'smoke' (in <arm>-smoke folders)")
  parser.add_argument('--reuse', action='append', default=[],
                      help='run: the root of another study (repeatable) whose arms with the same '
                      'training config lend their trained models: trained once, analysed here')
  parser.add_argument('--one-at-a-time', action='store_true',
                      help="run: each arm's models trained, evaluated and analysed alone, one after "
                      'another (the same models as in one program), so each is finished, and can be '
                      'saved with report --save, before the next starts: for machines that end sooner '
                      'than an arm. A model whose saved records (report --save) are in its folder, or in '
                      "a --reuse root's, is never trained again")
  parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                      help="run: an analysis setting for every arm (repeatable), e.g. "
                      "analysis.sample_docs=500: analyse a seeded sample of the test split")
  parser.add_argument('--no-progress', action='store_true', help='no progress bars (logs)')
  parser.add_argument('--save', default=None, help='report: copy the small result files here')
  parser.add_argument('--reference', default=None,
                      help='report: J&W\'s own code on the same inputs (python benchmarks/original_code/jain_wallace_reference.py), '
                      'shown beside the J&W grid when it holds any arm (default: jw_reference beside the '
                      'folder the table is read from, e.g. results/jw_reference); for wp_table2, W&P\'s code '
                      '(benchmarks/original_code/wiegreffe_pinter_reference.py; default: wp_reference beside it); for vector_seeds, the J&W grid '
                      'trained with the same recipe (default: jw_grid beside it); for ss_models, the runs of '
                      'the recipe before S&S\'s code was followed (default: ss_models_previous beside it)')
  parser.add_argument('--readme', action='append', help='report: rewrite the table\'s block in this Markdown '
                      'file (repeatable: each file that holds it)')
  args = parser.parse_args(argv)
  if args.seeds is not None and args.seeds < 1:  # 0 read as "the study's", -1 as one: neither was asked for
    errors.exit_with(f'--seeds={args.seeds}: give the number of seeds per arm, 1 or more (or leave it out for the '
                     f'study\'s own, {STUDIES[args.study].seeds})')
  try:
    overrides = analysis_overrides(args.set)
  except AttnJaxError as e:
    errors.exit_with(e)
  if args.no_progress:
    overrides['train.progress'] = False
  study = STUDIES[args.study].with_seeds(args.seeds).with_variant(args.variant)
  root = args.root or f'workdirs/{study.name}'
  try:
    if args.action == 'run':
      started = time.time()
      runner.run(study, root, args.only, None, overrides or None, reuse=args.reuse,
                 one_at_a_time=args.one_at_a_time)
      print(f'{study.name}: done in {time.time() - started:.0f} s; results in {root} '
            f'(report: python -m attn_jax.studies report {study.name} --root={root})')
    else:
      from attn_jax.tables import studies as study_tables  # pylint: disable=g-import-not-at-top
      with output_folders.writing_into(args.save, '--save'):
        study_tables.write(study, root, args.save, args.readme, args.reference)
  except AttnJaxError as e:
    errors.exit_with(e)
  except KeyboardInterrupt:
    errors.exit_interrupted('finished arms and seeds are kept; rerun the same command to resume' if args.action ==
                            'run' else 'nothing was written but whole files')


if __name__ == '__main__':
  console.run(main)
