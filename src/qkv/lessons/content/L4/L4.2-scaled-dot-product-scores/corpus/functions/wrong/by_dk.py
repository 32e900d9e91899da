# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: BY_DK
import numpy as np


def dot_scores(Q, K):
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}")
    return Q @ K.T


def scaled_scores(Q, K):
    return dot_scores(Q, K) / Q.shape[1]


def score_spread(d_k):
    return np.sqrt(d_k)
