"""Stand-in for allennlp 0.8.3: the registry and `from_params` that J&W's
encoders, attentions and decoder are built with (see ../README.md)."""
