# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.5/functions
# expected: relation:repeat
# cause: call|cache|before|earlier|repeat
# source: a key/value cache kept between calls and never reset, so a second call attends to the first call's keys too
import numpy as np

_CACHE = {}


def split_heads(X, h):
    X = np.asarray(X, dtype=float)
    n, d_model = X.shape
    if d_model % h != 0:
        raise ValueError(f"h = {h} does not divide d_model = {d_model}.")
    return X.reshape(n, h, d_model // h).transpose(1, 0, 2)


def merge_heads(H):
    H = np.asarray(H, dtype=float)
    h, n, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(n, h * d_head)


def softmax(S):
    S = S - S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-1, keepdims=True)


def multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=False):
    X = np.asarray(X, dtype=float)
    Q = split_heads(X @ Wq, h)
    K = split_heads(X @ Wk, h)
    V = split_heads(X @ Wv, h)
    past = _CACHE.setdefault((h, Q.shape[-1], causal), [])  # one cache per layer shape, never reset
    if past:
        K = np.concatenate([past[-1][0], K], axis=1)
        V = np.concatenate([past[-1][1], V], axis=1)
    past.append((K, V))
    n, m = X.shape[0], K.shape[1]
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
    if causal:
        S = np.where(np.tril(np.ones((n, m), dtype=bool), k=m - n), S, -np.inf)
    return merge_heads(softmax(S) @ V) @ Wo


def mha_param_count(d_model):
    return 4 * d_model * d_model
