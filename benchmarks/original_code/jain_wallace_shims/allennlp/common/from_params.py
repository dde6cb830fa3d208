"""allennlp.common.from_params.FromParams (see allennlp.common)."""

from allennlp.common import FromParams  # noqa: F401
