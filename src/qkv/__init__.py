"""qkv: queries, keys and values, attention in one head and in many, the transformer block around it, and
the chapter that teaches them.

The core library needs only NumPy::

    >>> from qkv import project_qkv, attention
    >>> Q, K, V = project_qkv([[1, 2]], [[1, 0], [1, 1]], [[0, 1], [1, 0]], [[2, 0], [0, 2]])
    >>> Q
    array([[3, 2]])
"""

from qkv.attention import attention, attention_scores, causal_mask, softmax
from qkv.multihead import merge_heads, multi_head_attention, split_heads
from qkv.projection import output_shape, param_count, project_qkv, qkv_shapes
from qkv.transformer import BLOCK_PARAMS, gelu, layer_norm, transformer_block

__version__ = "0.1.0"

__all__ = [
    "BLOCK_PARAMS",
    "__version__",
    "attention",
    "attention_scores",
    "causal_mask",
    "gelu",
    "layer_norm",
    "merge_heads",
    "multi_head_attention",
    "output_shape",
    "param_count",
    "project_qkv",
    "qkv_shapes",
    "softmax",
    "split_heads",
    "transformer_block",
]
