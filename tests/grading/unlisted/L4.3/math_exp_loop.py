# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.3/functions
# expected: crash
# cause: exp|overflow|math
# source: row-by-row softmax with math.exp, which raises OverflowError where NumPy would give inf
import math
import numpy as np


def softmax(S):
    S = np.asarray(S, dtype=float)
    out = np.empty_like(S)
    for i, row in enumerate(np.atleast_2d(S)):
        e = [math.exp(v) for v in row]
        total = sum(e)
        np.atleast_2d(out)[i] = [v / total for v in e]
    return out


def attention_weights(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}; both need d_k columns.")
    return softmax(Q @ K.T / np.sqrt(Q.shape[1]))


def attend(Q, K, V):
    K, V = np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has {K.shape[0]} rows but V has {V.shape[0]}; each key needs one value.")
    A = attention_weights(Q, K)
    return A @ V, A
