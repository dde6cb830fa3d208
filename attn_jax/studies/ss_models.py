"""Serrano & Smith's six models on multi-class data: HAN and FLAN with the
rnn, conv and noenc encoders on aclImdb's eight star ratings, and HANrnn and
FLANrnn on 20 Newsgroups' 20 topics; S&S's erasure tests on each model's
final attention layer.

S&S trained one model per configuration; so does this study by default
(`--seeds=N` trains N per arm, as one program, in folders of their own).
"""

from attn_jax.config.serrano_smith import ENCODERS, FAMILIES, model_name
from attn_jax.studies.arms import Arm

ANALYSES = 'erasure'
ARMS = tuple(
    Arm(f'imdb_ratings_{model_name(f, ENCODERS[e])}', 'imdb_ratings', e, family=f)
    for e in ENCODERS for f in FAMILIES) + tuple(
    Arm(f'20news_topics_{model_name(f, "bigru")}', '20news_topics', 'rnn', family=f)
    for f in FAMILIES)
