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
  label: the short name tables and help use. code: the authors' public GitHub
  repository (owner/name), where what their code computes is read; '' where
  none is public. doc: its page in docs/."""
  key: str
  label: str
  title: str
  code: str
  doc: str


PAPERS: dict[str, Paper] = {p.key: p for p in (
    Paper('jw', 'J&W', 'Jain & Wallace 2019, Attention is not Explanation',
          'successar/AttentionExplanation', 'docs/jain_wallace.md'),
    Paper('wp', 'W&P', 'Wiegreffe & Pinter 2019, Attention is not not Explanation',
          'sarahwie/attention', 'docs/wiegreffe_pinter.md'),
    Paper('ss', 'S&S', 'Serrano & Smith 2019, Is Attention Interpretable?', 'serrano-s/attn-tests',
          'docs/serrano_smith.md'),
    Paper('meister', 'Meister', 'Meister et al. 2021, Is Sparse Attention more Interpretable?', '',
          'docs/meister.md'),
    # Beyond the four: attn-jax's own study, so no authors' repository.
    Paper('evidence', 'evidence', 'Known evidence: which importance measure finds bAbI\'s supporting facts',
          '', 'docs/known_evidence.md'),
    # Beyond the four: which importance measure is faithful to the model, by
    # erasure without retraining (ERASER: DeYoung et al., ACL 2020) and with it
    # (ROAR: Hooker et al., NeurIPS 2019; recursive ROAR: Madsen et al.,
    # Findings of EMNLP 2022, AndreasMadsen/nlp-roar-interpretability).
    Paper('faithfulness', 'faithfulness', 'Which importance measure is faithful? ERASER and ROAR',
          'AndreasMadsen/nlp-roar-interpretability', 'docs/faithfulness.md'),
)}
