"""S&S's FLAN on imdb_ratings (App. A.1). Variants: [rnn|conv|noenc][,previous][,smoke], e.g. ':conv' or ':noenc,smoke'."""

from attn_jax.config.serrano_smith_config import ss_config


def get_config(variant: str = ''):
  return ss_config('imdb_ratings', 'flan', variant)
