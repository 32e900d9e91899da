# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Finds the report pipe through /proc/self/fd and trickles into it one byte at a time, so that the
# grader wakes up for every byte (and, before the fix, re-scanned its whole buffer after every read).
# A pause after each byte keeps the bytes apart even when the grader is slow to read. Bounded: it stops
# after 4 s or 5 MiB (the grader accepts 4 MiB, and its wall clock here is 5 s).
import os
import time

report = None
for name in os.listdir("/proc/self/fd"):
    try:
        if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
            report = int(name)
    except (OSError, ValueError):
        pass
end, sent = time.monotonic() + 4, 0
while report is not None and time.monotonic() < end and sent < 5 * 1024 * 1024:
    sent += os.write(report, b"x")
    time.sleep(0.0002)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
