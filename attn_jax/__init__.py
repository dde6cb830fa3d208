"""attn-jax: is attention explanation? The four papers' experiments in JAX."""
