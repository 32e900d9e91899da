# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Raises a class of its own *named* ValueError (a TypeError underneath) for every bad shape, hoping that a
# check by name lets it pass the "raises ValueError" tests. PLACEHOLDER_BASE is swapped by the test.
import numpy as np


class ValueError(PLACEHOLDER_BASE):
    pass


def project_qkv(X, Wq, Wk, Wv):
    d_model = X.shape[1]
    if any(W.shape[0] != d_model for W in (Wq, Wk, Wv)) or Wq.shape[1] != Wk.shape[1]:
        raise ValueError("bad shapes")
    return X @ Wq, X @ Wk, X @ Wv


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
