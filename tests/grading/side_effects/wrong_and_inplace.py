# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected message: ^The result differs from the expected value in .*; the first is .*\. It also changed its first argument \(S\) in place\.$
# expected hint: MUTATED_SCORES
import numpy as np


def row_softmax(S):
    S -= S.max(axis=-1, keepdims=True)
    return np.exp(S)


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
    return v / 2


def shift(params, x):
    return x * params["w"] + params["b"]


def total(rows):
    return sum(rows)
