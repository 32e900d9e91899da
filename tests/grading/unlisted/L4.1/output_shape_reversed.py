# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.1/functions
# pinned: named first (asserted one by one)
# cause: d_v|n_q|order|transpos
# source: an output shape written in reverse axis order, as code ported between row- and column-major conventions does
# expected: relation:transposed mutant
# The output's shape written the other way round: (d_v, n_q).
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = (np.asarray(a) for a in (X, Wq, Wk, Wv))
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.shape[0] != d_model:
            raise ValueError(f"{name} has {W.shape[0]} rows, but X has d_model = {d_model} columns.")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError(f"Wq has {Wq.shape[1]} columns and Wk has {Wk.shape[1]}; they must be equal (d_k).")
    return X @ Wq, X @ Wk, X @ Wv  # (n, d_k), (n, d_k), (n, d_v)


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (d_v, n_q)


def param_count(d_model, d_k, d_v):
    return d_model * d_k + d_model * d_k + d_model * d_v
