# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: V_AT_A
# also hint: MISSING_KV_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
# also hint: MISSING_QK_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
import numpy as np


def softmax(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def attention_weights(Q, K):
    return softmax(Q @ K.T / np.sqrt(Q.shape[1]))


def attend(Q, K, V):
    A = attention_weights(Q, K)
    return V @ A, A
