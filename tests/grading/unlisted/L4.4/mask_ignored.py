# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.4/functions
# expected: mutant
# cause: mask
# source: a masked attention that takes the mask and never uses it
import numpy as np


def causal_mask(n_q, n_k):
    return np.arange(n_k)[None, :] <= np.arange(n_q)[:, None]


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]


def masked_attention(Q, K, V, mask):
    Q, K, V = np.asarray(Q, dtype=float), np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    S = Q @ K.T / np.sqrt(Q.shape[1])
    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)
    return A @ V, A
