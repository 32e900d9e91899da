# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: SCORES_IN_PLACE
# Right weights, but the caller's scores are shifted in place (S -= max).
import numpy as np


def softmax(S):
    S = np.asarray(S, dtype=float)
    S -= S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-1, keepdims=True)


def attention_weights(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return softmax(Q @ K.T / np.sqrt(Q.shape[-1]))


def attend(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has {K.shape[0]} rows but V has {V.shape[0]}")
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}")
    A = attention_weights(Q, K)
    return A @ V, A
