"""Verdict words in the prose of README.md and docs/*.md (issue 75, item 5).

A sentence of prose (outside generated `<!-- X:start -->` … `<!-- X:end -->`
blocks and ``` fences) that says two things are *equivalent* or *different*,
or that something *reproduces*, *matches*, *agrees* or *holds*, states a
verdict; it must be checked against the committed result files by a test, or
it may silently go stale when the results change.

* The attribution phrase "the inputs'" ("… is the inputs'") is never allowed.
* A sentence with a verdict word is CHECKED when it contains a fragment of
  `CHECKED`: its check function reads the result files under results/,
  recomputes the verdict with `attn_jax.analysis.verdicts.compare`, and
  asserts that the sentence states that verdict and its printed interval.
* Every other such sentence must be listed in the LEDGER,
  tests/reports/verdict_sentences_unchecked.json (per file: sha1 of the
  normalised sentence -> its first 80 characters). The ledger holds sentences
  that are NOT yet checked: each is still to be checked (an entry in
  `CHECKED`) or reworded without a verdict word. It is a ratchet: a new or
  edited verdict sentence that is neither checked nor in the ledger fails, and
  so does a ledger entry whose sentence is gone (remove it: the ledger only
  shrinks). `test_ledger_size` prints how many sentences it holds per file.

Rewrite the ledger (only after reviewing that the new sentences are honest)
with

    ATTN_JAX_WRITE_VERDICT_LEDGER=1 python -m pytest -q -n 0 tests/reports/test_verdict_words.py
"""

import glob
import hashlib
import json
import os
import re

import pytest
import helpers

from verdict_claims import CHECKED

ROOT = helpers.ROOT
LEDGER = os.path.join(helpers.TESTS, 'reports', 'verdict_sentences_unchecked.json')
WRITE_ENV = 'ATTN_JAX_WRITE_VERDICT_LEDGER'

VERDICT = re.compile(r'\b(equivalent|different|reproduc(?:es|ed)|match(?:es|ed)|agree(?:s|d)|holds)\b',
                     re.IGNORECASE)
# "the inputs'" as an attribution: ends a clause ("the difference is the inputs'.") or follows a copula.
ATTRIBUTION = re.compile(r"(?:\b(?:is|are|was|were|be|been|being)\s+the inputs'|\bthe inputs'(?=\s*(?:$|[.,;:)—–-])))",
                         re.IGNORECASE)
GENERATED = re.compile(r'<!--\s*(\S+?):start\s*-->.*?<!--\s*\1:end\s*-->', re.DOTALL)
COMMENT = re.compile(r'<!--.*?-->', re.DOTALL)
FENCE = re.compile(r'^(```|~~~)')
NEW_UNIT = re.compile(r'^(\||#|[-*+]\s|\d+[.)]\s|>)')


def documents() -> list[str]:
  """README.md and docs/*.md, relative to the checkout."""
  paths = ['README.md'] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, 'docs', '*.md')))
  return [p for p in paths if os.path.isfile(os.path.join(ROOT, p))]


def normalise(text: str) -> str:
  return ' '.join(text.split())


def prose(text: str) -> str:
  """`text` without generated blocks, HTML comments and fenced code."""
  text = COMMENT.sub('', GENERATED.sub('', text))
  kept, fenced = [], False
  for line in text.splitlines():
    if FENCE.match(line.strip()):
      fenced = not fenced
      continue
    if not fenced:
      kept.append(line)
  return '\n'.join(kept)


def sentences(text: str) -> list[str]:
  """Normalised sentences of the prose of a markdown text: paragraphs end at blank lines, and every
  table row, heading, list item or quote starts a new one; a sentence ends at '.', '!' or '?' before
  whitespace."""
  units, current = [], []
  for line in prose(text).splitlines():
    if not line.strip() or NEW_UNIT.match(line.strip()):
      if current:
        units.append(' '.join(current))
      current = [line.strip()] if line.strip() else []
    else:
      current.append(line.strip())
  if current:
    units.append(' '.join(current))
  out = []
  for unit in units:
    out += [normalise(s) for s in re.split(r'(?<=[.!?])\s+', unit) if normalise(s)]
  return out


def sha1(sentence: str) -> str:
  return hashlib.sha1(sentence.encode('utf-8')).hexdigest()




# ---------------------------------------------------------------------------------------------

def scan() -> tuple[dict, list, dict]:
  """(unchecked {file: {sha1: sentence}}, attributions ['file: sentence'], checked {fragment: [(file, sentence)]})."""
  unchecked, attributions, checked = {}, [], {fragment: [] for fragment in CHECKED}
  for path in documents():
    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
      text = f.read()
    for sentence in sentences(text):
      if ATTRIBUTION.search(sentence):
        attributions.append(f'{path}: {sentence}')
      if not VERDICT.search(sentence):
        continue
      fragments = [fr for fr in CHECKED if fr in sentence]
      for fragment in fragments:
        checked[fragment].append((path, sentence))
      if not fragments:
        unchecked.setdefault(path, {})[sha1(sentence)] = sentence
  return unchecked, attributions, checked


def read_ledger() -> dict:
  if not os.path.isfile(LEDGER):
    return {}
  with open(LEDGER, encoding='utf-8') as f:
    return json.load(f)


def write_ledger(unchecked: dict) -> None:
  ledger = {path: {h: s[:80] for h, s in sorted(found.items())} for path, found in sorted(unchecked.items())}
  with open(LEDGER, 'w', encoding='utf-8') as f:
    json.dump(ledger, f, ensure_ascii=False, indent=1, sort_keys=True)
    f.write('\n')


@pytest.fixture(scope='module')
def scanned():
  unchecked, attributions, checked = scan()
  if os.environ.get(WRITE_ENV):
    write_ledger(unchecked)
  return unchecked, attributions, checked


def test_sentences_split_prose_only():
  text = ('Intro is equivalent. Second one\nwraps here.\n\n<!-- t:start -->\nA different table.\n<!-- t:end -->\n'
          '```\ncode matches\n```\n| a | b holds |\n- item agrees.\n')
  assert sentences(text) == ['Intro is equivalent.', 'Second one wraps here.', '| a | b holds |', '- item agrees.']
  assert ATTRIBUTION.search("the difference is the inputs', not the model's")
  assert ATTRIBUTION.search("the gap is the inputs'.")
  assert not ATTRIBUTION.search("the inputs' lengths differ")
  assert VERDICT.search('it Reproduces') and not VERDICT.search('differently, equivalence')


def test_no_attribution_to_the_inputs(scanned):
  _, attributions, _ = scanned
  assert not attributions, ("\"the inputs'\" attributes a result to the inputs without a check; say what was "
                            'measured instead:\n' + '\n'.join(attributions))


@pytest.mark.parametrize('fragment', list(CHECKED))
def test_checked_sentence(scanned, fragment):
  _, _, checked = scanned
  found = checked[fragment]
  assert len(found) == 1, f'fragment {fragment!r} is in {len(found)} sentences (want exactly 1): {found}'
  CHECKED[fragment](found[0][1])


def test_every_verdict_sentence_is_checked_or_in_the_ledger(scanned):
  unchecked, _, _ = scanned
  ledger = read_ledger()
  new = [f'{path}: {s}' for path, found in unchecked.items() for h, s in found.items()
         if h not in ledger.get(path, {})]
  assert not new, (f'{len(new)} sentence(s) with a verdict word are neither checked by a test (CHECKED in '
                   f'{os.path.basename(__file__)}) nor in the ledger of unchecked sentences; check them '
                   f'against results/ or reword them:\n' + '\n'.join(new))


def test_the_ledger_has_no_stale_entries(scanned):
  unchecked, _, _ = scanned
  stale = [f'{path}: {h} {s!r}' for path, entries in read_ledger().items() for h, s in entries.items()
           if h not in unchecked.get(path, {})]
  assert not stale, (f'{len(stale)} ledger entr(ies) no longer match a sentence (fixed or reworded): remove '
                     f'them from {os.path.relpath(LEDGER, ROOT)} (or rerun with {WRITE_ENV}=1):\n' + '\n'.join(stale))


def test_ledger_size(scanned, record_property):
  """Not a check: how many verdict sentences are still unchecked, per file."""
  ledger = read_ledger()
  counts = {path: len(entries) for path, entries in sorted(ledger.items())}
  record_property('unchecked_verdict_sentences', sum(counts.values()))
  print(f'\nunchecked verdict sentences (still to check or reword): {sum(counts.values())}')
  for path, n in counts.items():
    print(f'  {path}: {n}')
