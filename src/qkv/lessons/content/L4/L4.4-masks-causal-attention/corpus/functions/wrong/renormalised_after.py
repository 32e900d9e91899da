# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: RENORMALISED
import numpy as np


def causal_mask(n_q, n_k):
    return np.tril(np.ones((n_q, n_k), dtype=bool))


def masked_attention(Q, K, V, mask):
    S = Q @ K.T / np.sqrt(Q.shape[1])
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    A = E / E.sum(axis=-1, keepdims=True)  # the softmax over every key,
    A = A * mask  # then the masked keys dropped
    total = A.sum(axis=-1, keepdims=True)
    A = np.where(total > 0, A / np.where(total > 0, total, 1.0), 0.0)  # and the rest renormalised
    return A @ V, A


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]
