# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: WRONG_AXIS
# also hint: MISSING_KV_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
# also hint: MISSING_QK_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
# softmax is right, but attention_weights writes its own softmax over axis 0, down each column of scores.
import numpy as np


def softmax(S):
    S = np.asarray(S, dtype=float)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def attention_weights(Q, K):
    S = Q @ K.T / np.sqrt(Q.shape[1])
    E = np.exp(S - S.max(axis=0, keepdims=True))
    return E / E.sum(axis=0, keepdims=True)


def attend(Q, K, V):
    A = attention_weights(Q, K)
    return A @ V, A
