"""Reads one SST sentence tree in Penn Treebank bracket notation."""

import re

_TOKEN = re.compile(r'\(|\)|[^\s()]+')


def parse_tree(line: str) -> tuple[int, list[str]]:
  """Returns (root label, leaves) of a tree like `(3 (2 It) (4 (2 's) (3 good)))`.

  Raises:
    ValueError: unbalanced brackets, a node without a 0-4 label, or trailing text.
  """
  tokens = _TOKEN.findall(line)
  if not tokens or tokens[0] != '(':
    raise ValueError('a tree must start with "("')
  leaves, depth, root, i = [], 0, None, 0
  while i < len(tokens):
    tok = tokens[i]
    if tok == '(':
      if i + 1 >= len(tokens) or not tokens[i + 1].isdigit() or not 0 <= int(tokens[i + 1]) <= 4:
        raise ValueError(f'node at token {i} has no 0-4 label')
      if root is None:
        root = int(tokens[i + 1])
      elif depth == 0:
        raise ValueError('text after the end of the tree')
      depth += 1
      i += 2
      continue
    if tok == ')':
      depth -= 1
      if depth < 0:
        raise ValueError('unbalanced ")"')
    else:
      leaves.append(tok)
    i += 1
  if depth != 0:
    raise ValueError('unbalanced "(" (truncated line?)')
  return root, leaves
