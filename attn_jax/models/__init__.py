"""Models as pure functions of a params pytree: embed -> encode -> score -> project -> decode.

`interface` states what an analysis needs from any model (`AttentionModel`,
`CAPABILITIES`); `adapters` builds one from functions or a Flax module;
`heads` picks one α of a multi-head self-attention model.
"""

from attn_jax.models.interface import CAPABILITIES, AttentionModel, InterfaceError
from attn_jax.models.model import Forward, Model, build_model

__all__ = ['AttentionModel', 'CAPABILITIES', 'Forward', 'InterfaceError', 'Model', 'build_model']
