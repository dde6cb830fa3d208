"""The encoder families, one module each, registered by name
(`attn_jax.core.registry.ENCODERS`; the record is `base.Encoder`).

A module here builds its flax encoder from `config.model`, declares its own
config keys, recipe and checks, and carries its fast leave-one-out paths
(the states of every one-word deletion or replacement of a document), which
`Model.encode_deletions` and the analyses use when they exist. Adding an
encoder is one module here plus its test (and a config file to run it).
"""
