"""The synthetic planted-words task (`attn_jax.data.synthetic_task`): no files."""

from attn_jax.core.registry import DATASETS
from attn_jax.data import synthetic_task as synthetic
from attn_jax.data.datasets.dataset_spec import DatasetSpec



def _recipe(cfg, encoder):
  del encoder
  cfg.model.embed_dim = cfg.model.hidden_dim = 32
  cfg.train.epochs, cfg.train.learning_rate = 4, 3e-3


SYNTHETIC = DATASETS.register(DatasetSpec(
    name='synthetic', paper=None, order=5, title='the synthetic task',
    prepare=None, generate=synthetic.generate, tokenizer=str.split, recipe=_recipe, evidence=True))
