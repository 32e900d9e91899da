# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected message: ^The result is right, but safe_ratio emitted RuntimeWarning \(line \d+ of your file\): (divide by zero|invalid value) encountered in divide.*, and this test expects no warning\. NumPy warns
# expected hint: DIVIDED_BY_ZERO
import numpy as np


def row_softmax(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def safe_ratio(a, b):
    return np.where(b != 0, a / b, 0.0)


def weighted(A, V):
    return A @ V


def center(x):
    return x - x.mean(axis=-1, keepdims=True)


def masked_fill(x, mask):
    return np.where(mask, x, 0.0)


def halve(v):
    return v / 2


def shift(params, x):
    return x * params["w"] + params["b"]


def total(rows):
    return sum(rows)
