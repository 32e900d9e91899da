# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected message: ^weighted raised ValueError \(line \d+ of your file\): matmul: .*\. It was called with A of shape \(\d+, \d+\) and V of shape \(\d+, \d+\)\. In A @ B the last size of A must equal the second-to-last size of B, and here the left operand.s last size is \d+ but
# expected hint: TRANSPOSED_WEIGHTS
import numpy as np


def row_softmax(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def safe_ratio(a, b):
    out = np.zeros_like(a, dtype=float)
    np.divide(a, b, out=out, where=b != 0)
    return out


def weighted(A, V):
    return A.T @ V


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
