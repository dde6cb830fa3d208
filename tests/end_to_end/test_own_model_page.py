"""docs/own_model.md runs as printed: its Python blocks in one fresh process
(a GRU, a Transformer per head / mean / rollout and an NNX model, each with
every analysis that applies), and its generated blocks are what that run
and the code make (`python -m attn_jax.tables.own_model_page`)."""

import pytest

from attn_jax.tables import own_model_page as page

pytestmark = pytest.mark.slow


@pytest.mark.heavy
def test_the_page_runs_as_printed_and_its_tables_are_current():
  with open(page.PAGE) as f:
    text = f.read()
  output = page.run_page(text)
  assert output.count('training accuracy 1.00') == 3, output
  for view in ('head 0:', 'head 1:', 'mean:', 'rollout:'):
    assert view in output
  assert page.render(text, output) == text, f'stale generated blocks: rerun {page.COMMAND}'
