"""Train (or restore) a model, evaluate it and analyse it.

    python run.py --config=configs/NAME.py[:VARIANT] [--config.KEY=VALUE ...]
                  [--workdir=DIR] [--output_dir=DIR]

Data: $ATTN_JAX_DATA or --config.data.manual_dir (docs/usage.md); a rerun resumes its workdir.
"""

import ast
import glob
import os
import shlex
import sys
import time

from absl import app, flags, logging
from ml_collections import config_flags

from attn_jax import config as config_lib, experiments, pipeline
from attn_jax.core import atomic_io, errors, hosts
from attn_jax.core.errors import AttnJaxError
from attn_jax.core.registry import DATASETS, EXPERIMENTS, STAGES
from attn_jax.papers import PAPERS
from attn_jax.tables.report_registry import commands_after_run
from attn_jax.workdirs import model_axis
from attn_jax.stages.stage_runner import with_requirements_of
from attn_jax.core import console

CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'configs')

_CONFIG = config_flags.DEFINE_config_file(
    'config', None, 'Config file, e.g. configs/sst_bilstm.py:smoke.',
    lock_config=True)
_WORKDIR = flags.DEFINE_string(
    'workdir', None, 'Where checkpoints and results go (default: workdirs/<name>_<attention>_<projection>).')
_OUTPUT_DIR = flags.DEFINE_string(
    'output_dir', None, 'Where eval.json and analyses/ go (default: the workdir).')
_DISTRIBUTED = flags.DEFINE_string(
    'distributed', None, 'Many hosts: auto, or ADDRESS:PORT,HOSTS,INDEX (docs/usage.md).')
flags.mark_flag_as_required('config')


def _configs_help() -> str:
  """The files in configs/ by dataset; a lone file's docstring says what it is."""
  groups, serrano_smith, question_answering = {}, [], []
  for path in sorted(glob.glob(os.path.join(CONFIGS, '*.py'))):
    name = os.path.basename(path)[:-3]
    if name.endswith(('_han', '_flan')):
      serrano_smith.append(name)
    elif name in DATASETS and DATASETS[name].paired:
      question_answering.append(name)
    else:
      groups.setdefault(name.split('_')[0], []).append(name)
  lines = ["Configs (configs/NAME.py, NAME = dataset_encoder: J&W's recipe):"]
  for group, names in groups.items():
    about = ''
    if len(names) == 1:
      with open(os.path.join(CONFIGS, names[0] + '.py')) as f:
        about = '  ' + (ast.get_docstring(ast.parse(f.read())) or '').split('\n')[0]
    lines.append(f'  {group:10}' + ' '.join(names) + about)
  if question_answering:
    lines.append(f'  {"QA/NLI":10}' + ' '.join(question_answering)
                 + "  (J&W's QA model; --config.model.encoder=bilstm|cnn|average)")
  if serrano_smith:
    lines.append(f'  {"S&S":10}' + ' '.join(serrano_smith) + '  (VARIANT: [rnn|conv|noenc][,previous][,smoke])')
  return '\n'.join(lines)


# absl's --help / --helpfull print the main module's docstring.
__doc__ += _configs_help() + '\n' + config_lib.describe(
    config_lib.default_config('sst', 'bilstm')) + '\n'


def _config_spec(argv):
  """The value of --config (`--config=F` or `--config F`), or None."""
  for i, arg in enumerate(argv):
    if arg.startswith('--config='):
      return arg.split('=', 1)[1]
    if arg == '--config' and i + 1 < len(argv):
      return argv[i + 1]
  return None


def _fail(message):
  errors.exit_with(message, 2)


def _text(path: str) -> str:
  with open(path, encoding='utf-8', errors='replace') as f:
    return f.read()


def _parse_flags(argv):
  """absl's parser, with config-file problems reported in one line."""
  if '-h' in argv[1:]:  # absl knows only --help and -?
    argv = [a if a != '-h' else '--help' for a in argv]
  spec = _config_spec(argv)
  path = spec.partition(':')[0] if spec else None
  if spec and not os.path.isfile(path):
    _fail(f'config file {path!r} not found; the configs are in configs/ '
          '(e.g. --config=configs/sst_bilstm.py; python run.py --help lists them)')
  if spec and not path.endswith('.py'):
    _fail(f'config file {path!r} is not a Python file (.py): a config is a .py file defining get_config() '
          '(configs/ has working ones)')
  if spec and 'get_config' not in _text(path):
    _fail(f'config file {path!r} defines no get_config(): a config is a .py file whose get_config() returns '
          'the ml_collections.ConfigDict of the run (configs/ has working ones)')
  if spec:  # import and call get_config once here: whatever the file does wrong is one line, not absl's traceback
    try:
      config_lib.load_file(spec)
    except AttnJaxError as e:
      _fail(e)
  logging.set_verbosity(logging.ERROR)  # config_flags warns of a None config in two more lines
  try:
    parsed = flags.FLAGS(argv)
  except AttnJaxError as e:  # raised by get_config, e.g. an unknown variant
    _fail(e)
  except SyntaxError as e:  # the config file does not parse
    _fail(f'config file {e.filename}, line {e.lineno}: {e.msg}; fix the file (configs/ has working ones)')
  except flags.Error as e:  # e.g. --config.train.epochs=abc: one line, not absl's "FATAL" two
    if spec and 'must have a value other than None' in str(e):  # get_config() returned nothing
      _fail(f'config file {spec.partition(":")[0]!r}: get_config() returned None; it must return the '
            'ml_collections.ConfigDict of the run (configs/ has working ones)')
    _fail(f'{e}; `python run.py --help` lists the config keys with their values')
  except (KeyError, AttributeError):
    overrides = [a[len('--config.'):].split('=', 1)[0] for a in argv if a.startswith('--config.')]
    message = spec and config_lib.unknown_override(config_lib.load_file(spec), overrides)
    if not message:
      raise
    _fail(message)
  return parsed


def papers_run(cfg) -> set[str]:
  """The papers whose stages or experiments `cfg` runs."""
  try:
    stages = with_requirements_of(config_lib.analyses(cfg) + experiments.stage_requirements(cfg))
    names = config_lib.experiments(cfg)
  except AttnJaxError:
    return set()
  return {STAGES[s].paper for s in stages} | {EXPERIMENTS[e].paper for e in names}


def next_commands(cfg, workdir: str, output_dir: str | None) -> str:
  """What to run after a run: the report commands of the papers it ran
  (`attn_jax.tables.report_registry.COMMANDS`) and the listing of its files."""
  outs = pipeline.output_dirs(model_axis.members(cfg, workdir), workdir, output_dir)
  runs = ' '.join(shlex.quote(o) for o in outs)
  listed = [workdir] + ([output_dir] if output_dir and output_dir != workdir else [])
  reports = [f'python -m attn_jax.report {c.name} {runs}' for c in commands_after_run(papers_run(cfg), cfg)]
  return '\n'.join([f'{"report:" if i == 0 else "":10}{line}' for i, line in enumerate(reports)] +
                   [f'contents: python -m attn_jax.contents {shlex.quote(d)}' for d in listed] +
                   _more_analyses(cfg))


def _more_analyses(cfg) -> list[str]:
  """How to add the stages this config did not run (other papers' analyses)."""
  try:
    ran = config_lib.analyses(cfg)
  except AttnJaxError:
    return []
  others = [s for s in config_lib.usable_stages(cfg) if s not in ran]  # what the model and data allow
  if not others:
    return []
  groups = ', '.join(f'{",".join(s for s in others if STAGES[s].paper == p)} ({PAPERS[p].label})'
                     for p in dict.fromkeys(STAGES[s].paper for s in others))
  return [f'more:     the same command with --config.analyses={",".join(list(ran) + others)} '
          f'adds {groups}; finished stages are reused']


def run_pipeline(cfg, workdir: str, output_dir: str | None) -> None:
  """`pipeline.run`, with what a user can act on in one line, not a traceback."""
  started = time.time()
  try:
    pipeline.run(cfg, workdir, output_dir=output_dir)
  except AttnJaxError as e:
    _fail(e)
  except OSError as e:  # a full disk or a read-only path met outside atomic_io
    if not atomic_io.is_storage_error(e):
      raise
    _fail(atomic_io.storage_error(e.filename or output_dir or workdir, e))
  except KeyboardInterrupt:
    print('\ninterrupted: what finished is kept; rerun the same command to resume from the latest checkpoint',
          file=sys.stderr)
    sys.exit(130)
  outs = pipeline.output_dirs(model_axis.members(cfg, workdir), workdir, output_dir)
  where = ', '.join(outs) if len(outs) <= 3 else f'{len(outs)} folders under {output_dir or workdir}'
  print(f'done in {time.time() - started:.0f} s; results in {where} (eval.json, analyses/'
        + (', experiments/' if cfg.experiments.strip() else '') + ')')
  print(next_commands(cfg, workdir, output_dir))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f'unexpected arguments: {argv[1:]}')
  logging.set_verbosity(logging.WARNING)
  cfg = _CONFIG.value
  config_lib.none_from_command_line(cfg)
  try:
    hosts.initialize(_DISTRIBUTED.value)
  except AttnJaxError as e:
    _fail(e)
  workdir = _WORKDIR.value or pipeline.default_workdir(cfg)
  print(f'workdir: {workdir}' + (f'; results: {_OUTPUT_DIR.value}' if _OUTPUT_DIR.value else ''))
  try:
    run_pipeline(cfg, workdir, _OUTPUT_DIR.value)
  except SystemExit as e:
    if e.code not in (2, 130):  # a one-line error, Ctrl-C
      raise
    errors.leave(e.code)


if __name__ == '__main__':
  console.run(lambda: app.run(main, flags_parser=_parse_flags))
