"""The vector-workers study: two arms, the default SST BiLSTM + tanh with five
seeds, that differ only in the threads that built their vectors; the
one-thread arm keys its results as the default config does."""

from attn_jax import config as config_lib
from attn_jax.config import keys
from attn_jax.studies import STUDIES
from attn_jax.vectors import build

STUDY = STUDIES['vector_workers']


def test_the_arms_differ_only_in_the_vectors_threads():
  one, two = (arm.config(STUDY.seeds, STUDY.analyses) for arm in STUDY.arms)
  assert STUDY.seeds == 5 and one.sweep == 'seed=0,1,2,3,4' and STUDY.kind == 'vector_workers'
  first, second = keys.training_items(one), keys.training_items(two)
  differ = {k for k in set(first) | set(second) if first.get(k) != second.get(k)}
  assert differ - {'name'} == {'vectors.workers'}
  assert 'vectors.workers' not in keys.result_items(one)  # the default's keys: old results stay found
  assert build.recipe(two) == {**build.recipe(one), 'workers': 2}
  default = config_lib.default_config('sst', 'bilstm')
  default.model.attention, default.analyses, default.sweep = 'tanh', STUDY.analyses, one.sweep
  default.name = one.name
  assert keys.result_items(default) == keys.result_items(one)
