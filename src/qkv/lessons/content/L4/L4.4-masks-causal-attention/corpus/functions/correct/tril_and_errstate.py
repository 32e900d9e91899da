# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import numpy as np


def causal_mask(n_q, n_k):
    return np.tril(np.ones((n_q, n_k), dtype=bool))


def masked_attention(Q, K, V, mask):
    S = Q @ K.T / np.sqrt(K.shape[-1])
    S = np.where(mask, S, -np.inf)
    with np.errstate(invalid="ignore"):
        S = S - S.max(axis=-1, keepdims=True)
        W = np.exp(S)
        A = W / W.sum(axis=-1, keepdims=True)
    A = np.nan_to_num(A, nan=0.0)
    return A @ V, A


def padding_mask(lengths, n_k):
    lengths = np.asarray(lengths)
    return np.arange(n_k) < lengths[:, None]
