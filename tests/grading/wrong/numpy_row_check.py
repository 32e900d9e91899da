# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: MISSING_ROW_CHECK  (NumPy's own ValueError for weights without d_model rows does not stand in for the check)
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError(f"Wq has {Wq.shape[1]} columns but Wk has {Wk.shape[1]}")
    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv
    return Q, K, V


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return np.int64(d_model * d_k * 2 + d_model * d_v)
