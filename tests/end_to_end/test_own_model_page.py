"""docs/own_model.md runs as printed: its Python blocks in one fresh process
(a GRU, a Transformer per head / mean / rollout and an NNX model, each with
every analysis that applies; the GRU as its forward function alone, a
compact linen module, flax's stock attention in linen and NNX), and its
generated blocks are what that run
and the code make (`python -m attn_jax.tables.own_model_page`)."""

import pytest

from attn_jax.tables import own_model_page as page

pytestmark = pytest.mark.slow


@pytest.mark.heavy
def test_the_page_runs_as_printed_and_its_tables_are_current():
  with open(page.PAGE) as f:
    text = f.read()
  output = page.run_page(text)
  assert output.count('training accuracy 1.00') == 6, output
  for line in ('head 0:', 'head 1:', 'mean:', 'rollout:', 'forward only:', 'compact module:',
               'stock attention, head 0:', 'NNX stock attention'):
    assert line in output
  # aj.explain on a head holds its α; on the mean and the rollout the gradient is attached
  assert output.count('gradient (α detached)') == 1 and output.count('gradient (attention attached)') == 2
  assert page.render(text, output) == text, f'stale generated blocks: rerun {page.COMMAND}'
