"""How the `loo` stage sizes its chunks (`feature_importance.loo_chunks`):
from XLA's memory analysis of the compiled chunk where the documents are long
enough to matter, so a chunk's temporary memory stays within
`analysis.loo.max_chunk_bytes`; the unmeasured shortcut for short documents
is justified by the ratio it assumes, measured here for every encoder family
(classification and QA) on the J&W recipe's sizes."""

import jax
import ml_collections
import numpy as np
import pytest

from attn_jax.analysis import leave_one_out
from attn_jax.config.schema import default_config
from attn_jax.models import build_model
from attn_jax.stages import feature_importance, stage
from attn_jax.stages.feature_importance import UNMEASURED_ALLOWANCE, loo_chunks
from analysis_helpers import documents, pad, setup


def context(model, params, model_cfg, budget, docs_per_chunk=4):
  cfg = ml_collections.ConfigDict({'model': model_cfg.to_dict(), 'analysis': {
      'loo': {'mode': 'delete', 'docs_per_chunk': docs_per_chunk, 'max_chunk_bytes': budget}}})
  return stage.AnalysisContext(model, params, None, 'test', cfg, '', '')


class Batch:
  def __init__(self, tokens, lengths):
    self.tokens, self.lengths = np.asarray(tokens), np.asarray(lengths)


def measured(ctx, batch, docs, rows):
  return ctx.temp_bytes(*feature_importance._loo_fn(ctx, docs, rows), batch.tokens, batch.lengths)  # pylint: disable=protected-access


@pytest.fixture(scope='module')
def bilstm():
  from conftest import tiny_model_config
  model, params = setup('bilstm')
  tokens, lengths = pad(documents(lengths=(40, 57, 33, 60), seed=3), 64)
  return model, params, tiny_model_config('bilstm'), Batch(tokens, lengths)


def test_short_documents_are_not_compiled_to_be_measured(bilstm, monkeypatch):
  model, params, cfg, batch = bilstm
  ctx = context(model, params, cfg, budget=2**40)
  monkeypatch.setattr(stage.AnalysisContext, 'temp_bytes', lambda *a: pytest.fail('measured'))
  assert loo_chunks(ctx, batch) == (4, None)
  assert loo_chunks(context(model, params, cfg, budget=None), batch) == (4, None)


def test_a_chunk_holds_as_many_documents_as_its_measured_memory_allows(bilstm):
  model, params, cfg, batch = bilstm
  one = measured(context(model, params, cfg, 2**40), batch, 1, None)
  two = measured(context(model, params, cfg, 2**40), batch, 2, None)
  assert one < two <= 2 * one  # documents share the batch's forward pass
  for budget, want in ((one, (1, None)), (2 * one - 1, (1, None)), (2 * one, (2, None))):
    assert loo_chunks(context(model, params, cfg, budget), batch) == want, budget


def test_a_document_too_long_alone_re_encodes_its_rows_within_the_budget(bilstm):
  model, params, cfg, batch = bilstm
  one = measured(context(model, params, cfg, 2**40), batch, 1, None)
  ctx = context(model, params, cfg, one // 2)
  docs, rows = loo_chunks(ctx, batch)
  assert docs == 1 and rows is not None and 1 <= rows < 62
  if rows > 1:
    assert measured(ctx, batch, 1, rows) <= one // 2
  fast = leave_one_out(model, params, batch.tokens, batch.lengths)
  chunked = ctx.jit(*feature_importance._loo_fn(ctx, docs, rows))(params, batch.tokens, batch.lengths)  # pylint: disable=protected-access
  np.testing.assert_allclose(chunked.importance, fast.importance, atol=1e-6)


FAMILIES = [('sst', e) for e in ('bilstm', 'cnn', 'average', 'transformer')] + [
    ('babi3', e) for e in ('bilstm', 'cnn', 'average')]


@pytest.mark.heavy
@pytest.mark.parametrize('dataset,encoder', FAMILIES, ids=lambda p: str(p))
def test_no_chunk_program_holds_more_than_the_allowance_assumes(dataset, encoder):
  """A chunk the stage does not measure runs the model's own path (its
  family's variant states, or every variant re-encoded): at the J&W
  recipe's sizes its XLA temporary bytes stay under UNMEASURED_ALLOWANCE
  times its variant rows' states, so it fits its budget."""
  cfg = default_config(dataset, encoder).model
  if dataset.startswith('babi'):
    cfg.query, cfg.classes = True, 6
  model = build_model(cfg, 50)
  params = model.init(jax.random.PRNGKey(0))
  width = 64
  rng = np.random.default_rng(0)
  tokens = np.zeros((4, width), np.int32)
  lengths = np.array([60, 41, 52, 30], np.int32)
  for b, n in enumerate(lengths):
    tokens[b, :n] = [2, *rng.integers(4, 50, n - 2), 3]
    if dataset.startswith('babi'):
      tokens[b, n:n + 3] = [2, 7, 3]
  batch = Batch(tokens, lengths)
  ctx = context(model, params, cfg, 2**40)
  hidden = jax.eval_shape(lambda p, t, n: model.encode(p, model.embed(p, t), n), params,
                          jax.ShapeDtypeStruct((1, width), np.int32), jax.ShapeDtypeStruct((1,), np.int32))
  row = sum(int(np.prod(x.shape[1:])) * x.dtype.itemsize for x in jax.tree.leaves(hidden))
  for docs in (1, 4):  # the model's own path, as the stage runs it unmeasured
    ratio = measured(ctx, batch, docs, None) / (docs * (width - 2) * row)
    assert ratio <= UNMEASURED_ALLOWANCE, (docs, ratio)
