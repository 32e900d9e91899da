# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: NO_KEEPDIMS
import numpy as np


def causal_mask(n_q, n_k):
    return np.tril(np.ones((n_q, n_k), dtype=bool))


def masked_attention(Q, K, V, mask):
    S = Q @ K.T / np.sqrt(Q.shape[1])
    S = np.where(mask, S, -np.inf)
    with np.errstate(all="ignore"):
        E = np.exp(S - S.max(axis=-1))
        A = np.nan_to_num(E / E.sum(axis=-1))
    return A @ V, A


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]
