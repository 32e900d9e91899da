# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import math

import numpy as np


def dot_scores(Q, K):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"d_k differs: Q has {Q.shape[-1]} columns, K has {K.shape[-1]}")
    return np.einsum("qd,kd->qk", Q, K)


def scaled_scores(Q, K):
    return dot_scores(Q, K) / math.sqrt(K.shape[1])


def score_spread(d_k):
    return d_k**0.5
