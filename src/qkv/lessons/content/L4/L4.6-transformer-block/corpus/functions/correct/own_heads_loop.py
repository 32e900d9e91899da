# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import math

import numpy as np


def layer_norm(X, gamma, beta, eps=1e-5):
    X = np.asarray(X, dtype=float)
    centred = X - X.mean(axis=-1, keepdims=True)
    return centred / np.sqrt(X.var(axis=-1, keepdims=True) + eps) * gamma + beta


def gelu(x):
    c = math.sqrt(2 / math.pi)
    return 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * np.power(x, 3))))


def attend(X, Wq, Wk, Wv, Wo, h, causal):
    n, d = X.shape
    out = np.zeros((n, d))
    k = d // h
    for i in range(h):
        cols = slice(i * k, (i + 1) * k)
        Q, K, V = X @ Wq[:, cols], X @ Wk[:, cols], X @ Wv[:, cols]
        S = Q @ K.T / math.sqrt(k)
        if causal:
            S[np.triu_indices(n, 1)] = -np.inf
        A = np.exp(S - S.max(axis=1, keepdims=True))
        out[:, cols] = (A / A.sum(axis=1, keepdims=True)) @ V
    return out @ Wo


def transformer_block(X, params, h, causal=True):
    P = params
    X = np.asarray(X, dtype=float)
    X = X + attend(layer_norm(X, P["ln1_g"], P["ln1_b"]), P["Wq"], P["Wk"], P["Wv"], P["Wo"], h, causal)
    hidden = gelu(layer_norm(X, P["ln2_g"], P["ln2_b"]) @ P["W1"] + P["b1"])
    return X + hidden @ P["W2"] + P["b2"]
