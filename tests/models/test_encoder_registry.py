"""Encoder families by registry: each module under attn_jax/models/encoders
declares its keys, recipe, checks and fast paths, and the config, the model
builder and the analyses ask the registry — so a new family needs no edit
anywhere else (the last test adds one)."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from attn_jax import config as config_lib, papers
from attn_jax.analysis import leave_one_out
from attn_jax.core.errors import ConfigError
from attn_jax.core.registry import ENCODERS
from attn_jax.models import build_model, masks
from attn_jax.models.encoders.encoder import Encoder, of_module
from conftest import tiny_model_config


def test_the_families_and_what_they_declare():
  shipped = ('bilstm', 'cnn', 'average', 'transformer', 'bigru', 'none')  # an added family may follow
  assert tuple(n for n in ENCODERS.names() if n in shipped) == shipped
  assert config_lib.choices()['model.encoder'] == ENCODERS.names()
  assert {e.name for e in ENCODERS.values() if e.in_han} >= {'bigru', 'cnn', 'none'}
  for family in ENCODERS.values():
    assert family.paper in papers.PAPERS and family.analyses in papers.PAPERS
    cfg = config_lib.default_config('synthetic', family.name, 'smoke')
    for key in family.keys('synthetic', 'smoke'):  # every family's keys are in every config
      assert key in cfg.model, (family.name, key)


@pytest.mark.parametrize('name', ['bilstm', 'cnn', 'average', 'transformer', 'bigru', 'none'])
def test_a_built_model_is_recognised_and_its_states_have_the_declared_width(name):
  cfg = tiny_model_config(name)
  model = build_model(cfg, 30)
  params = model.init(jax.random.PRNGKey(0))
  assert of_module(model.module.encoder) is ENCODERS[name]
  tokens = jnp.asarray([[2, 5, 6, 7, 3, 0]], jnp.int32)
  hidden = model.encode(params, model.embed(params, tokens), jnp.asarray([5]))
  assert hidden.shape == (1, 6, ENCODERS[name].output_size(cfg))
  assert model.encodes_deletions == (ENCODERS[name].deletion_states is not None)


def test_each_family_checks_its_own_keys():
  for overrides, message in [({'lstm_biases': 3}, 'lstm_biases must be 1 or 2'),
                             ({'cnn_dropout': 0.3}, 'cnn_dropout is for model.encoder=cnn'),
                             ({'encoder': 'cnn', 'hidden_dim': 10}, 'divisible by the number of CNN'),
                             ({'encoder': 'transformer', 'hidden_dim': 10, 'transformer_heads': 4},
                              'divisible by model.transformer_heads'),
                             ({'transformer_norm': 'middle'}, 'transformer_norm')]:
    cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
    cfg.model.update(overrides)
    with pytest.raises(ConfigError, match=message):
      config_lib.validate(cfg)


class Reversed(nn.Module):
  """A toy family for the test below: each word's state is the next word's
  embedding, scaled (so a deletion changes one state: no fast path here)."""
  scale: float = 1.0

  @nn.compact
  def __call__(self, embedded, lengths, deterministic=True):
    del deterministic
    shifted = jnp.roll(embedded, -1, axis=1) * self.scale
    return shifted * masks.sequence_mask(lengths, embedded.shape[1])[..., None].astype(shifted.dtype)


def test_a_new_family_is_one_registration():
  family = Encoder(name='shifted', paper='jw', order=99, module=Reversed,
                   build=lambda m, items: Reversed(scale=m.shifted_scale),
                   keys=lambda dataset, variant: {'shifted_scale': 1.0},
                   output_size=lambda m: m.embed_dim,
                   check=lambda m: 'model.shifted_scale must be > 0' if m.shifted_scale <= 0 else None)
  assert 'shifted' not in ENCODERS
  with ENCODERS.registered(family):
    cfg = config_lib.default_config('synthetic', 'shifted', 'smoke')
    config_lib.validate(cfg)  # its key is known, its name a valid choice
    assert cfg.model.shifted_scale == 1.0 and cfg.analyses  # J&W's stages by default
    bad = config_lib.default_config('synthetic', 'shifted', 'smoke')
    bad.model.shifted_scale = -1.0
    with pytest.raises(ConfigError, match='shifted_scale must be > 0'):
      config_lib.validate(bad)
    model = build_model(cfg.model, 30)
    params = model.init(jax.random.PRNGKey(0))
    assert not model.encodes_deletions  # no fast path: the analyses re-encode the variants
    tokens = jnp.asarray([[2, 5, 6, 7, 8, 3]], jnp.int32)
    loo = leave_one_out(model, params, tokens, jnp.asarray([6]))
    assert np.isfinite(np.asarray(loo.importance)).all()
  assert 'shifted' not in ENCODERS and 'shifted' not in config_lib.choices()['model.encoder']
  with pytest.raises(ConfigError, match="unknown encoder 'shifted'"):
    config_lib.default_config('synthetic', 'shifted')
