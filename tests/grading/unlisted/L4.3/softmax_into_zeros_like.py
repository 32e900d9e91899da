# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.3/functions
# expected: relation:truncated
# cause: dtype|integer|int
# source: loop-style NumPy softmax that fills a buffer made by np.zeros_like(x): the buffer takes the scores' dtype, so integer scores truncate every weight to 0 (or 1)
import numpy as np


def softmax(S):
    S = np.asarray(S)
    out = np.zeros_like(S)
    flat, rows = S.reshape(-1, S.shape[-1]), out.reshape(-1, S.shape[-1])
    for i in range(flat.shape[0]):
        e = np.exp(flat[i] - flat[i].max())
        rows[i] = e / e.sum()
    return out


def attention_weights(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return softmax(Q @ K.T / np.sqrt(Q.shape[1]))


def attend(Q, K, V):
    Q, K, V = np.asarray(Q, dtype=float), np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has {K.shape[0]} rows but V has {V.shape[0]}")
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}")
    A = attention_weights(Q, K)
    return A @ V, A
