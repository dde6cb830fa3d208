"""Tokenisers and newsgroup cleaning (J&W preprocessing, `preprocess/`)."""

from attn_jax.data import newsgroups_text, tokenize


def test_sst_tokens():
  assert tokenize.sst("A bad , -LRB- very -RRB- dull film 's end") == ['a', 'bad', 'very', 'dull', 'film', 's', 'end']
  assert tokenize.sst('-LRB- , -RRB-') == []


def test_keras_words_keep_apostrophes_and_turn_br_tags_into_br():
  assert tokenize.keras_words("I didn't LIKE it.<br /><br />Bad!") == ['i', "didn't", 'like', 'it', 'br', 'br', 'bad']


def test_spacy_like_marks_numbers_and_splits_punctuation():
  assert tokenize.spacy_like('Stocks rose 3.5% in 2004, (Reuters)') == [
      'stocks', 'rose', 'qqq', '%', 'in', 'qqq', ',', '(', 'reuters', ')']


def test_newsgroups_tokens_keep_only_the_last_symbol_of_each_run():
  # J&W's re.sub(r'(\W)+', r' \1 ', ...) after joining spaCy tokens with spaces
  assert tokenize.newsgroups('Great game, eh?') == ['great', 'game', 'eh', '?']
  assert tokenize.newsgroups('...') == ['.']


POST = """From: fan@uni.edu
Subject: Re: Leafs

In article <1@x> someone writes:
> The Leafs stink.
I disagree, they won 5 games.
|quoted too
--
Fan, Toronto
"""


def test_newsgroup_header_quotes_and_footer_are_removed():
  assert newsgroups_text.strip_all(POST) == 'I disagree, they won 5 games.'


def test_footer_kept_when_there_is_no_separator_line():
  assert newsgroups_text.strip_footer('a\nb') == 'a\nb'
