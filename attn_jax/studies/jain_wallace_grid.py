"""The whole Jain & Wallace grid: {SST, IMDB, 20News} × {BiLSTM, CNN, Average}
× {tanh, dot}, each configuration 5 seeds as one program, every J&W analysis
on every model (the default embeddings of each config)."""

from attn_jax.studies.arms import Arm

DATASETS = ('sst', '20news', 'imdb')  # cheapest first: a resumed grid finishes whole datasets early
ENCODERS = ('bilstm', 'cnn', 'average')
ATTENTIONS = ('tanh', 'dot')
ANALYSES = 'gradient,loo,kendall,attention,permutation,adversarial'
ARMS = tuple(Arm(f'{d}_{e}_{a}', d, e, {'model.attention': a})
             for d in DATASETS for e in ENCODERS for a in ATTENTIONS)
