"""Training: the J&W recipe (their `Trainers/TrainerBC.py`), checkpoints, model selection."""
