"""In-domain word vectors built from the text that is here (`python -m attn_jax.vectors`)."""

from attn_jax.vectors.build import IN_DOMAIN, describe, ensure_vectors, vectors_path

__all__ = ['IN_DOMAIN', 'describe', 'ensure_vectors', 'vectors_path']
