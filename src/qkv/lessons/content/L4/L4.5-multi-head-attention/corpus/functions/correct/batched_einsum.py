# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import numpy as np


def split_heads(X, h):
    n, d_model = np.shape(X)
    if h < 1 or d_model % h:
        raise ValueError(f"{h} heads cannot share d_model = {d_model} columns equally.")
    return np.stack(np.split(np.asarray(X), h, axis=1))


def merge_heads(H):
    return np.concatenate(list(H), axis=1)


def multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=False):
    Q, K, V = (split_heads(np.asarray(X) @ W, h) for W in (Wq, Wk, Wv))
    S = np.einsum("hqd,hkd->hqk", Q, K) / np.sqrt(Q.shape[-1])
    if causal:
        n = S.shape[-1]
        S = S + np.triu(np.full((n, n), -np.inf), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    return merge_heads(A @ V) @ np.asarray(Wo)


def mha_param_count(d_model):
    return 4 * d_model**2
