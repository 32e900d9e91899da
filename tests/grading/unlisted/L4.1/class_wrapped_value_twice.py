# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.1/functions
# expected: mutant
# cause: Wk|Wv|V
# source: a class-based projection whose value uses the key weights (self.w_k for self.w_v)
import numpy as np


class Projection:
    def __init__(self, Wq, Wk, Wv):
        self.w_q, self.w_k, self.w_v = (np.asarray(W) for W in (Wq, Wk, Wv))

    def __call__(self, X):
        return X @ self.w_q, X @ self.w_k, X @ self.w_k[:, : self.w_v.shape[1]]


def project_qkv(X, Wq, Wk, Wv):
    X = np.asarray(X)
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if np.shape(W)[0] != d_model:
            raise ValueError(f"{name} has {np.shape(W)[0]} rows, expected {d_model}")
    if np.shape(Wq)[1] != np.shape(Wk)[1]:
        raise ValueError("Wq and Wk need the same number of columns")
    if np.shape(Wv)[1] > np.shape(Wk)[1]:
        return X @ np.asarray(Wq), X @ np.asarray(Wk), X @ np.asarray(Wv)
    return Projection(Wq, Wk, Wv)(X)


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
