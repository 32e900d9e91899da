# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Returns values that are hard to compare: ragged lists, None and text inside "matrices", shapes made of
# lists (unhashable), shapes holding arrays, and an exception message with a lone surrogate (not valid
# UTF-8). Each used to crash the grader itself (a traceback in `qkv check`, a 500 from the server).
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    n = X.shape[0]
    return [[1.0], [2.0, 3.0]], [[None] * Wk.shape[1]] * n, [["a"] * Wv.shape[1]] * n


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (np.array([n, d_k]), d_k), "K": ([n], [d_k]), "V": {"n": n}}


def output_shape(n_q, n_k, d_v):
    return ([n_q], [d_v])


def param_count(d_model, d_k, d_v):
    raise ValueError("no count for \ud800 today")
