# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.1/functions
# expected: relation:offset mutant
# cause: d_v|d_model|\+
# source: parameter counts copied from multi-head layers, which also count the output projection W_o
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = (np.asarray(a) for a in (X, Wq, Wk, Wv))
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.shape[0] != d_model:
            raise ValueError(f"{name} has {W.shape[0]} rows, expected {d_model}")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("Wq and Wk need the same number of columns")
    return X @ Wq, X @ Wk, X @ Wv


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v) + d_v * d_model
