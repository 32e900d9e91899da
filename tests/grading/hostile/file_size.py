# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Writes 64 MiB into /tmp.
with open("/tmp/big.bin", "wb") as handle:
    for _ in range(64):
        handle.write(b"\0" * 1024 * 1024)
