# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected message: ^center raised ValueError \(line \d+ of your file\): operands could not be broadcast together with shapes \(\d+,\d+\) \(\d+,\)\. It was called with x of shape \(\d+, \d+\)\. NumPy could not line up the shapes \(\d+, \d+\) and \(\d+,\) element by element.*without keepdims=True
import numpy as np


def row_softmax(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def safe_ratio(a, b):
    out = np.zeros_like(a, dtype=float)
    np.divide(a, b, out=out, where=b != 0)
    return out


def weighted(A, V):
    return A @ V


def center(x):
    return x - x.mean(axis=-1)


def masked_fill(x, mask):
    return np.where(mask, x, 0.0)


def halve(v):
    return v / 2


def shift(params, x):
    return x * params["w"] + params["b"]


def total(rows):
    return sum(rows)
