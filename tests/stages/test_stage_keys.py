"""A stage's key is its config section: every key of it but the runtime ones,
and a key added later leaves results keyed before it where they are."""

import ml_collections

from attn_jax import config as config_lib
from attn_jax.core.registry import STAGES, Section
from attn_jax.stages.stage import Stage


def toy(section: Section) -> Stage:
  return Stage(name='toy_keys', paper='meister', order=99, finalize=lambda *a: ({}, {}),
               figures=lambda *a: [], section=section)


def analysis(**values) -> ml_collections.ConfigDict:
  return ml_collections.ConfigDict({'batch_size': 8, 'toy_keys': values})


def test_the_section_is_the_key_less_runtime_keys():
  stage = toy(Section(lambda *a: dict(steps=5, chunk=4), runtime=('chunk',)))
  assert stage.key_settings(analysis(steps=5, chunk=4)) == {'steps': 5}
  assert stage.key_settings(analysis(steps=5, chunk=64)) == {'steps': 5}  # where, not what
  assert stage.key_settings(analysis(steps=6, chunk=4)) == {'steps': 6}


def test_a_key_added_later_keeps_earlier_results_at_its_old_value():
  before = toy(Section(lambda *a: dict(steps=5)))
  after = toy(Section(lambda *a: dict(steps=5, norm='l1'), added={'norm': 'l1'}))
  assert after.key_settings(analysis(steps=5, norm='l1')) == before.key_settings(analysis(steps=5))
  assert after.key_settings(analysis(steps=5, norm='l2')) == {'steps': 5, 'norm': 'l2'}


def test_a_stage_without_a_section_has_empty_settings():
  assert toy(Section()).key_settings(ml_collections.ConfigDict({'batch_size': 8})) == {}


def test_every_registered_stage_keys_its_whole_section_but_runtime_and_old_added_keys():
  cfg = config_lib.default_config('sst', 'bilstm')
  for stage in STAGES.values():
    values = cfg.analysis.get(stage.name)
    values = values.to_dict() if isinstance(values, ml_collections.ConfigDict) else {}
    expected = {k for k in values if k not in stage.section.runtime
                and not (k in stage.section.added and values[k] == stage.section.added[k])}
    assert set(stage.key_settings(cfg.analysis)) == expected, stage.name
