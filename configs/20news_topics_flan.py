"""S&S's FLAN on 20news_topics (App. A.1). Variants: [rnn|conv|noenc][,previous][,smoke], e.g. ':conv' or ':noenc,smoke'."""

from attn_jax.config.serrano_smith_config import ss_config


def get_config(variant: str = ''):
  return ss_config('20news_topics', 'flan', variant)
