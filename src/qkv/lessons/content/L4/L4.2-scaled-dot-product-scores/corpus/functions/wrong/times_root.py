# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: TIMES_ROOT
# also hint: MISSING_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
import numpy as np


def dot_scores(Q, K):
    return Q @ K.T


def scaled_scores(Q, K):
    return Q @ K.T * np.sqrt(Q.shape[1])


def score_spread(d_k):
    return np.sqrt(d_k)
