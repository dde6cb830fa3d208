"""Checks `papers/published.py`'s J&W grids against J&W's own files.

    python benchmarks/original_code/jain_wallace_published_check.py --jw-repo=~/AttentionExplanation

Reads `graph_outputs/evaluate/<config>.json` and
`graph_outputs/CorrStats_kendalltau/<config>.csv` at the checkout's HEAD
(rows `al` = τ(α, gradient), `ag` = τ(α, LOO), `gl` = τ(gradient, LOO):
the labels are not what they say, see J&W's
`Trainers/PlottingBC.py::plot_correlation_between_grad_and_loo`) for every key of
`JAIN_WALLACE_GRID` and `JAIN_WALLACE_QA_GRID`, and prints each mismatch
beyond the rounding of the transcription; exits 1 if there is any.
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys

from attn_jax.papers import published

DATASETS = {'babi1': 'babi_1', 'babi2': 'babi_2', 'babi3': 'babi_3', '20news': '20News_sports', 'imdb': 'imdb'}
ENCODERS = {'bilstm': 'lstm', 'cnn': 'cnn(1,3,5,7)', 'average': 'average'}
ROWS = {'attention_gradient': 'al', 'attention_loo': 'ag', 'gradient_loo': 'gl'}


def show(repo: str, path: str) -> str:
  return subprocess.run(['git', '-C', repo, 'show', f'HEAD:{path}'], capture_output=True, text=True,
                        check=True).stdout


def mismatches(repo: str, grid: dict) -> list[str]:
  out = []
  for (dataset, encoder, attention), paper in grid.items():
    name = f'{DATASETS.get(dataset, dataset)}+{ENCODERS[encoder]}+{attention}'
    evaluate = json.loads(show(repo, f'graph_outputs/evaluate/{name}.json'))
    for metric, value in paper.get('test', {}).items():
      theirs = evaluate.get({'f1_pos': '1/f1-score'}.get(metric, metric))
      if theirs is not None and abs(theirs - value) > 6e-4:
        out.append(f'{name} {metric}: published.py {value}, J&W {theirs}')
    rows = {r['']: r for r in csv.DictReader(io.StringIO(show(repo, f'graph_outputs/CorrStats_kendalltau/{name}.csv')))}
    for pair, (mean, std, sig) in paper.get('tau', {}).items():
      row = rows[ROWS[pair]]
      if mean is None:
        continue
      if (abs(float(row['mean']) - mean) > 6e-5 or abs(float(row['std']) - std) > 6e-5
          or abs(float(row['pval_sig']) - sig) > 0.006):
        out.append(f'{name} {pair}: published.py {(mean, std, sig)}, J&W {row["mean"]}, {row["std"]}, {row["pval_sig"]}')
  return out


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--jw-repo', required=True, help='a git checkout of successar/AttentionExplanation')
  args = parser.parse_args()
  repo = os.path.expanduser(args.jw_repo)
  probe = subprocess.run(['git', '-C', repo, 'cat-file', '-e', 'HEAD:graph_outputs/evaluate'], capture_output=True,
                         text=True, check=False)
  if not os.path.isdir(repo) or probe.returncode != 0:
    sys.exit(f'error: {repo} is not a git checkout of successar/AttentionExplanation (no graph_outputs/evaluate '
             'at HEAD): clone it (git clone https://github.com/successar/AttentionExplanation) and pass that folder')
  found = []
  for name in ('JAIN_WALLACE_GRID', 'JAIN_WALLACE_QA_GRID'):
    grid = getattr(published, name)
    problems = mismatches(repo, grid)
    print(f'{name}: {len(grid)} configurations, {len(problems)} mismatch(es)')
    found += problems
  print('\n'.join(found))
  sys.exit(1 if found else 0)


if __name__ == '__main__':
  main()
