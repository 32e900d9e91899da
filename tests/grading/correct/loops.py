# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Plain Python loops, no matrix product at all.
import numpy as np


def _matmul(A, B):
    rows, inner, cols = len(A), len(B), len(B[0])
    if len(A[0]) != inner:
        raise ValueError(f"cannot multiply: {len(A[0])} columns against {inner} rows")
    out = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            total = 0.0
            for t in range(inner):
                total += A[i][t] * B[t][j]
            out[i, j] = total
    return out


def project_qkv(X, Wq, Wk, Wv):
    if len(Wq[0]) != len(Wk[0]):
        raise ValueError("Wq and Wk must have the same number of columns")
    return _matmul(X, Wq), _matmul(X, Wk), _matmul(X, Wv)


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    count = 0
    for width in (d_k, d_k, d_v):
        for _ in range(d_model):
            count += width
    return count
