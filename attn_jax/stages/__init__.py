"""Analysis stages, declared by name in `config.analyses` and run by `run.py`.

Like big_vision's evaluators: each stage module registers its stages in
`attn_jax.core.registry.STAGES` with its paper and its `config.analysis.<name>`
section, and writes `<out>/analyses/<name>/<split>-<N>docs-<key>/{results.npz,
summary.json, *.png, *.svg}` (`attn_jax.stages.stage_store`). This package's
modules are read by name when the registry is first read, so nothing here
lists them. J&W's stages (gradient, loo, kendall, attention, permutation,
adversarial), S&S's (erasure), Meister et al.'s (importance,
state_importance) and, beyond the papers, `evidence` (known evidence).
"""
