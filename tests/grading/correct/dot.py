# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("Wq and Wk have different widths")
    for W in (Wq, Wk, Wv):
        if len(W) != X.shape[1]:
            raise ValueError("wrong number of rows")
    return (np.dot(X, Wq), np.dot(X, Wk), np.dot(X, Wv))


def qkv_shapes(n, d_model, d_k, d_v):
    shapes = {}
    for name, width in zip("QKV", (d_k, d_k, d_v)):
        shapes[name] = (n, width)
    return shapes


def output_shape(n_q, n_k, d_v):
    return tuple([n_q, d_v])


def param_count(d_model, d_k, d_v):
    return sum(np.zeros((d_model, w)).size for w in (d_k, d_k, d_v))
