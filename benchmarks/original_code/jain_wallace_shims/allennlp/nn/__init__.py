"""Stand-in for allennlp.nn (only `activations`)."""
