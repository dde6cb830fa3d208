"""The command-line tools' output on terminals that cannot show every character."""

from attn_jax.core import console


def test_symbols_get_readable_stand_ins_and_the_rest_an_escape():
  text = 'τ(α, grad) 0.344 ± 0.027 · code ≡Δ ≠ ? → ✓ 语'
  assert text.encode('ascii', errors=console.HANDLER) == (
      b'tau(alpha, grad) 0.344 +/- 0.027 . code ==D != ? -> ok \\u8bed')
  # latin-1 keeps what it has (±, ·) and stands in for the rest.
  assert text.encode('latin-1', errors=console.HANDLER).decode('latin-1') == (
      'tau(alpha, grad) 0.344 ± 0.027 · code ==D != ? -> ok \\u8bed')
