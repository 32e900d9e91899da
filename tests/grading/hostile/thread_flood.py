# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Starts threads until it cannot (bounded: 200 at most, each sleeping 5 s). Threads count against the
# sandbox's process limit like processes do.
import threading
import time

for _ in range(200):
    threading.Thread(target=time.sleep, args=(5,), daemon=True).start()


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
