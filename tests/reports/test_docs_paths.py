"""Every "From `path`" line under a generated table in README.md and docs/
names committed files: a placeholder (`<arm>`, `<seed>`, `*`) matches at
least one file git tracks, so a reader can open what each table was built from."""

import fnmatch
import os
import re
import subprocess

import pytest
import helpers

ROOT = helpers.ROOT
PAGES = ['README.md'] + sorted(os.path.join('docs', f) for f in os.listdir(os.path.join(ROOT, 'docs'))
                               if f.endswith('.md'))


def tracked_files() -> list[str]:
  try:
    out = subprocess.run(['git', 'ls-files'], cwd=ROOT, capture_output=True, text=True, check=True).stdout
  except (OSError, subprocess.CalledProcessError):
    pytest.skip('not a git checkout: no list of committed files')
  return out.splitlines()


def from_paths(page: str) -> list[str]:
  with open(os.path.join(ROOT, page), encoding='utf-8') as f:
    lines = [line for line in f if line.startswith('From `')]
  return [p for line in lines for p in re.findall(r'`([^`]+)`', line)]


def as_glob(path: str) -> str:
  return re.sub(r'<[^>]+>', '*', path)


def test_the_pages_name_from_paths():
  assert sum(len(from_paths(p)) for p in PAGES) > 20


@pytest.mark.parametrize('page', PAGES)
def test_every_from_path_matches_a_committed_file(page):
  files = tracked_files()
  missing = [p for p in from_paths(page)
             if not any(fnmatch.fnmatchcase(f, as_glob(p)) for f in files)]
  assert not missing, f'{page}: "From" paths that match no committed file: {missing}'
