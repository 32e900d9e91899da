# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# A well-formed but heavy report: every function returns 64 arrays of 4,096 random floats, the most the
# harness describes (about 6 MB of JSON per call), so that reading and judging the report would cost the
# server a second of CPU. The exercise's tests need a few hundred KB at most.
import numpy as np

HEAVY = tuple(np.random.default_rng(1).normal(size=4096) for _ in range(64))


def project_qkv(X, Wq, Wk, Wv):
    return HEAVY


def qkv_shapes(n, d_model, d_k, d_v):
    return HEAVY


def output_shape(n_q, n_k, d_v):
    return HEAVY


def param_count(d_model, d_k, d_v):
    return HEAVY
