# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Keeps opening files until something stops it (at most 10 000).
handles = [open("/tmp/handle.txt", "w") for _ in range(10_000)]
