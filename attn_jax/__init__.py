"""attn-jax: is attention explanation? The four papers' experiments in JAX.

    import attn_jax as aj
    run = aj.restore('workdirs/sst_bilstm_tanh_softmax')  # model, params, config, vocabulary
    aj.explain(run, ['a gripping , funny film .'])       # α, gradient, LOO per word, and ŷ
    aj.analysis.leave_one_out(run.model, run.params, tokens, lengths)

`load_dataset(config.data)` gives the encoded splits of a dataset as J&W
prepare it, `build_model(config.model, vocab_size)` a model of pure
functions (embed → encode → score → project → decode), and
`attn_jax.analysis` the jittable analyses of the four papers. They take any
model in the interface `attn_jax.models.interface` states (`AttentionModel`;
`adapters.from_linen` / `from_nnx` / `from_functions` wrap one's own,
`heads` picks a head of a Transformer; docs/own_model.md), and `pad_texts`
lays out a batch as they expect.
"""

# First, before anything starts JAX's backend: XLA:CPU's freed buffers are
# kept for the next step instead of being unmapped (attn_jax.core.host_memory),
# and XLA:GPU's ops are the deterministic ones (attn_jax.core.determinism).
from attn_jax.core import determinism, host_memory
host_memory.reuse_freed_memory()
determinism.use_deterministic_gpu_ops()

# pylint: disable=g-import-not-at-top,wrong-import-position
from attn_jax import analysis
from attn_jax.data.batching import pad_texts
from attn_jax.data.dataset import load_dataset
from attn_jax.explain import Explanation, explain
from attn_jax.models import AttentionModel, adapters, build_model, heads
from attn_jax.workdirs.restore import Restored, restore

__all__ = ['AttentionModel', 'Explanation', 'Restored', 'adapters', 'analysis', 'build_model', 'explain',
           'heads', 'load_dataset', 'pad_texts', 'restore']
