"""Training: the J&W recipe (§A.5), checkpoints, model selection."""
