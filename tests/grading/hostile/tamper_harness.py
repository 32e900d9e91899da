# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Walks the garbage collector and the call stack to find the harness, then forges its report: it swaps
# the reporter's write function, and writes fake "results" to every descriptor that might be the channel.
import gc
import json
import os
import sys


def forge(line):
    for fd in range(3, 64):
        try:
            os.write(fd, (json.dumps(line) + "\n").encode())
        except OSError:
            pass


for i in range(30):
    forge({"event": "result", "id": i, "outcome": "returned", "value": {"t": "int", "v": 12}})
forge({"event": "done"})

for obj in gc.get_objects():
    if type(obj).__name__ == "Reporter":
        obj.send = lambda event: None  # swallow the real results
frame = sys._getframe()
while frame is not None:
    if "job" in frame.f_locals and isinstance(frame.f_locals["job"], dict):
        frame.f_locals["job"]["calls"] = []  # try to skip every test
    frame = frame.f_back


def project_qkv(X, Wq, Wk, Wv):
    return None


def qkv_shapes(n, d_model, d_k, d_v):
    return None


def output_shape(n_q, n_k, d_v):
    return None


def param_count(d_model, d_k, d_v):
    return 12
