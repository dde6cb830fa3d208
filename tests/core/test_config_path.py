"""The run config's path through `pipeline.run` stays as short as issue 54
left it (`tests/structure_tool/follow_config.py` counts it)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'structure_tool'))
import follow_config  # noqa: E402

# Measured on 2026-11-28 after issue 54 (before it, at 988e29a: 55 and 26); one crossing more
# since 2026-12-07: the pipeline refuses a one-class selection split (`check_selection_split`)
# right after loading the data, before any training; one crossing and one climb more since
# 2026-12-08: the smoke run analyses with every stage, and the `eraser` stage reads its own
# section (`attn_jax.stages.eraser` is the one new module the config visits).
MOST_CROSSINGS, MOST_CLIMBS = 36, 17


@pytest.mark.heavy
@pytest.mark.usefixtures('optax_promotion')
def test_the_config_crosses_no_more_groups_and_climbs_no_more_than_measured():
  counts = follow_config.count(follow_config.record_calls(follow_config.smoke_run('smoke')))
  assert counts['crossings'] <= MOST_CROSSINGS and counts['climbs'] <= MOST_CLIMBS, counts
  # The core takes values: only its registry reads a section (a component's own).
  assert {m for m in counts['visits'] if m.startswith('attn_jax.core.')} <= {'attn_jax.core.registry'}
  assert 'attn_jax.training.trainer' in counts['visits']  # the count does see the loop


def test_crossings_and_climbs_are_counted_over_visits_not_calls():
  calls = ['attn_jax.pipeline', 'attn_jax.training.trainer', 'attn_jax.training.trainer',
           'attn_jax.training.selection', 'attn_jax.core.registry', 'attn_jax.training.trainer']
  counts = follow_config.count(calls)
  assert counts['visits'] == {'attn_jax.training.trainer': 2, 'attn_jax.pipeline': 1,
                              'attn_jax.training.selection': 1, 'attn_jax.core.registry': 1}
  assert (counts['crossings'], counts['climbs']) == (3, 1)
