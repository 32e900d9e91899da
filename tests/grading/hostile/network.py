# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Connects to a server on the loopback interface; it only defines working functions if that succeeds.
import socket

connection = socket.create_connection(("127.0.0.1", PORT_PLACEHOLDER), timeout=2)
connection.sendall(b"escaped")


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
