"""The registries are the one list of stages, experiments and report
commands: the config, its help, the report command line and run.py's
closing lines all name what they hold, and nothing else."""

import pytest

from attn_jax import config as config_lib, papers
from attn_jax.config.serrano_smith_config import ss_config
from attn_jax.core.registry import EXPERIMENTS, STAGES, Registry
from attn_jax.tables import report_command_line as report_cli
from attn_jax.tables.report_registry import COMMANDS, SECTIONS, TABLES, KINDS, Table, tables

import helpers



def test_every_entry_names_a_paper_and_runs_after_what_it_requires():
  for registry in (STAGES, EXPERIMENTS):
    order = registry.names()
    for entry in registry.values():
      assert entry.paper in papers.PAPERS
      assert all(order.index(r) < order.index(entry.name) for r in entry.requires), entry.name
  assert {s.paper for s in SECTIONS.values()} == set(papers.PAPERS)
  assert {t.name for t in tables('stage')} <= set(STAGES.names())


def test_the_config_derives_its_lists_from_the_registries():
  cfg = config_lib.default_config('sst', 'bilstm')
  # A config runs its paper's stages by default (J&W's here, Meister's for the
  # Transformer); the synthetic demonstration runs every stage.
  assert config_lib.ANALYSES == STAGES.names()
  assert cfg.analyses == ','.join(s.name for s in STAGES.of_paper('jw'))
  assert config_lib.default_config('imdb', 'transformer').analyses == ','.join(
      s.name for s in STAGES.of_paper('meister'))
  assert config_lib.default_config('synthetic', 'bilstm').analyses == ','.join(STAGES.names())
  assert set(cfg.experiment) == {n for n, e in EXPERIMENTS.items() if e.section.defaults('sst', 'bilstm', '')}
  sections = {n for n, s in STAGES.items() if s.section.defaults('sst', 'bilstm', '')}
  assert {k for k in cfg.analysis if k in STAGES} == sections
  for name, entry in STAGES.items():
    for key in entry.section.choices:
      assert f'analysis.{name}.{key}' in config_lib.CHOICES
      assert config_lib.get_key(cfg, f'analysis.{name}.{key}') in entry.section.choices[key]


def test_the_help_names_every_stage_and_experiment_under_its_paper():
  key_help = config_lib.KEY_HELP
  text = config_lib.describe(config_lib.default_config('sst', 'bilstm'), width=1000)
  for registry, key in ((STAGES, 'analyses'), (EXPERIMENTS, 'experiments')):
    for paper in {e.paper for e in registry.values()}:
      names = ','.join(e.name for e in registry.of_paper(paper))
      assert f'{names} ({papers.PAPERS[paper].label})' in key_help[key]
      assert f'{names} ({papers.PAPERS[paper].label})' in text


def test_the_report_command_line_offers_the_registered_commands(capsys):
  parser = report_cli.parser()
  choices = next(a.choices for a in parser._actions if a.dest == 'table')  # pylint: disable=protected-access
  assert list(choices) == list(COMMANDS.names())
  with pytest.raises(SystemExit):
    report_cli.main(['nonsense'])
  assert 'invalid choice' in capsys.readouterr().err


def test_run_py_closes_with_the_report_of_every_paper_it_ran(tmp_path):
  run_py = helpers.run_py_module()
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  cfg.experiments = ','.join(EXPERIMENTS.names())
  lines = run_py.next_commands(cfg, str(tmp_path / 'w'), None).splitlines()
  suggested = [line.split()[-2] for line in lines if 'attn_jax.report ' in line]
  every_paper = {e.paper for r in (STAGES, EXPERIMENTS) for e in r.values()}
  assert suggested == [c.name for c in COMMANDS.values()
                       if c.after_run or (set(c.papers) & every_paper and c.applies(cfg))]
  assert {p for c in COMMANDS.values() if c.name in suggested for p in c.papers} == every_paper
  assert 'ss' not in suggested  # S&S's model tables read S&S's models only ...
  ss_cfg = ss_config('imdb_ratings', 'han', 'smoke')
  lines = run_py.next_commands(ss_cfg, str(tmp_path / 'w'), None).splitlines()
  assert 'ss' in [line.split()[-2] for line in lines if 'attn_jax.report ' in line]  # ... and theirs
  cfg.analyses, cfg.experiments = '', ''
  lines = run_py.next_commands(cfg, str(tmp_path / 'w'), None).splitlines()
  assert [line.split()[-2] for line in lines if 'attn_jax.report ' in line] == ['training']


def test_a_registry_refuses_a_name_taken_by_another_module_and_an_unknown_paper():
  registry = Registry('thing', 'attn_jax.core')

  class Entry:
    def __init__(self, name, paper='jw', order=0):
      self.name, self.paper, self.order = name, paper, order

  registry.register(Entry('a'))
  with pytest.raises(ValueError, match='names paper'):
    registry.register(Entry('b', paper='nobody'))
  assert registry.unknown('aa') == "unknown thing 'aa' (did you mean 'a'?)"


def test_one_registry_holds_every_table_a_report_prints():
  kinds = {t.kind for t in TABLES.values()}
  assert kinds == set(KINDS)  # paper tables, stage rows, study tables, benchmark tables
  from attn_jax.studies import STUDIES  # pylint: disable=g-import-not-at-top
  assert {s.kind for s in STUDIES.values()} <= {t.name for t in tables('study')}
  for t in tables('paper') + tables('benchmark'):
    assert t.command in COMMANDS, t.name
  with pytest.raises(ValueError, match='kind .rows. is not one of'):
    Table('x', 'rows', 1, lambda runs: [])
