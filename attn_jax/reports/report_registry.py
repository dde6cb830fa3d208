"""What the reports are made of, registered by the module of each paper.

- COMMANDS: `python -m attn_jax.report <name>`; each names the papers whose
  results it prints, so `run.py` can say which to run after a run.
- SECTIONS: a paper's part of the reproduction report (`report reproduce`).
- STAGE_ROWS: the rows a stage's summary gives in the analyses table
  (`report analyses`), measured beside published.
- STUDY_TABLES: a kind of study's table (`Study.kind`: the J&W grid's, the
  fidelity study's, S&S's, ...), `python -m attn_jax.studies report`.

Like the stage and experiment registries (`attn_jax.core.registry`), these
are read without importing what fills them: the first read imports every
module of `attn_jax.reports`. A new paper table is a function registered in
its paper's module; nothing else lists it.
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


@dataclasses.dataclass(frozen=True)
class StageRows:
  """rows: (run name, dataset, stage summary, model=) -> rows of the analyses
  table (run, statistic, measured, published, verdict); `model` is the run's
  'encoder + attention / projection', whose published numbers stand beside;
  `name` is the stage's."""
  name: str
  paper: str
  order: int
  rows: Callable


@dataclasses.dataclass(frozen=True)
class StudyTable:
  """How a kind of study is reported. write: (study, root, save_to, readme,
  reference) -> the table's rows, printed, and its block rewritten in each
  `readme` file; `save_to`: copy the small result files there first and read
  them from there; `reference`: the other side the kind compares with
  (J&W's or W&P's code, the grid, an earlier recipe), None for its default."""
  name: str
  order: int
  write: Callable


COMMANDS = Registry('report command', 'attn_jax.reports')
SECTIONS = Registry('report section', 'attn_jax.reports')
STAGE_ROWS = Registry('analysis table', 'attn_jax.reports')
STUDY_TABLES = Registry('study table', 'attn_jax.reports')


def commands_after_run(papers_run, cfg=None) -> list[Command]:
  """The report commands to suggest after a run (of config `cfg`) that ran
  `papers_run`'s stages or experiments: those for every run, then those of
  these papers that read such a run."""
  return [c for c in COMMANDS.values()
          if c.after_run or (set(c.papers) & set(papers_run) and (cfg is None or c.applies(cfg)))]
