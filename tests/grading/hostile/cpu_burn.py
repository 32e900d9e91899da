# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Burns CPU in the first test, forever.
def project_qkv(X, Wq, Wk, Wv):
    total = 0
    while True:
        total += 1
