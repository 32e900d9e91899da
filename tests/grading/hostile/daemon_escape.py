# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Tries to outlive its grading: a double fork into a new session (out of the sandbox's process group),
# ignoring the polite signals, with a recognisable name. Bounded: the child sleeps 20 s and then exits.
import os
import signal
import time

pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        for polite in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(polite, signal.SIG_IGN)
        with open("/proc/self/comm", "w") as comm:
            comm.write("qkvdaemonchild")
        time.sleep(20)
    os._exit(0)
os.waitpid(pid, 0)


def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
