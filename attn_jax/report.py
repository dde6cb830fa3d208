"""`python -m attn_jax.report <command> ...`: see `attn_jax.tables.report_command_line`."""

from attn_jax.core import console
from attn_jax.tables.report_command_line import main

if __name__ == '__main__':
  console.run(main)
