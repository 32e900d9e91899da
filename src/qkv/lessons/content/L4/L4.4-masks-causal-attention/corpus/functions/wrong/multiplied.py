# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: MULTIPLIED
# Scores multiplied by the mask: a masked score becomes 0, not -inf.
import numpy as np


def causal_mask(n_q, n_k):
    return np.arange(n_k)[None, :] <= np.arange(n_q)[:, None]


def masked_attention(Q, K, V, mask):
    Q, K, V = np.asarray(Q, dtype=float), np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), (Q.shape[0], K.shape[0]))
    S = Q @ K.T / np.sqrt(Q.shape[1])
    S = S * mask
    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)
    return A @ V, A


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]
