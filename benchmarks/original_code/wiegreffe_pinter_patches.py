"""A copy of W&P's repository (sarahwie/attention) that runs under a current
PyTorch, made the way `jain_wallace_patches` makes J&W's: the user's checkout is
copied into `dest/attention/` (the package name W&P's imports use), each
change is an exact one-line replacement, and the project ships none of their
code. W&P's code is J&W's pre-dev snapshot with W&P's additions, so most
changes are J&W's same lines; allennlp 0.8.3 is stood in for by
`benchmarks/original_code/jain_wallace_shims/` as for J&W's code.
"""

import jain_wallace_patches
from jain_wallace_patches import Change

# The files W&P's binary-classification runs import (plus their licence).
FILES = (
    'LICENSE', 'README.md', '__init__.py', 'configurations.py', 'ExperimentsBC.py',
    'Trainers/DatasetBC.py', 'Trainers/TrainerBC.py',
    'common_code/common.py', 'common_code/metrics.py',
    'model/__init__.py', 'model/Binary_Classification.py', 'model/modelUtils.py',
    'model/modules/Attention.py', 'model/modules/Decoder.py', 'model/modules/Encoder.py',
)

_BY_LINE = {c.old: c for c in jain_wallace_patches.CHANGES}
_NO_GIT = ("import types; git = types.SimpleNamespace(Repo=lambda **_: types.SimpleNamespace("
           "active_branch=types.SimpleNamespace(name='attn-jax copy'), head=types.SimpleNamespace("
           "object=types.SimpleNamespace(hexsha='see attn_jax_changes.json'))))")

CHANGES = (
    _BY_LINE['from pandas.io.json.normalize import nested_to_record'],
    _BY_LINE["attn_odds.masked_fill_(masks, -float('inf'))"],
    Change('model/modelUtils.py', 'attn.masked_fill_(self.masks, 0)', 'attn.masked_fill_(self.masks.bool(), 0)',
           'PyTorch 2 rejects uint8 masks in masked_fill_; the same positions (SOS, EOS, padding) get 0',
           what='the uniform attention\'s mask as `.bool()`'),
    _BY_LINE['packseq = nn.utils.rnn.pack_padded_sequence(embedding, lengths, batch_first=True, '
             'enforce_sorted=False)'],
    Change('configurations.py', 'import git', _NO_GIT,
           'their config records the git branch and commit of the folder it runs from (GitPython); the '
           'copy is no git checkout, so the record says where the commit is written instead',
           what='the branch and commit in the saved config are placeholders'),
)

CHECKED_COMMIT = 'd867a2b878d44169fbe4966d09f74cd036936bb7'
WP = jain_wallace_patches.Source("W&P's repository (sarahwie/attention)", 'attention', FILES, CHANGES, CHECKED_COMMIT)


def prepare(wp_repo: str, dest: str) -> dict:
  """Copies and patches W&P's code into `dest/attention` (see `jain_wallace_patches.prepare`)."""
  return jain_wallace_patches.prepare(wp_repo, dest, WP)


def markdown_table() -> str:
  """The changes as a Markdown table (docs/wiegreffe_pinter.md)."""
  return jain_wallace_patches.markdown_table(CHANGES)
