# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: TRIU
# also hint: CAUSAL_IGNORED
# (on the test with huge scores on the last token both mistakes let every earlier query see it)
# The causal mask turned the wrong way: np.triu keeps the future keys.
import numpy as np


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
    d_head = Q.shape[-1]
    n = X.shape[0]
    outputs = []
    for i in range(h):
        S = Q[i] @ K[i].T / np.sqrt(d_head)
        if causal:
            S = np.where(np.triu(np.ones((n, n), dtype=bool)), S, -np.inf)
        outputs.append(softmax(S) @ V[i])
    return merge_heads(np.stack(outputs)) @ Wo


def mha_param_count(d_model):
    return 4 * d_model * d_model
