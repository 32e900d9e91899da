# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    if not (Wq.shape[0] == Wk.shape[0] == Wv.shape[0] == X.shape[1]):
        raise ValueError("every weight matrix needs d_model rows")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("queries and keys must share d_k")
    project = lambda W: np.einsum("nd,dk->nk", X, W)  # noqa: E731
    return project(Wq), project(Wk), project(Wv)


def qkv_shapes(n, d_model, d_k, d_v):
    return dict(Q=(n, d_k), K=(n, d_k), V=(n, d_v))


def output_shape(n_q, n_k, d_v):
    return n_q, d_v


def param_count(d_model, d_k, d_v):
    return int(np.prod([d_model, 2 * d_k + d_v]))
