# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.4/functions
# expected: crash
# cause: mask
# source: PyTorch's name carried over: the mask parameter called attn_mask, as in F.scaled_dot_product_attention and nn.MultiheadAttention, so a call that passes mask= by name fails
import numpy as np


def causal_mask(n_q, n_k):
    return np.arange(n_k)[None, :] <= np.arange(n_q)[:, None]


def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]


def masked_attention(Q, K, V, attn_mask):
    Q, K, V = np.asarray(Q, dtype=float), np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    S = Q @ K.T / np.sqrt(Q.shape[1])
    keep = np.broadcast_to(np.asarray(attn_mask, dtype=bool), S.shape)
    S = np.where(keep, S, -np.inf)
    top = S.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    E = np.where(keep, np.exp(S - top), 0.0)
    total = E.sum(axis=1, keepdims=True)
    A = np.divide(E, total, out=np.zeros_like(E), where=total > 0)
    return A @ V, A
