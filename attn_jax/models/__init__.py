"""Models as pure functions of a params pytree: embed -> encode -> score -> project -> decode."""

from attn_jax.models.model import Forward, Model, build_model

__all__ = ['Forward', 'Model', 'build_model']
