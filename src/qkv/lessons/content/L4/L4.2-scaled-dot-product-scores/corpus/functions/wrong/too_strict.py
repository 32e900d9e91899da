# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: TOO_STRICT
import numpy as np


def dot_scores(Q, K):
    if Q.shape != K.shape:
        raise ValueError("Q and K must have the same shape")
    return Q @ K.T


def scaled_scores(Q, K):
    return dot_scores(Q, K) / np.sqrt(Q.shape[1])


def score_spread(d_k):
    return np.sqrt(d_k)
