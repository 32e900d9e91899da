# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Writes outside /tmp; it only defines working functions if one of those writes succeeds.
written = False
for path in ("TARGET_PLACEHOLDER", "/escaped.txt", "/grader/escaped.txt", "/usr/escaped.txt"):
    try:
        with open(path, "w") as handle:
            handle.write("escaped")
        written = True
    except OSError:
        pass
with open("/tmp/allowed.txt", "w") as handle:  # the private tmpfs is fine
    handle.write("ok")
if not written:
    raise SystemExit("nothing outside /tmp was writable")


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
