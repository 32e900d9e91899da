# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.1/functions
# expected: mutant
# cause: normali|standard|mean|X
# source: a pre-norm habit carried into the projection: X standardised row by row before X @ W
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = (np.asarray(a) for a in (X, Wq, Wk, Wv))
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.shape[0] != d_model:
            raise ValueError(f"{name} has {W.shape[0]} rows, expected {d_model}")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("Wq and Wk need the same number of columns")
    X = (X - X.mean(axis=-1, keepdims=True)) / (X.std(axis=-1, keepdims=True) + 1e-6)
    return X @ Wq, X @ Wk, X @ Wv


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
