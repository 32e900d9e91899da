# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: NOT_A_PAIR
# Returns only the weights.
import numpy as np


def causal_mask(n_q, n_k):
    return np.arange(n_k)[None, :] <= np.arange(n_q)[:, None]


def masked_attention(Q, K, V, mask):
    Q, K, V = np.asarray(Q, dtype=float), np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), (Q.shape[0], K.shape[0]))
    S = Q @ K.T / np.sqrt(Q.shape[1])
    S = np.where(mask, S, -np.inf)
    alive = mask.any(axis=1, keepdims=True)
    peak = np.where(alive, S.max(axis=1, keepdims=True), 0.0)
    E = np.where(mask, np.exp(np.where(mask, S - peak, 0.0)), 0.0)
    total = E.sum(axis=1, keepdims=True)
    A = E / np.where(total > 0, total, 1.0)
    return A


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]
