"""The datasets a config can name, one module each, registered by name
(`attn_jax.core.registry.DATASETS`; the record is `base.DatasetSpec`).

A module here declares everything the project needs to know of its
dataset: where its files are and what the reference release's bytes are
(`sources.Source`, `sources.KnownFile`), the tfds builder that prepares them,
the protocol that turns raw records into tokenised, labelled splits (and the
tokeniser a user's own text goes through), its texts (one, or a passage and a
query), its label space, which of its text in-domain vectors may see, and
its model defaults. The data loader, the configs' choices and checks, the
vectors' corpus, `aj.explain` and the reports read these declarations and
name no dataset themselves. Adding a dataset is one module here, a config
file to run it and its test (docs/architecture.md walks through `snli`).
"""
