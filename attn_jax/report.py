"""`python -m attn_jax.report <command> ...`: see `attn_jax.reports.report_command_line`."""

import attn_jax.studies  # noqa: F401  (registers the `study` command: the studies' tables)
from attn_jax.reports.report_command_line import main

if __name__ == '__main__':
  main()
