# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: A_LIST
# also hint: MISSING_CHECK  (no check of its own: NumPy's ValueError does not stand in for it)
import numpy as np


def dot_scores(Q, K):
    return (Q @ K.T).tolist()


def scaled_scores(Q, K):
    return [[float(np.dot(q, k)) / np.sqrt(len(q)) for k in K] for q in Q]


def score_spread(d_k):
    return np.sqrt(d_k)
