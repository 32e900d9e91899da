# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Looks for writable places other than the 16 MiB /tmp: bubblewrap's /dev (and /dev/shm) and the empty
# tmpfs that hides site-packages are tmpfs of no fixed size, so filling them would take the machine's
# memory. Bounded on purpose: 24 files of 1 MiB at most, then it defines working functions if any of
# those writes got through (so the test sees "pass" when a hole is open).
import os

written = 0
stdlib = os.path.dirname(os.__file__)
for directory in ("/dev/shm", "/dev", stdlib + "/site-packages", stdlib + "/test"):
    for index in range(24):
        try:
            with open(f"{directory}/fill-{index}", "wb") as handle:
                handle.write(b"x" * 1024 * 1024)
            written += 1
        except OSError:
            break
if not written:
    raise SystemExit("only /tmp was writable")
print(f"wrote {written} MiB outside /tmp")


def project_qkv(X, Wq, Wk, Wv):
    for W in (Wq, Wk, Wv):
        if W.shape[0] != X.shape[1]:
            raise ValueError(f"a weight matrix has {W.shape[0]} rows, but X has {X.shape[1]} columns")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("Wq and Wk need the same number of columns")
    return X @ Wq, X @ Wk, X @ Wv


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
