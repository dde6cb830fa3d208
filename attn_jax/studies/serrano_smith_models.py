"""Serrano & Smith's six models on multi-class data: HAN and FLAN with the
rnn, conv and noenc encoders on aclImdb's eight star ratings and on 20
Newsgroups' 20 topics, trained with S&S's recipe as their code has it; S&S's
erasure tests on each model's final attention layer.

S&S trained one model per configuration; so does this study by default
(`--seeds=N` trains N per arm, as one program, in folders of their own).
`--variant=previous` trains the recipe attn-jax used before S&S's code was
followed (`attn_jax.config.serrano_smith_config`), in `<arm>-previous` folders.
The arms run cheapest first: the FLANs, then the HANs.
"""

from attn_jax.config.serrano_smith_config import DATASETS, ENCODERS, model_name
from attn_jax.studies.arms import Arm

ANALYSES = 'erasure'
ARMS = tuple(
    Arm(f'{d}_{model_name(f, ENCODERS[e])}', d, e, family=f)
    for f in ('flan', 'han') for e in ('noenc', 'conv', 'rnn') for d in DATASETS)
