# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.3/functions
# pinned: named first (asserted one by one)
# cause: transpos|d_v|n_q
# source: an attention output returned transposed, (d_v, n_q)
# expected: relation:transposed
# The output returned transposed, (d_v, n_q).
import numpy as np


def softmax(S):
    S = np.asarray(S, dtype=float)
    E = np.exp(S - S.max(axis=-1, keepdims=True))  # each row's maximum becomes 0: no overflow
    return E / E.sum(axis=-1, keepdims=True)


def attention_weights(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return softmax(Q @ K.T / np.sqrt(Q.shape[1]))  # (n_q, n_k)


def attend(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has d_k = {Q.shape[1]} columns but K has {K.shape[1]}.")
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has {K.shape[0]} rows (keys) but V has {V.shape[0]} (values).")
    A = attention_weights(Q, K)  # (n_q, n_k)
    return (A @ V).T, A  # (n_q, d_v), (n_q, n_k)
