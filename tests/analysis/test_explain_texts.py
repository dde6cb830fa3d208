"""`aj.explain` sizes its work to the memory there is (chunked with the same
scores, or refused in one line naming a length that fits), and reads odd
texts: empty ones skipped, ones of only unknown words flagged, ids outside
the embedding table refused, `vocab=` of each kind it takes (and no other)."""

import warnings

import numpy as np
import pytest

import attn_jax as aj
from attn_jax.core import memory_budget, output_folders
from attn_jax.core.errors import AttnJaxError
from attn_jax.data.vocabulary import SPECIALS, Vocabulary
from attn_jax.explain import TextError, TextWarning
from attn_jax.stages import feature_importance, text_chunks
from attn_jax.stages.text_chunks import TooLongForMemory
from analysis_helpers import VOCAB, setup

WORDS = {f'w{i}': i for i in range(4, VOCAB)}


def texts(*lengths, seed=0):
  rng = np.random.default_rng(seed)
  return [' '.join(f'w{i}' for i in rng.integers(4, VOCAB, size=n)) for n in lengths]


@pytest.fixture(scope='module')
def bilstm():
  return setup('bilstm')


def one_variant_at_a_time(model, params, n: int) -> int:
  """XLA's bytes for one n-word text with its variants one at a time: the least explain can ask for it."""
  return text_chunks.least_bytes(text_chunks.context(model, params, {'test': 'one variant'}, 2**40), n)


def test_a_small_budget_chunks_the_work_and_gives_the_same_scores(bilstm, monkeypatch):
  model, params = bilstm
  given = texts(3, 30, 12)
  whole = aj.explain(model, given, params=params, vocab=WORDS)
  chunks = []
  real = feature_importance.loo_chunks
  monkeypatch.setattr(feature_importance, 'loo_chunks', lambda ctx, batch: chunks.append(real(ctx, batch)) or chunks[-1])
  budget = 2 * one_variant_at_a_time(model, params, 30)
  chunked = aj.explain(model, given, params=params, vocab=WORDS, memory_bytes=budget)
  assert any(rows is not None for _, rows in chunks), chunks  # some variants re-encoded a few rows at a time
  assert [e.text for e in chunked] == given
  for a, b in zip(whole, chunked):
    assert a.prob == pytest.approx(b.prob, abs=1e-6)
    for field in ('alpha', 'gradient', 'loo'):
      np.testing.assert_allclose(getattr(b, field), getattr(a, field), atol=1e-6, err_msg=field)


def test_a_text_too_long_for_any_chunking_is_refused_in_one_line_with_a_length_that_fits(bilstm):
  model, params = bilstm
  budget = one_variant_at_a_time(model, params, 60) // 2
  with pytest.raises(TooLongForMemory) as refused:
    aj.explain(model, texts(5, 60), params=params, vocab=WORDS, memory_bytes=budget)
  message = str(refused.value)
  assert '\n' not in message and isinstance(refused.value, AttnJaxError)
  assert message.startswith('text 1 has 60 words: explaining it needs about ')
  assert f'more than the {output_folders.size(budget)} it may use (memory_bytes={budget:,})' in message
  fit = int(message.split('texts of up to ')[1].split(' words fit')[0])
  assert 1 <= fit < 60
  e, = aj.explain(model, texts(fit), params=params, vocab=WORDS, memory_bytes=budget)  # the advice holds
  assert len(e.loo) == fit


def test_too_many_words_is_refused_without_advice_to_ask_for_more(bilstm):
  model, params = bilstm
  with pytest.raises(TextError, match='text 0 has 50 words, more than max_words=20: split it into texts of '
                                      'at most 20 words') as refused:
    aj.explain(model, ['w4 ' * 50], params=params, vocab=WORDS, max_words=20)
  assert 'raise' not in str(refused.value)


def test_the_memory_there_is_is_known_here():
  free, where = memory_budget.available()
  assert free > 0 and where
  budget, said = memory_budget.budget()
  assert budget == pytest.approx(free * memory_budget.HEADROOM, rel=0.2) and said.startswith('75% of the ')
  assert [output_folders.size(n) for n in (1.93e12, 7.7e10, 5.12e8, 3e4)] == ['1.9 TB', '77.0 GB', '512.0 MB', '30 KB']


def test_an_empty_text_is_skipped_and_flagged_in_its_place(bilstm):
  model, params = bilstm
  given = texts(3, 6, seed=1)
  with warnings.catch_warnings(record=True) as warned:
    warnings.simplefilter('always')
    got = aj.explain(model, [given[0], '   ', given[1], ''], params=params, vocab=WORDS)
  assert [(w.category, str(w.message).split(': skipped')[0]) for w in warned] == [
      (TextWarning, "text 1 ('   ') has no words once tokenized for this model"),
      (TextWarning, "text 3 ('') has no words once tokenized for this model")]
  assert [e.skipped for e in got] == ['', 'no words once tokenized', '', 'no words once tokenized']
  alone = aj.explain(model, given, params=params, vocab=WORDS)
  np.testing.assert_allclose(got[2].loo, alone[1].loo, atol=1e-6)
  assert np.isnan(got[1].prob) and got[1].words == [] and len(got[1].alpha) == 0
  assert got[1].table() == '(skipped: no words once tokenized)' and got[1].heatmap_png('unused') == []
  assert 'skipped: no words once tokenized' in got[1].heatmap_html()
  with pytest.warns(TextWarning):
    assert all(e.skipped for e in aj.explain(model, ['', ' '], params=params, vocab=WORDS))


def test_a_text_of_only_unknown_words_is_flagged_and_warned_of(bilstm):
  model, params = bilstm
  with pytest.warns(TextWarning, match=r'text 0 .* all its 2 word\(s\) are unknown'):
    unknown, partly = aj.explain(model, ['zzz qqq', 'w4 zzz'], params=params, vocab=WORDS)
  assert unknown.only_unknown and not unknown.known.any() and np.isfinite(unknown.prob)
  assert not partly.only_unknown and partly.known.tolist() == [True, False]
  assert 'every word read as UNK' in unknown.heatmap_html()


@pytest.mark.parametrize('word_id', [VOCAB, 10**6, -1])
def test_an_id_outside_the_embedding_table_is_refused_naming_it_and_the_table(bilstm, word_id):
  model, params = bilstm
  with pytest.raises(TextError) as refused:
    aj.explain(model, ['w4', 'w5 big'], params=params, vocab={**WORDS, 'big': word_id})
  assert str(refused.value) == (f"text 1: the word 'big' has id {word_id:,}, outside the model's embedding table "
                                f'of {VOCAB} rows (ids 0 .. {VOCAB - 1}): give vocab= ids 0 .. {VOCAB - 1}')


def test_vocab_is_a_vocabulary_a_mapping_or_a_function_of_one_word(bilstm):
  model, params = bilstm
  text = ['w4 w9 zzz w7']
  by_mapping, = aj.explain(model, text, params=params, vocab=WORDS)
  for vocab in (WORDS.get, lambda w: WORDS.get(w), Vocabulary.from_tokens(list(SPECIALS) + list(WORDS))):
    got, = aj.explain(model, text, params=params, vocab=vocab)
    assert got.known.tolist() == [True, True, False, True]
    np.testing.assert_array_equal(got.loo, by_mapping.loo)
  with pytest.raises(TypeError, match=r'vocab is an attn_jax Vocabulary, a mapping word -> id .* or a function '
                                      r'word -> id .*; not list$'):
    aj.explain(model, text, params=params, vocab=list(WORDS))
  with pytest.raises(TypeError, match=r"vocab= gave list '\[4\]' for the word 'w4'; an id is an int"):
    aj.explain(model, text, params=params, vocab=lambda w: [WORDS.get(w)])
