"""qkv: queries, keys and values for one attention head, and the lesson that teaches them.

The core library needs only NumPy::

    >>> from qkv import project_qkv, attention
    >>> Q, K, V = project_qkv([[1, 2]], [[1, 0], [1, 1]], [[0, 1], [1, 0]], [[2, 0], [0, 2]])
    >>> Q
    array([[3, 2]])
"""

from qkv.attention import attention, attention_scores, causal_mask, softmax
from qkv.projection import output_shape, param_count, project_qkv, qkv_shapes

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "attention",
    "attention_scores",
    "causal_mask",
    "output_shape",
    "param_count",
    "project_qkv",
    "qkv_shapes",
    "softmax",
]
