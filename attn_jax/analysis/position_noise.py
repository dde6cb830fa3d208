"""Random draws that do not depend on how much a document was padded.

Drawing `uniform(key, (P, L))` gives different numbers for the same
document at different padded widths L; drawing each position from its own
key, `fold_in(key, t)`, gives the same numbers for every position a
document has, whatever batch (and so bucket width) it lands in.
"""

import jax
import jax.numpy as jnp


def position_uniform(key: jax.Array, leading: tuple[int, ...], width: int,
                     dtype=jnp.float32) -> jnp.ndarray:
  """U[0, 1) of shape leading + (width,); column t depends only on (key, t)."""
  draw = lambda t: jax.random.uniform(jax.random.fold_in(key, t), leading, dtype)
  return jnp.moveaxis(jax.vmap(draw)(jnp.arange(width)), 0, -1)


def position_normal(key: jax.Array, leading: tuple[int, ...], width: int,
                    dtype=jnp.float32) -> jnp.ndarray:
  """N(0, 1) of shape leading + (width,); column t depends only on (key, t)."""
  draw = lambda t: jax.random.normal(jax.random.fold_in(key, t), leading, dtype)
  return jnp.moveaxis(jax.vmap(draw)(jnp.arange(width)), 0, -1)


def position_bits(key: jax.Array, leading: tuple[int, ...], width: int) -> jnp.ndarray:
  """Random uint32 of shape leading + (width,); column t depends only on (key, t)."""
  draw = lambda t: jax.random.bits(jax.random.fold_in(key, t), leading, jnp.uint32)
  return jnp.moveaxis(jax.vmap(draw)(jnp.arange(width)), 0, -1)
