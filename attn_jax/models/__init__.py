"""Models as pure functions of a params pytree: embed -> encode -> score -> project -> decode.

`interface` states what an analysis needs from any model (`AttentionModel`,
`CAPABILITIES`); `adapters` builds one from functions or a Flax module
(`forward_only`: from its forward function alone); `heads` picks one α of a
multi-head self-attention model; `stock` puts flax's own attention layers
in the interface.
"""

from attn_jax.models.interface import CAPABILITIES, AttentionModel, InterfaceError
from attn_jax.models.model import Forward, Model, build_model

__all__ = ['AttentionModel', 'CAPABILITIES', 'Forward', 'InterfaceError', 'Model', 'build_model']
