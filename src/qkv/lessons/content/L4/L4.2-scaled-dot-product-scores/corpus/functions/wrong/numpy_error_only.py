# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: MISSING_CHECK  (Q @ K.T raises a ValueError of NumPy's own on these sizes: no check ran)
import numpy as np


def dot_scores(Q, K):
    return Q @ K.T


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def score_spread(d_k):
    return np.sqrt(d_k)
