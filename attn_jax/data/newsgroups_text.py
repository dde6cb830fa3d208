"""Removes headers, signature blocks and quoted replies from newsgroup posts.

The same rules as scikit-learn's `fetch_20newsgroups(remove=('headers',
'footers', 'quotes'))`, which J&W used.
"""

import re

_QUOTE = re.compile(r'(writes in|writes:|writes|wrote:|says:|said:|^In article|^Quoted from|^\||^>)')


def strip_header(text: str) -> str:
  """Everything after the first blank line."""
  return text.partition('\n\n')[2]


def strip_footer(text: str) -> str:
  """Drops the signature: everything from the last line made only of dashes."""
  lines = text.strip().split('\n')
  for number in range(len(lines) - 1, -1, -1):
    if lines[number].strip().strip('-') == '':
      break
  return '\n'.join(lines[:number]) if number > 0 else text


def strip_quotes(text: str) -> str:
  """Drops quoted lines and "X writes:" attributions."""
  return '\n'.join(line for line in text.split('\n') if not _QUOTE.search(line))


def strip_all(text: str) -> str:
  return strip_quotes(strip_footer(strip_header(text)))
