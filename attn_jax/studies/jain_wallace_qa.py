"""Jain & Wallace's question-answering rows: bAbI tasks 1, 2 and 3 × {BiLSTM,
CNN, Average} × {tanh, dot}, each configuration 5 seeds (own initial weights
and batch orders) as one program, every J&W analysis on every model plus the
known-evidence scores (`evidence`: how well each importance measure ranks the
words of the supporting facts). Task 3 trains on the 1k train file (J&W's 10k
file could not be obtained; `docs/jain_wallace.md`), and on the 10k file when
the data folder has it. SNLI's rows need SNLI's train split, which is not
here: they are not arms of this study."""

from attn_jax.studies.arms import Arm

DATASETS = ('babi1', 'babi3', 'babi2')  # cheapest first: a resumed study finishes whole tasks early
ENCODERS = ('bilstm', 'cnn', 'average')
ATTENTIONS = ('tanh', 'dot')
ANALYSES = 'gradient,loo,kendall,attention,permutation,adversarial,evidence'
ARMS = tuple(Arm(f'{d}_{e}_{a}', d, e, {'model.attention': a})
             for d in DATASETS for e in ENCODERS for a in ATTENTIONS)
