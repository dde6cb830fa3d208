"""The whole Jain & Wallace grid: {SST, IMDB, 20News} × {BiLSTM, CNN, Average}
× {tanh, dot}, each configuration its seeds as one program, every J&W analysis
on every model (the default embeddings of each config).

Seeds: 5 a row, as J&W's own runs have for the comparison; SST's rows 15,
because SST's τ spread over seeds so widely that 5 a side cannot decide an
equivalence test with J&W's code at a 0.05 margin (the observed spreads ask
for about 12–32 a side) and an SST model trains in minutes here."""

from attn_jax.studies.arms import Arm

DATASETS = ('sst', '20news', 'imdb')  # cheapest first: a resumed grid finishes whole datasets early
ENCODERS = ('bilstm', 'cnn', 'average')
ATTENTIONS = ('tanh', 'dot')
SEEDS = {'sst': 15}  # the rest: the study's 5
ANALYSES = 'gradient,loo,kendall,attention,permutation,adversarial'
ARMS = tuple(Arm(f'{d}_{e}_{a}', d, e, {'model.attention': a}, seeds=SEEDS.get(d, 0))
             for d in DATASETS for e in ENCODERS for a in ATTENTIONS)
