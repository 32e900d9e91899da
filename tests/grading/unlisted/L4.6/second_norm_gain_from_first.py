# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.6/functions
# pinned: named first (asserted one by one)
# cause: ln1_g|ln2_g|gain|first
# source: the second layer norm given the first one's gain
# expected: mutant
# The second layer norm scales by the first one's gain (ln1_g), with its own shift.
import numpy as np


def multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=False):
    n, d_model = X.shape
    d_head = d_model // h
    Q, K, V = ((X @ W).reshape(n, h, d_head).transpose(1, 0, 2) for W in (Wq, Wk, Wv))  # (h, n, d_head)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_head)  # (h, n, n)
    if causal:
        S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    A = E / E.sum(axis=-1, keepdims=True)
    return (A @ V).transpose(1, 0, 2).reshape(n, d_model) @ Wo  # (n, d_model)


def layer_norm(X, gamma, beta, eps=1e-5):
    X = np.asarray(X, dtype=float)
    mu = X.mean(axis=-1, keepdims=True)
    var = X.var(axis=-1, keepdims=True)  # divided by d: the biased variance
    return (X - mu) / np.sqrt(var + eps) * gamma + beta


def gelu(x):
    x = np.asarray(x, dtype=float)
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def transformer_block(X, params, h, causal=True):
    p = {name: np.asarray(value, dtype=float) for name, value in params.items()}
    X = np.asarray(X, dtype=float)
    attended = multi_head_attention(
        layer_norm(X, p["ln1_g"], p["ln1_b"]), p["Wq"], p["Wk"], p["Wv"], p["Wo"], h, causal
    )
    H = X + attended
    mlp = gelu(layer_norm(H, p["ln1_g"], p["ln2_b"]) @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
    return H + mlp
