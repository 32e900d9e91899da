# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# An exception class with a name of 200,000 characters: the harness reports type names whole, so every
# message built from it (and the results document the server stores) would be that long.
Huge = type("E" * 200_000, (Exception,), {})


def param_count(d_model, d_k, d_v):
    raise Huge("too long to read")
