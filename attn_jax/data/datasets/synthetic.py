"""The synthetic planted-words task (`attn_jax.data.synthetic`): no files."""

from attn_jax.core.registry import DATASETS
from attn_jax.data import synthetic
from attn_jax.data.datasets.base import DatasetSpec

SYNTHETIC = DATASETS.register(DatasetSpec(
    name='synthetic', paper=None, order=5, title='the synthetic task',
    prepare=None, generate=synthetic.generate, tokenizer=str.split))
