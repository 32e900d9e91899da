# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
import math

import numpy as np


def causal_mask(n_q, n_k):
    mask = np.zeros((n_q, n_k), dtype=bool)
    for i in range(n_q):
        for j in range(n_k):
            mask[i, j] = j <= i
    return mask


def masked_attention(Q, K, V, mask):
    Q, K, V = np.array(Q, dtype=float), np.array(K, dtype=float), np.array(V, dtype=float)
    mask = np.broadcast_to(np.array(mask, dtype=bool), (len(Q), len(K)))
    d_k = Q.shape[1]
    A = np.zeros((len(Q), len(K)))
    for i in range(len(Q)):
        allowed = [j for j in range(len(K)) if mask[i, j]]
        if not allowed:
            continue
        scores = {j: float(Q[i] @ K[j]) / math.sqrt(d_k) for j in allowed}
        top = max(scores.values())
        exps = {j: math.exp(s - top) for j, s in scores.items()}
        total = sum(exps.values())
        for j, e in exps.items():
            A[i, j] = e / total
    return A @ V, A


def padding_mask(lengths, n_k):
    return np.array([[j < length for j in range(n_k)] for length in lengths], dtype=bool)
