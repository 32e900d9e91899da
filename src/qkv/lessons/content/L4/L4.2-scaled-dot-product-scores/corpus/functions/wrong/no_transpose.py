# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: NO_TRANSPOSE
# also hint: MISSING_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
import numpy as np


def dot_scores(Q, K):
    return Q @ K


def scaled_scores(Q, K):
    return Q @ K / np.sqrt(Q.shape[1])


def score_spread(d_k):
    return np.sqrt(d_k)
