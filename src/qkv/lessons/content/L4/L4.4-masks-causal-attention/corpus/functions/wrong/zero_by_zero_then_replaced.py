# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: ZERO_BY_ZERO
# Right numbers, but a fully masked row divides 0 by 0 (NumPy warns) before the NaN is replaced.
import numpy as np


def causal_mask(n_q, n_k):
    return np.arange(n_k)[None, :] <= np.arange(n_q)[:, None]


def masked_attention(Q, K, V, mask):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    allowed = np.broadcast_to(np.asarray(mask, dtype=bool), S.shape)
    S = np.where(allowed, S, -np.inf)
    top = np.max(np.where(allowed, S, 0.0), axis=-1, keepdims=True)
    E = np.where(allowed, np.exp(S - top), 0.0)
    A = np.nan_to_num(E / E.sum(axis=-1, keepdims=True))
    return A @ V, A


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]
