# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: SCORES_TRANSPOSED
# also hint: WEIGHTS_TRANSPOSED  (attend crashes alike: A comes out (n_k, n_q) either way)
import numpy as np


def softmax(S):
    S = np.asarray(S, dtype=float)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def attention_weights(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}; both need d_k columns.")
    return softmax(K @ Q.T / np.sqrt(Q.shape[1]))  # (n_q, n_k)


def attend(Q, K, V):
    K, V = np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K has {K.shape[0]} rows but V has {V.shape[0]}; each key needs one value.")
    A = attention_weights(Q, K)  # (n_q, n_k)
    return A @ V, A  # (n_q, d_v), (n_q, n_k)
