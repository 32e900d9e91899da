# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.4/functions
# pinned: named first (asserted one by one)
# cause: j - 1|ahead|one|index|diagonal|<=
# source: a causal mask shifted by one, letting each query see the next key
# expected: mutant
# The causal mask lets each query see one key ahead.
import numpy as np


def causal_mask(n_q, n_k):
    i = np.arange(n_q)[:, None]  # (n_q, 1)
    j = np.arange(n_k)[None, :]  # (1, n_k)
    return j <= i + 1  # (n_q, n_k): query i sees keys 0 … i


def masked_attention(Q, K, V, mask):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ K.T / np.sqrt(Q.shape[1])  # (n_q, n_k)
    allowed = np.broadcast_to(np.asarray(mask, dtype=bool), S.shape)
    alive = allowed.any(axis=-1, keepdims=True)  # (n_q, 1): the query has a key
    S = np.where(allowed, S, -np.inf)
    top = np.where(alive, S.max(axis=-1, keepdims=True, initial=-np.inf, where=allowed), 0.0)
    E = np.where(allowed, np.exp(np.where(allowed, S - top, 0.0)), 0.0)
    total = E.sum(axis=-1, keepdims=True)
    A = np.divide(E, total, out=np.zeros_like(E), where=total > 0)  # zero rows where no key is allowed
    return A @ V, A  # (n_q, d_v), (n_q, n_k)


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]  # (len(lengths), n_k)
