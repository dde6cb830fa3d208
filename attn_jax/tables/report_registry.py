"""What the reports are made of, registered by the module of each paper.

- COMMANDS: `python -m attn_jax.report <name>`; each names the papers whose
  results it prints, so `run.py` can say which to run after a run.
- TABLES: every table a report prints (`Table`), whatever it is made
  from: a paper's table of run folders, a stage's rows in the analyses
  table, a kind of study's table, a benchmark's table.
- SECTIONS: a paper's part of the reproduction report (`report reproduce`),
  made of its tables.

Like the stage and experiment registries (`attn_jax.core.registry`), these
are read without importing what fills them: the first read imports every
module of `attn_jax.tables`. A new table is a rows function and one
`TABLES.register(Table(...))` in the module of its paper (or its study, its
benchmark); nothing else lists it.
"""

import dataclasses
from typing import Callable

from attn_jax.core.registry import Registry


@dataclasses.dataclass(frozen=True)
class Command:
  """A sub-command of `python -m attn_jax.report`.

  usage: its arguments, for the help. about: one line on what it prints.
  run: (parser, args, argv) -> None; errors a user can act on raise AttnJaxError.
  papers: the papers whose results it reports (`run.py` lists it after a run
    of their stages or experiments); () for tables of no paper.
  after_run: listed by `run.py` after every run (the training table).
  applies: (run config) -> whether it reads such a run (S&S's model tables
    read S&S's models only).
  """
  name: str
  order: int
  usage: str
  about: str
  run: Callable
  papers: tuple = ()
  after_run: bool = False
  applies: Callable = lambda cfg: True


@dataclasses.dataclass(frozen=True)
class PaperSections:
  """A paper's sections of the reproduction report.

  sections: (runs) -> [render.Section]; [] when no run holds its results.
  missing: (runs) -> a line saying how to run what no run holds, or None.
  ran: (run) -> what the run holds of this paper, for the overview table.
  """
  name: str
  paper: str
  order: int
  sections: Callable
  missing: Callable
  ran: Callable


# What a table is made from, and so what its `rows` takes.
KINDS = {
    'paper': 'rows(runs) -> rows (header first) of run folders; printed by its `command`; its name is its '
             'README block, its `title` its heading in the HTML report',
    'stage': "rows(run name, dataset, stage summary, model=) -> rows of the analyses table (run, statistic, "
             "measured, published, verdict); its name is the stage's",
    'study': 'rows(study, root, save_to, readme, reference) -> rows, printed and written to each readme; its '
             'name is the kind of study it reports (`Study.kind`)',
    'benchmark': 'rows(records) -> rows of the benchmark records (the --out JSON files) given to its `command`; '
                 'its name is its README block',
}


@dataclasses.dataclass(frozen=True)
class Table:
  """One table a report prints, registered where it is made.

  Attributes:
    name: the README block it fills (paper and benchmark tables:
      `<!-- name:start -->`), the stage whose rows it gives, or the kind of
      study it reports.
    kind: what it is made from (a key of `KINDS`, which says what `rows` takes).
    order: where it prints among its kind (and among its command's tables).
    rows: the function that makes it (its arguments: `KINDS[kind]`).
    paper: whose numbers it shows (a key of `attn_jax.papers.PAPERS`), or None.
    title: its heading in the HTML report (paper tables); the line its
      command's help shows (benchmark tables).
    notes: (runs) -> the lines under it (paper tables).
    command: the report command that prints it (paper and benchmark tables).
    usage: that command's arguments (benchmark tables, whose command it makes).
  """
  name: str
  kind: str
  order: int
  rows: Callable
  paper: str | None = None
  title: str = ''
  notes: Callable = lambda runs: []
  command: str = ''
  usage: str = ''

  def __post_init__(self):
    if self.kind not in KINDS:
      raise ValueError(f'table {self.name!r}: kind {self.kind!r} is not one of {", ".join(KINDS)}')


# `attn_jax.studies` registers the `study` command (its table of any study).
COMMANDS = Registry('report command', 'attn_jax.tables', also=('attn_jax.studies',))
TABLES = Registry('report table', 'attn_jax.tables')
SECTIONS = Registry('report section', 'attn_jax.tables')


def tables(kind: str, command: str | None = None) -> list[Table]:
  """The registered tables of one kind, in their order.

  Args:
    kind: a key of `KINDS`.
    command: only those this report command prints; None: all of the kind.

  Returns:
    The `Table` entries, by `order`.
  """
  return [t for t in TABLES.values() if t.kind == kind and (command is None or t.command == command)]


def blocks(command: str) -> tuple[str, ...]:
  """The README blocks of a command's paper tables, in print order."""
  return tuple(t.name for t in tables('paper', command))


def titles(command: str) -> dict[str, str]:
  """block -> HTML heading of a command's paper tables."""
  return {t.name: t.title for t in tables('paper', command)}


def made_tables(command: str, runs: list, notes=()) -> dict:
  """{block: (rows, notes)} of the paper tables `command` prints, for `runs`,
  in order; `notes` go under every table, before its own."""
  return {t.name: (t.rows(runs), list(notes) + t.notes(runs)) for t in tables('paper', command)}


def commands_after_run(papers_run, cfg=None) -> list[Command]:
  """The report commands to suggest after a run (of config `cfg`) that ran
  `papers_run`'s stages or experiments: those for every run, then those of
  these papers that read such a run."""
  return [c for c in COMMANDS.values()
          if c.after_run or (set(c.papers) & set(papers_run) and (cfg is None or c.applies(cfg)))]
