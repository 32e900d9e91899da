# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: RESIDUAL_MISSING
import numpy as np


def multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=False):
    """Given: the multi-head attention of the previous lesson."""
    n, d_model = X.shape
    d_head = d_model // h
    heads = [(X @ W).reshape(n, h, d_head).transpose(1, 0, 2) for W in (Wq, Wk, Wv)]
    Q, K, V = heads  # each (h, n, d_head)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_head)  # (h, n, n)
    if causal:
        S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    O = (A @ V).transpose(1, 0, 2).reshape(n, d_model)  # (n, d_model)
    return O @ Wo


def layer_norm(X, gamma, beta, eps=1e-5):
    mean = X.mean(axis=-1, keepdims=True)
    var = ((X - mean) ** 2).mean(axis=-1, keepdims=True)
    return (X - mean) / np.sqrt(var + eps) * gamma + beta


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def transformer_block(X, params, h, causal=True):
    p = params
    a = layer_norm(X, p["ln1_g"], p["ln1_b"])
    X = X + multi_head_attention(a, p["Wq"], p["Wk"], p["Wv"], p["Wo"], h, causal=causal)
    m = layer_norm(X, p["ln2_g"], p["ln2_b"])
    X = gelu(m @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
    return X
