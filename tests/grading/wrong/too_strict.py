# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# expected hint: TOO_STRICT
# also hint: MISSING_ROW_CHECK  (no row check either: NumPy's ValueError does not stand in for it)


def project_qkv(X, Wq, Wk, Wv):
    if not (Wq.shape[1] == Wk.shape[1] == Wv.shape[1]):
        raise ValueError("all three weight matrices need the same number of columns")
    return X @ Wq, X @ Wk, X @ Wv


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
