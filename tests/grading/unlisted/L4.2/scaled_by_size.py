# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# exercise: L4.2/functions
# pinned: named first (asserted one by one)
# cause: size|d_k|n_q|√|sqrt
# source: a scale read from an array's total size (Q.size) where its width belongs
# expected: relation:factor
# The scores divided by the square root of Q's whole size, n_q·d_k, not of d_k.
import numpy as np


def dot_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has d_k = {Q.shape[1]} columns but K has {K.shape[1]}; they must be equal.")
    return Q @ K.T  # (n_q, n_k)


def scaled_scores(Q, K):
    d_k = np.shape(Q)[1]
    return dot_scores(Q, K) / np.sqrt(np.size(Q))  # (n_q, n_k)


def score_spread(d_k):
    return float(np.sqrt(d_k))  # the variance of q·k is d_k
