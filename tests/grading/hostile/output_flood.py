# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Prints 20 MB (over 300 times the 64 KiB kept), then leaves the stubs in place.
import sys

chunk = "x" * 1_000_000
for _ in range(20):
    sys.stdout.write(chunk)


def project_qkv(X, Wq, Wk, Wv):
    pass


def qkv_shapes(n, d_model, d_k, d_v):
    pass


def output_shape(n_q, n_k, d_v):
    pass


def param_count(d_model, d_k, d_v):
    pass
