"""A copy of J&W's repository that runs under a current PyTorch, made by
changing as little as possible.

`prepare(repo, dest)` copies the Python files of the user's checkout of
successar/AttentionExplanation into `dest/Transparency/` (the package name
their imports use) and applies `CHANGES` to the copy; the checkout itself is
never touched and the project ships none of J&W's code. Each change is an
exact replacement of one line of theirs: if an anchor is missing (another
commit of their repository), `prepare` stops and names the file and line.
What no longer installs (allennlp 0.8.3, torchtext, spaCy 2's `en` model) is
stood in for by `benchmarks/original_code/jain_wallace_shims/`, not patched.
"""

import dataclasses
import json
import os
import shutil
import subprocess

# The files J&W's binary-classification runs import (plus their licence).
FILES = (
    'LICENSE', 'README.md', '__init__.py', 'configurations.py', 'ExperimentsBC.py',
    'Trainers/__init__.py', 'Trainers/DatasetBC.py', 'Trainers/TrainerBC.py', 'Trainers/PlottingBC.py',
    'common_code/__init__.py', 'common_code/common.py', 'common_code/kendall_top_k.py',
    'common_code/metrics.py', 'common_code/plotting.py',
    'model/__init__.py', 'model/Binary_Classification.py', 'model/LR.py', 'model/modelUtils.py',
    'model/modules/Attention.py', 'model/modules/Decoder.py', 'model/modules/Encoder.py',
    'preprocess/vectorizer.py',
)


@dataclasses.dataclass(frozen=True)
class Change:
  file: str
  old: str
  new: str
  why: str
  count: int = 1  # how many times the line occurs (all are replaced)
  what: str = ''  # the change in words (the docs' table)


CHANGES = (
    Change('common_code/common.py', 'from IPython.core.display import HTML, display',
           'from IPython.display import HTML, display',
           'IPython >= 8 no longer exports `display` from IPython.core.display', what='import `HTML`, `display` from `IPython.display`'),
    Change('common_code/metrics.py', 'from pandas.io.json.normalize import nested_to_record',
           'from pandas.io.json._normalize import nested_to_record',
           'pandas >= 1.0 moved nested_to_record', what='import `nested_to_record` from `pandas.io.json._normalize`'),
    Change('model/modules/Attention.py', "attn_odds.masked_fill_(masks, -float('inf'))",
           "attn_odds.masked_fill_(masks.bool(), -float('inf'))",
           'PyTorch 2 rejects uint8 masks in masked_fill_ (deprecated since 1.2); same positions masked', what='attention mask passed to `masked_fill_` as `.bool()`'),
    Change('model/Binary_Classification.py', "log_attn.masked_fill_(data.masks.unsqueeze(1), -float('inf'))",
           "log_attn.masked_fill_(data.masks.unsqueeze(1).bool(), -float('inf'))",
           'the same, in the adversary (optimisation loop and final attention)', count=2, what='the adversary\'s mask as `.bool()`'),
    Change('model/modules/Encoder.py',
           'packseq = nn.utils.rnn.pack_padded_sequence(embedding, lengths, batch_first=True, '
           'enforce_sorted=False)',
           'packseq = nn.utils.rnn.pack_padded_sequence(embedding, lengths.cpu(), batch_first=True, '
           'enforce_sorted=False)',
           'PyTorch >= 1.7 wants the lengths on the CPU (a no-op there; needed on a GPU)', what='`lengths.cpu()` into `pack_padded_sequence`'),
    Change('common_code/plotting.py', "mpl.style.use('seaborn-poster')",
           "mpl.style.use('seaborn-v0_8-poster')",
           'matplotlib 3.6 renamed the seaborn styles', what='style `seaborn-v0_8-poster`'),
    Change('common_code/plotting.py', 'from matplotlib import tight_layout',
           'import types; tight_layout = types.SimpleNamespace(get_renderer=lambda fig: '
           'fig.canvas.get_renderer())',
           'matplotlib 3.6 removed matplotlib.tight_layout.get_renderer; the figure canvas gives the '
           'same renderer', what='`tight_layout.get_renderer(fig)` is `fig.canvas.get_renderer()`'),
    Change('common_code/plotting.py', "plt.savefig(os.path.join(dirname, filename + '.png'), "
           "bbox_inches=extent, dpi=1000)",
           "pass  # attn-jax reference run: figures off (their numbers are in the .csv tables)",
           "J&W's figures are not used by the comparison; each is saved three times (PNG at 1000 dpi, "
           'SVG, PDF), seconds per figure per model', what='figure files not saved (PNG)'),
    Change('common_code/plotting.py', "plt.savefig(os.path.join(dirname, filename + '.svg'), "
           'bbox_inches=extent)', 'pass', 'the same (SVG)', what='figure files not saved (SVG)'),
    Change('common_code/plotting.py', "plt.savefig(os.path.join(dirname, filename + '.pdf'), "
           'bbox_inches=extent)', 'pass', 'the same (PDF)', what='figure files not saved (PDF)'),
)


class PatchError(Exception):
  pass


def commit_of(jw_repo: str) -> str | None:
  """The checkout's git commit, if it is a git work tree."""
  try:
    out = subprocess.run(['git', '-C', jw_repo, 'rev-parse', 'HEAD'], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()
  except (OSError, subprocess.CalledProcessError):
    return None


@dataclasses.dataclass(frozen=True)
class Source:
  """A repository to copy and patch: its files, its changes, the package name
  its imports use and the commit the changes were written for."""
  name: str  # in messages, e.g. "J&W's repository (successar/AttentionExplanation)"
  package: str
  files: tuple
  changes: tuple
  checked_commit: str


def prepare(repo: str, dest: str, source: 'Source | None' = None) -> dict:
  """Copies and patches the checkout `repo` (J&W's by default) into
  `dest/<package>`; returns a record of the source commit and the changes
  (also written to `dest/<package>/attn_jax_changes.json`). Idempotent: an
  existing copy made from the same commit with the same changes is kept.

  Raises:
    PatchError: a file or an anchor line is missing from the checkout.
  """
  source = source or JW
  missing = [f for f in source.files if not os.path.isfile(os.path.join(repo, f))]
  if missing:
    raise PatchError(f'{repo} is not a checkout of {source.name}: '
                     f'missing {", ".join(missing[:4])}{" ..." if len(missing) > 4 else ""}. '
                     'Give the folder of a clone of it.')
  record = {'jw_commit': commit_of(repo), 'changes': [dataclasses.asdict(c) for c in source.changes]}
  package = os.path.join(dest, source.package)
  marker = os.path.join(package, 'attn_jax_changes.json')
  if os.path.exists(marker):
    with open(marker) as f:
      if json.load(f) == record:
        return record
  tmp = package + '.partial'
  shutil.rmtree(tmp, ignore_errors=True)
  for name in source.files:
    os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
    shutil.copyfile(os.path.join(repo, name), os.path.join(tmp, name))
  for change in source.changes:
    path = os.path.join(tmp, change.file)
    with open(path, encoding='utf-8') as f:
      text = f.read()
    found = text.count(change.old)
    if found != change.count:
      raise PatchError(f'{change.file}: expected {change.count} line(s) "{change.old}", found {found} '
                       f'(the checkout is another version of {source.name} than '
                       f'{source.checked_commit[:7]}; check out that commit)')
    with open(path, 'w', encoding='utf-8') as f:
      f.write(text.replace(change.old, change.new))
  with open(os.path.join(tmp, 'attn_jax_changes.json'), 'w') as f:
    json.dump(record, f, indent=1)
  shutil.rmtree(package, ignore_errors=True)
  os.replace(tmp, package)
  return record


# The commit of successar/AttentionExplanation these changes were written for.
CHECKED_COMMIT = '425a89a49a8b3bffc3f5e8338287e2ecd0cf1fa2'
JW = Source("J&W's repository (successar/AttentionExplanation)", 'Transparency', FILES, CHANGES,
            CHECKED_COMMIT)


def markdown_table(changes=CHANGES) -> str:
  """The changes as a Markdown table (docs/jain_wallace.md, docs/wiegreffe_pinter.md)."""
  rows = ['| file | change | why |', '|---|---|---|']
  for c in changes:
    times = f' (×{c.count})' if c.count > 1 else ''
    rows.append(f'| `{c.file}` | {c.what}{times} | {c.why} |')
  return '\n'.join(rows)


# J&W's question-answering runs (bAbI, SNLI): their QA loader, trainer,
# plotting and model, and the changes those need beside the ones above.
QA_FILES = FILES + ('ExperimentsQA.py', 'Trainers/DatasetQA.py', 'Trainers/TrainerQA.py',
                    'Trainers/PlottingQA.py', 'model/Question_Answering.py')
QA_CHANGES = CHANGES + (
    Change('model/modules/Decoder.py', "predict.masked_fill_(1 - entity_mask, -float('inf'))",
           "predict.masked_fill_((1 - entity_mask).bool(), -float('inf'))",
           'PyTorch 2 rejects uint8 masks in masked_fill_; the same answers masked (none, for bAbI: '
           'the entity mask is all ones)', what='the QA decoder\'s answer mask as `.bool()`'),
    Change('model/Question_Answering.py', "log_attn.masked_fill_(data.P.masks.unsqueeze(1), -float('inf'))",
           "log_attn.masked_fill_(data.P.masks.unsqueeze(1).bool(), -float('inf'))",
           'the same, in the QA adversary (optimisation loop and final attention)', count=2,
           what='the QA adversary\'s mask as `.bool()`'),
)
JW_QA = Source("J&W's repository (successar/AttentionExplanation), QA", 'Transparency', QA_FILES, QA_CHANGES,
               CHECKED_COMMIT)
