# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.5/functions
# pinned: named first (asserted one by one)
# cause: order|head|reverse
# source: heads merged in reverse order
# expected: relation:permuted lesson
# The heads are merged last first.
import numpy as np


def split_heads(X, h):
    X = np.asarray(X, dtype=float)
    n, d_model = X.shape
    if d_model % h != 0:
        raise ValueError(f"h = {h} heads do not divide d_model = {d_model}.")
    return X.reshape(n, h, d_model // h).transpose(1, 0, 2)  # (h, n, d_head)


def merge_heads(H):
    H = np.asarray(H, dtype=float)
    h, n, d_head = H.shape
    return H[::-1].transpose(1, 0, 2).reshape(n, h * d_head)  # (n, h·d_head)


def multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=False):
    X = np.asarray(X, dtype=float)
    n, d_model = X.shape
    Q, K, V = (split_heads(X @ np.asarray(W, dtype=float), h) for W in (Wq, Wk, Wv))  # (h, n, d_head)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_model // h)  # (h, n, n)
    if causal:
        S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    A = E / E.sum(axis=-1, keepdims=True)  # (h, n, n)
    return merge_heads(A @ V) @ np.asarray(Wo, dtype=float)  # (n, d_model)


def mha_param_count(d_model):
    return 4 * d_model * d_model  # Wq, Wk, Wv and Wo
