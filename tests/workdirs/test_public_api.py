"""`import attn_jax as aj`: the top level, `aj.explain`, and the README's
"Use it from Python" block run as written."""

import os
import re

import jax
import numpy as np
import pytest

import attn_jax as aj
from attn_jax.data.vocabulary import UNK
from attn_jax.explain import TextWarning
import helpers

ROOT = helpers.ROOT
pytestmark = pytest.mark.usefixtures('optax_promotion')  # training runs optax


@pytest.fixture(scope='module')
def workdir(smoke_trained, tmp_path_factory):
  return str(helpers.trained_copy(smoke_trained, tmp_path_factory.mktemp('api') / 'synthetic'))


def readme_block() -> str:
  with open(os.path.join(ROOT, 'README.md')) as f:
    text = f.read()
  found = re.search(r'<!-- use-it-from-python[^>]*-->\n```python\n(.*?)```', text, re.S)
  assert found, 'README has no "Use it from Python" block'
  return found.group(1)


def test_the_top_level_exports_what_the_readme_names():
  for name in ('restore', 'explain', 'load_dataset', 'build_model', 'analysis', 'Explanation'):
    assert hasattr(aj, name), name
  for name in ('leave_one_out', 'gradient_importance', 'kendall_tau', 'permutation_test',
               'adversarial_attention', 'single_weight_erasure', 'erase_until_flip',  # J&W, S&S
               'wp_tvd', 'attention_kl', 'jw_jsd',  # W&P
               'input_gradient', 'state_gradient', 'hidden_gradient', 'attention_deletion',
               'normalised_entropy'):  # Meister et al.
    assert callable(getattr(aj.analysis, name)), name
  assert set(aj.analysis.__all__) <= set(dir(aj.analysis))


def test_the_readme_block_runs_and_explains_each_text(workdir, capsys):
  code = readme_block().replace("'workdirs/synthetic'", repr(workdir))
  scope = {}
  with jax.numpy_dtype_promotion('standard'):
    exec(compile(code, 'README.md', 'exec'), scope)  # pylint: disable=exec-used
  explanations = scope['explanations']
  assert [len(e.words) for e in explanations] == [5, 4]
  assert 'alpha' in capsys.readouterr().out
  for e in explanations:  # (the smoke model is barely trained: no claim on which words win)
    assert 0.0 < e.prob < 1.0 and abs(float(e.alpha.sum()) - 1.0) < 1e-5
    assert e.gradient.shape == e.loo.shape == e.alpha.shape == (len(e.words),)
  assert scope['top'] == [e.words[int(np.argmax(e.alpha))] for e in explanations]
  html = explanations[0]._repr_html_()  # what a notebook shows: the heatmap
  assert html == explanations[0].heatmap_html()
  assert all(f'>{w}</span>' in html for w in explanations[0].words)
  rows = ('α', 'gradient (α detached)', 'leave-one-out')  # a run's model imposes α: J&W's gradient
  assert [m for m in rows if f'{m} = ' in html] == list(rows)


def test_explain_equals_the_analyses_on_the_same_tokens(workdir):
  run = aj.restore(workdir)
  text = 'w0003 good1 zzz_not_a_word w0042'
  e, = aj.explain(run, text)
  assert e.words == text.split() and list(e.known) == [True, True, False, True]
  tokens = run.vocab.encode(e.words)[None]
  assert tokens[0, 3] == UNK
  lengths = np.array([tokens.shape[1]], np.int32)
  forward = run.model.forward(run.params, tokens, lengths)
  np.testing.assert_allclose(e.alpha, forward.alpha[0, 1:-1], atol=1e-6)
  np.testing.assert_allclose(e.prob, jax.nn.sigmoid(forward.logits[0]), atol=1e-6)
  np.testing.assert_allclose(
      e.gradient, aj.analysis.gradient_importance(run.model, run.params, tokens, lengths)[0, 1:-1],
      atol=1e-6)
  np.testing.assert_allclose(
      e.loo, aj.analysis.leave_one_out(run.model, run.params, tokens, lengths).importance[0, 1:-1],
      atol=1e-6)
  assert abs(float(e.alpha.sum()) - 1.0) < 1e-5


def test_a_text_without_words_is_skipped_by_its_index(workdir):
  with pytest.warns(TextWarning, match=r'text 1 .* no words'):
    got = aj.explain(workdir, ['good0 w0001', '   '])
  assert [e.skipped for e in got] == ['', 'no words once tokenized'] and len(got[0].alpha) == 2
