# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import numpy as np


def _check(Q, K):
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}; both need d_k columns.")


def dot_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    _check(Q, K)
    return Q @ K.T  # (n_q, n_k)


def scaled_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    _check(Q, K)
    return Q @ K.T / np.sqrt(Q.shape[1])  # (n_q, n_k)


def score_spread(d_k):
    return float(np.sqrt(d_k))
