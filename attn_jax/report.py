"""`python -m attn_jax.report <command> ...`: see `attn_jax.reports.cli`."""

from attn_jax.reports.cli import main

if __name__ == '__main__':
  main()
