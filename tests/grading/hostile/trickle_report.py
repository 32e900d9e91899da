# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Finds the report pipe through /proc/self/fd and trickles into it one byte at a time, so that the
# grader wakes up for every byte (and, before the fix, re-scanned its whole buffer after every read).
# Bounded: it stops after 3 s or 5 MiB (the grader accepts 4 MiB).
import os
import time

report = None
for name in os.listdir("/proc/self/fd"):
    try:
        if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
            report = int(name)
    except (OSError, ValueError):
        pass
end, sent = time.monotonic() + 3, 0
while report is not None and time.monotonic() < end and sent < 5 * 1024 * 1024:
    sent += os.write(report, b"x")


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
