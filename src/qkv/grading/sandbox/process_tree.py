"""A sandbox's processes seen from outside: the CPU time of its whole process tree, its process ids, and
how many processes a sandbox uid holds.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["processes_of_user", "tree_cpu_seconds", "tree_pids"]


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds of ``pid`` and its live descendants (and their reaped children), from ``/proc``.

    None where ``/proc`` does not list children (a kernel without ``CONFIG_PROC_CHILDREN``).

    Examples
    --------
    >>> tree_cpu_seconds(os.getpid()) >= 0
    True
    """
    if not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        return None  # no such process, or a kernel that does not list children
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for current in tree_pids(pid):
        try:
            with open(f"/proc/{current}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        except (OSError, IndexError, ValueError):
            if current == pid:
                return None
    return total / ticks


def tree_pids(pid: int) -> list[int]:
    """``pid`` and its live descendants, from ``/proc`` (only ``pid`` where it lists no children).

    Examples
    --------
    >>> tree_pids(os.getpid())[0] == os.getpid()
    True
    """
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        if current in found:
            continue
        found.append(current)
        with contextlib.suppress(OSError, ValueError):
            for task in os.listdir(f"/proc/{current}/task"):
                with contextlib.suppress(OSError), open(f"/proc/{current}/task/{task}/children") as handle:
                    pending += [int(child) for child in handle.read().split()]
    return found


def processes_of_user(uid: int) -> int:
    """How many processes ``uid`` runs now (``RLIMIT_NPROC`` counts them all, not just the sandbox's)."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{pid}").st_uid == uid:
                count += 1
    return count
