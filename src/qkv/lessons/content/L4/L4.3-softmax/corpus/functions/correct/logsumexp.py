# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import math

import numpy as np


def softmax(S):
    S = np.asarray(S, dtype=float)
    top = np.max(S, axis=-1, keepdims=True)
    log_total = top + np.log(np.sum(np.exp(S - top), axis=-1, keepdims=True))
    return np.exp(S - log_total)


def attention_weights(Q, K):
    return softmax(np.einsum("qd,kd->qk", Q, K) / math.sqrt(K.shape[-1]))


def attend(Q, K, V):
    if len(K) != len(V):
        raise ValueError(f"{len(K)} keys but {len(V)} values")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"queries of {Q.shape[-1]} numbers, keys of {K.shape[-1]}")
    A = attention_weights(Q, K)
    return np.einsum("qk,kv->qv", A, V), A
