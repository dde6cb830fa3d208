"""The vector-workers study's table: the same five model seeds from vectors
built with one gensim thread and with two, each statistic's interval over
the seeds side by side, the equivalence test of the difference (TOST), and J&W's
published value (attn_jax.studies.vector_workers).
"""

import os

from attn_jax.tables import jain_wallace_reference
from attn_jax.tables.common import plain, root_of, with_notes, write_blocks
from attn_jax.tables.report_registry import TABLES, Table
from attn_jax.tables.studies import embeddings_cell, published_values, saved, totals
from attn_jax.tables.study_results import STATISTICS, cell, collect_arm

COLUMNS = ('accuracy', 'f1_pos', 'roc_auc', 'tau_attention_gradient', 'tau_attention_loo', 'tau_gradient_loo')


def _tost(a: list, b: list, stat: str) -> str:
  """The TOST verdict of the last arm against the first (jain_wallace_reference.verdict)."""
  return jain_wallace_reference.verdict(jain_wallace_reference.equivalence(
      [x for x in b if x is not None], [x for x in a if x is not None], stat))


def rows(study, root: str) -> list[list[str]]:
  """Per statistic: each arm's mean ± 95 % half-width (n), the difference
  (last arm − first), its equivalence test, and J&W's published value."""
  arms = list(study.arms)
  found = [collect_arm(os.path.join(root, study.folder_name(a))) for a in arms]
  paper = published_values(arms[0])
  threads = [a.overrides['vectors.workers'] for a in arms]
  table = [['statistic', *[f'{n} thread{"s" * (n > 1)}: {a.name} (n)' for n, a in zip(threads, arms)],
            f'difference ({threads[-1]} − {threads[0]})', 'verdict', 'J&W published']]
  for stat in COLUMNS:
    cis = [f['ci'][stat] for f in found]
    difference = (f'{cis[-1]["mean"] - cis[0]["mean"]:+.3f}' if cis[0]['n'] and cis[-1]['n'] else '–')
    table.append([STATISTICS[stat][0], *[f'{cell(ci)} ({ci["n"]})' for ci in cis], difference,
                  _tost(found[0]['values'][stat], found[-1]['values'][stat], stat),
                  '–' if paper.get(stat) is None else f'{paper[stat]:.3f}'])
  return table


def notes(study, root: str) -> list[str]:
  return ([f'{a.name}: vectors.workers={a.overrides["vectors.workers"]}, '
           f'{embeddings_cell(os.path.join(root, study.folder_name(a)))} vectors' for a in study.arms]
          + ['mean ± 95 % Student-t half-width over the model seeds (n); '
             f'{jain_wallace_reference.MARGINS_TEXT.replace("attn-jax − the other side", "the last arm − the first")}; '
             'everything but the vectors\' threads is the default SST BiLSTM + tanh config'])


def table(study, root: str, save_to, readme, reference) -> list[list[str]]:
  del reference  # nothing to compare with but the arms
  root = saved(study, root, save_to)
  made, lines = rows(study, root), notes(study, root) + totals(study, root)
  print(plain(made) + '\n' + '\n'.join(lines))
  if readme:
    here = root_of(readme)
    source = os.path.relpath(root, here)
    write_blocks(readme, f'{study.name}-table', with_notes(made, lines),
                 f'python -m attn_jax.studies report {study.name} --root={source}',
                 [f'{source}/<arm>/<seed>/eval.json', f'{source}/<arm>/<seed>/analyses/kendall/*/summary.json',
                  f'{source}/study.json'], optional=True)
  return made


TABLES.register(Table('vector_workers', 'study', 35, table))
