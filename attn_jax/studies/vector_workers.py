"""Word vectors built with one gensim thread or two: SST BiLSTM + tanh, model
seeds 0..4 as one program, from in-domain vectors built with
`vectors.workers=1` (bit-reproducible, every committed result) and with
`vectors.workers=2` (this machine's cores: `auto` here).

Several threads update the shared weights in no fixed order, so two-thread
vectors are not bit-for-bit reproducible, and neither are the models trained
from them: this study measures how far that moves what the J&W grid reports
(accuracy and the three τ), each arm's interval over its five seeds side by
side with Welch's test of the difference (attn_jax.tables.vector_workers_report,
`python -m attn_jax.studies report vector_workers`).
Everything else is the default config's, so the one-thread arm is the
README's `configs/sst_bilstm.py` with the five seeds as one program (and
its shared batch order, `train.batch_order='shared'`, as that command's
sweep has and the committed arms were trained with).
"""

from attn_jax.studies.arms import Arm

ANALYSES = 'gradient,loo,kendall,attention'  # the three τ
ARMS = tuple(Arm(f'sst_bilstm_tanh_workers{n}', 'sst', 'bilstm',
                 {'model.attention': 'tanh', 'vectors.workers': n, 'train.batch_order': 'shared'})
             for n in (1, 2))
