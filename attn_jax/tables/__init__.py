"""Measured beside published: tables, generated Markdown blocks, and the
reproduction report.

Bottom to top: `common` (tables, blocks, run folders) and `registry`; one
module per paper (`jain_wallace`, `serrano_smith`, `wiegreffe_pinter`,
`meister`) and `benchmarks`, each registering its commands, its rows and its
sections of the reproduction report; `render`, `chosen_documents`,
`run_command` and `reproduce` (the report for people to read); `cli`
(`python -m attn_jax.report`).
"""
