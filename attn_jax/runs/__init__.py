"""Trained runs on disk: workdirs and what they record, restoring a model,
the model axis (several models as one program) and the params a model starts
from. Above training and config; below stages' users (experiments, pipeline)."""
