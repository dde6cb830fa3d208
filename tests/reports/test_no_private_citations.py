"""No committed page or module cites ALGORITHMS.md: it is not part of the
repository, so a reader cannot open it. Cite the primary source instead: the
paper's section, equation or table, or the file of the authors' public
repository that the sentence rests on."""

import os
import subprocess

import pytest
import helpers

ROOT = helpers.ROOT
SCOPE = ['attn_jax', 'docs', 'README.md', 'notebooks', 'configs', 'benchmarks']
NEEDLE = 'ALGORITHMS.md'


def tracked_files() -> list[str]:
  try:
    out = subprocess.run(['git', 'ls-files', '--', *SCOPE], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
  except (OSError, subprocess.CalledProcessError):
    pytest.skip('not a git checkout: no list of committed files')
  return out.splitlines()


def citations(paths: list[str], root: str = ROOT) -> list[str]:
  """'file:line: text' for every line of `paths` (relative to `root`) that mentions NEEDLE."""
  found = []
  for path in paths:
    full = os.path.join(root, path)
    if not os.path.isfile(full):  # deleted in the working tree, not yet committed
      continue
    with open(full, 'rb') as f:
      data = f.read()
    if NEEDLE.encode() not in data:
      continue
    text = data.decode('utf-8', errors='replace')
    found += [f'{path}:{i}: {line.strip()[:160]}' for i, line in enumerate(text.splitlines(), 1)
              if NEEDLE in line]
  return found


def test_the_scope_is_tracked():
  paths = tracked_files()
  assert any(p.startswith('attn_jax/') for p in paths) and 'README.md' in paths


def test_citations_finds_every_line(tmp_path):
  (tmp_path / 'a.md').write_text(f'one\nsee {NEEDLE} §B.1\nthree {NEEDLE}\n', encoding='utf-8')
  (tmp_path / 'b.py').write_text('clean\n', encoding='utf-8')
  assert citations(['a.md', 'b.py', 'gone.md'], str(tmp_path)) == [f'a.md:2: see {NEEDLE} §B.1', f'a.md:3: three {NEEDLE}']


def test_no_tracked_file_cites_the_private_reference():
  found = citations(tracked_files())
  assert not found, (f'{len(found)} line(s) cite {NEEDLE}, which the repository does not contain; cite the '
                     'paper (section, equation, table) or the authors\' repository file instead:\n'
                     + '\n'.join(found))
