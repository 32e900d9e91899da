"""Programs for the tests of a class's mistakes (``qkv mistakes``): one mistake of L4.2's scaled scores
written in five styles, and other mistakes of the same function.

The mistake: the raw scores divided by the square root of Q's whole size (n_q · d_k) instead of √d_k. No
hint of the lesson names it, so each style alone gets only the grader's generic sentence.
"""

from __future__ import annotations

LESSON = "L4.2"
EXERCISE = "functions"
FUNCTION = "scaled_scores"

_DOT = """import math

import numpy as np


def dot_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}.")
    return Q @ K.T


def score_spread(d_k):
    return float(np.sqrt(d_k))

"""

_STYLES = [
    """def scaled_scores(Q, K):
    return dot_scores(Q, K) / np.sqrt(np.asarray(Q).size)
""",
    """def scaled_scores(Q, K):
    Q = np.asarray(Q, dtype=float)
    n_q, d_k = Q.shape
    if d_k != np.shape(K)[1]:
        raise ValueError("Q and K must have as many columns.")
    return np.dot(Q, np.asarray(K, dtype=float).T) / math.sqrt(n_q * d_k)
""",
    """def scaled_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"d_k differs: {Q.shape[1]} and {K.shape[1]}.")
    scale = 1.0 / (Q.shape[0] * Q.shape[1]) ** 0.5
    return np.einsum("qd,kd->qk", Q, K) * scale
""",
    """def scaled_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if len(Q[0]) != len(K[0]):
        raise ValueError("The rows of Q and K differ in length.")
    out = np.zeros((Q.shape[0], K.shape[0]))
    for i in range(Q.shape[0]):
        for j in range(K.shape[0]):
            out[i, j] = sum(Q[i, t] * K[j, t] for t in range(Q.shape[1]))
    return out / math.sqrt(len(Q.ravel()))
""",
    """def scaled_scores(Q, K):
    raw = dot_scores(Q, K)
    size = np.prod(np.shape(Q))
    return raw * size ** -0.5
""",
]

STYLES = [_DOT + style for style in _STYLES]
"""Five programs of one mistake, each in its own style."""

OTHERS = [
    _DOT
    + """def scaled_scores(Q, K):
    return dot_scores(Q, K) / np.asarray(Q).shape[1]
""",
    _DOT
    + """def scaled_scores(Q, K):
    return dot_scores(Q, K) / np.sqrt(np.asarray(Q).shape[1] + np.asarray(K).shape[0])
""",
]
"""Two other mistakes of the same function (divided by d_k; by √(d_k + n_k))."""
