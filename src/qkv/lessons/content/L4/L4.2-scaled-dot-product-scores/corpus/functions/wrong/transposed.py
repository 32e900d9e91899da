# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: TRANSPOSED_RESULT
# also hint: MISSING_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
import numpy as np


def dot_scores(Q, K):
    return K @ Q.T


def scaled_scores(Q, K):
    return K @ Q.T / np.sqrt(Q.shape[1])


def score_spread(d_k):
    return np.sqrt(d_k)
