"""The four papers attn-jax reproduces, and the one study of its own beyond
them (known evidence): who, what and where each is described.

Every stage, experiment and report command names one of these keys as its
`paper`; help text, report sections and `run.py`'s closing lines are grouped
by them, in this order. Their published numbers are in `published.py`.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Paper:
  """key: what stages, experiments and report commands name (`paper='jw'`).
  label: the short name tables and help use. algorithms: the section of
  shared/reference/ALGORITHMS.md on what the authors' code computes. doc: its
  page in docs/."""
  key: str
  label: str
  title: str
  algorithms: str
  doc: str


PAPERS: dict[str, Paper] = {p.key: p for p in (
    Paper('jw', 'J&W', 'Jain & Wallace 2019, Attention is not Explanation', '§A, §B',
          'docs/jain_wallace.md'),
    Paper('wp', 'W&P', 'Wiegreffe & Pinter 2019, Attention is not not Explanation', '§C',
          'docs/wiegreffe_pinter.md'),
    Paper('ss', 'S&S', 'Serrano & Smith 2019, Is Attention Interpretable?', '§D',
          'docs/serrano_smith.md'),
    Paper('meister', 'Meister', 'Meister et al. 2021, Is Sparse Attention more Interpretable?', '§E',
          'docs/meister.md'),
    # Beyond the four: no paper's code computes it, so no ALGORITHMS.md section.
    Paper('evidence', 'evidence', 'Known evidence: which importance measure finds bAbI\'s supporting facts',
          '–', 'docs/known_evidence.md'),
)}
