"""Workdirs and the trained models in them (the package was `attn_jax.runs`):
what a workdir records (`workdir`), restoring a model (`restore`), the models
of one program and their workdirs (`model_axis`) and the params a model
starts from (`initial_params`). It runs nothing: `pipeline`, `stages.runner`,
`experiments.runner` and `studies.runner` do. Above training and config;
below stages' users (experiments, pipeline)."""
