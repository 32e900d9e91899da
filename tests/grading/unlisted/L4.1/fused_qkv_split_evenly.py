# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.1/functions
# expected: relation:shape mutant crash
# cause: split|d_v|d_k|equal|three
# source: GPT-2-style fused projection (one X @ [Wq | Wk | Wv]) split into three equal parts, wrong where d_v differs from d_k
import numpy as np


def project_qkv(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = (np.asarray(a) for a in (X, Wq, Wk, Wv))
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.shape[0] != d_model:
            raise ValueError(f"{name} has {W.shape[0]} rows, expected {d_model}")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("Wq and Wk need the same number of columns")
    fused = X @ np.concatenate([Wq, Wk, Wv], axis=1)
    size = fused.shape[1] // 3
    return fused[:, :size], fused[:, size : 2 * size], fused[:, 2 * size :]


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
