# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected message: ^halve raised UFuncTypeError \(line \d+ of your file\): Cannot cast ufunc 'divide' output.*An in-place operation \(x /= …\) stores its result in the array it changes.*a float64 result cannot be stored in an int64 array
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
    return x - x.mean(axis=-1, keepdims=True)


def masked_fill(x, mask):
    return np.where(mask, x, 0.0)


def halve(v):
    v /= 2
    return v


def shift(params, x):
    return x * params["w"] + params["b"]


def total(rows):
    return sum(rows)
