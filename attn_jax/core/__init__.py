"""The bottom layer: errors, atomic files, sha256 records, the compilation
cache, hosts, device meshes and the registries. Imports nothing of attn-jax
above it."""
