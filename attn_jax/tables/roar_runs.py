"""`python -m attn_jax.report faithfulness RUN ...`: which importance measure
is faithful, for each run — ROAR's and recursive ROAR's retraining curves
(experiments `roar`, `recursive_roar`) with their areas against random (ERASER's erasure
metrics, a stage, are in `report analyses` and `attn_jax.tables.faithfulness`); a
study's seeds are tabulated by `python -m attn_jax.studies report roar`."""

import os

import numpy as np

from attn_jax.core import errors
from attn_jax.core.registry import EXPERIMENTS
from attn_jax.experiments import experiment_store
from attn_jax.tables import render
from attn_jax.tables.common import plain
from attn_jax.tables.faithfulness_roar_report import EXPERIMENTS as ROAR_EXPERIMENTS, areas, seed_curves
from attn_jax.tables.report_registry import COMMANDS, SECTIONS, Command, PaperSections

HEADER = ['run', 'experiment', 'measure', 'accuracy at k = 0 … 1', 'ABC', 'RACU']


def roar_rows(name: str, summaries: dict) -> list[list[str]]:
  """Rows of one run's ROAR experiments: per measure its curve and areas against random."""
  out = []
  for experiment, title in ROAR_EXPERIMENTS:
    if experiment not in summaries:
      continue
    ks, curves = seed_curves(summaries[experiment])
    found = areas(ks, curves) if 'random' in curves else {}
    for measure, y in curves.items():
      abc, racu = found.get(measure, (np.nan, np.nan))
      out.append([name, title, measure, ' '.join('–' if np.isnan(v) else f'{v:.3f}' for v in y),
                  '–' if np.isnan(abc) else f'{abc:.3f}', '–' if np.isnan(racu) else f'{racu:.3f}'])
  return out


def _rows(paths: list[str]) -> list[list[str]]:
  rows = []
  for path in paths:
    if not os.path.isdir(path):
      raise errors.NothingToReport(f'{path} is not a run folder; give the --workdir of a run')
    rows += roar_rows(os.path.basename(os.path.normpath(path)), experiment_store.load_summaries(path))
  return rows


def _command(parser, args, argv) -> None:
  del parser, argv
  rows = _rows(args.runs)
  if not rows:
    raise errors.NothingToReport(
        f'nothing to report: {", ".join(args.runs)} hold no ROAR results; run them first (python run.py ... '
        f'--config.experiments={",".join(e.name for e in EXPERIMENTS.of_paper("faithfulness"))})')
  print(plain([HEADER] + rows))
  print('ABC = ∫(random − measure) dk, RACU = ABC / ∫(random − random(1)) dk clipped to [−1, 1] '
        '(Madsen et al. 2022); one model per point: a study gives intervals over seeds')


COMMANDS.register(Command('faithfulness', 55, 'RUN ...',
                          "ROAR's and recursive ROAR's accuracy curves and areas against random",
                          _command, papers=('faithfulness',),
                          # ERASER, a stage, is in `report analyses`: this one reads runs of the experiments.
                          applies=lambda cfg: bool({e.name for e in EXPERIMENTS.of_paper('faithfulness')}
                                                   & {n.strip() for n in str(cfg.experiments).split(',')})))


def _sections(runs) -> list[render.Section]:
  rows = []
  for r in runs:
    rows += roar_rows(r.name, experiment_store.load_summaries(r.path))
  if not rows:
    return []
  return [render.Section('Which measure is faithful? Removal with retraining (ROAR)', [
      render.Text('Test accuracy of models retrained with each measure\'s top k % of words masked '
                  '(docs/faithfulness.md); ABC is the area between random\'s curve and the measure\'s.'),
      render.Table([HEADER] + rows, ())])]


SECTIONS.register(PaperSections(
    'faithfulness_roar', 'faithfulness', 60, _sections,
    missing=lambda runs: None,  # retraining many models: asked for by name, never by default
    ran=lambda r: ', '.join(sum(r.of_paper('faithfulness'), [])) or 'not run'))
