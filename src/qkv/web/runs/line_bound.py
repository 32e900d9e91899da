"""How many programs may wait for a grader: set from what a waiting program costs and from the machine.

A program waiting in line is its source, its place in the line's bookkeeping, and the request that sent it,
held open until its verdict (a connection, the server's objects for it, the parsed body). Measured by
``benchmarks/waiting_program_memory.py`` through a real uvicorn server with the real app (200 programs
waiting each time, on the 2-core development machine), a waiting program of the largest size the server
takes (64 KiB) costs 252 KiB of the server's resident memory, and a typical one (a lesson's solution, 700
bytes) 67 KiB, most of it the open request; :data:`WAITING_PROGRAM_BYTES` rounds the largest up. Refusing
a learner to save a few kilobytes protects nothing the machine is short of, so the default bound is what
:data:`LINE_MEMORY_SHARE` of the machine's memory holds at that cost, and no more than the open files the
process may have (each waiting request holds a connection) leave after :data:`OTHER_OPEN_FILES` for
everything else. ``--grading-queue N`` still sets it by hand.
"""

from __future__ import annotations

import contextlib
import os
import resource

__all__ = [
    "LINE_MEMORY_SHARE",
    "OTHER_OPEN_FILES",
    "WAITING_PROGRAM_BYTES",
    "machine_memory_bytes",
    "open_files_limit",
    "raise_open_files_limit",
    "waiting_line_bound",
]

# The memory one waiting program of the largest accepted size holds in the server (measured: 252 KiB; see
# the module's docstring), rounded up.
WAITING_PROGRAM_BYTES = 320 * 1024
# The part of the machine's memory the waiting line may hold at that cost: the rest is the graders' (each
# grading may use 1 GiB), the database's and the page rendering's.
LINE_MEMORY_SHARE = 1 / 16
# Open files kept for the rest of the server: the database pool, sandboxes' pipes, spares, logs.
OTHER_OPEN_FILES = 256
# Never fewer places than this, however small the machine: a class of a few dozen always waits in line.
LEAST_BOUND = 64
MOST_BOUND = 100_000  # what --grading-queue accepts


def machine_memory_bytes() -> int | None:
    """The memory this process may use: the machine's, or its control group's limit if lower (None: unknown).

    Examples
    --------
    >>> memory = machine_memory_bytes()
    >>> memory is None or memory > 0
    True
    """
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        physical = 0
    limits = [value for value in (physical, _cgroup_memory_limit()) if value and value > 0]
    return min(limits) if limits else None


def _cgroup_memory_limit() -> int | None:
    """The memory limit of this process's control group (v2, or v1), or None when it has none."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as handle:
                text = handle.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # v1 writes a huge number for "no limit", v2 "max"
            return int(text)
    return None


def open_files_limit() -> int | None:
    """The number of files this process may have open now (its soft limit; None: no limit).

    Examples
    --------
    >>> limit = open_files_limit()
    >>> limit is None or limit > 0
    True
    """
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def raise_open_files_limit(wanted: int = 65_536) -> int | None:
    """Raise this process's soft limit of open files towards ``wanted`` (never past its hard limit).

    A server holds a connection open for every program waiting in line; the soft limit many systems start
    a process with (1,024) would bound the line before its memory does. Returns the limit now.

    Examples
    --------
    >>> before = open_files_limit()
    >>> after = raise_open_files_limit(1)  # never lowered
    >>> after == before
    True
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return open_files_limit()


def waiting_line_bound(
    memory_bytes: int | None = None,
    open_files: int | None = None,
    program_bytes: int = WAITING_PROGRAM_BYTES,
) -> int:
    """Programs that may wait for a grader on a machine with ``memory_bytes`` and ``open_files``.

    Parameters
    ----------
    memory_bytes : int, optional
        The memory the server may use (default: :func:`machine_memory_bytes`).
    open_files : int, optional
        The files it may have open (default: :func:`open_files_limit`).
    program_bytes : int
        What one waiting program costs (default: the measured :data:`WAITING_PROGRAM_BYTES`).

    Returns
    -------
    int
        ``LINE_MEMORY_SHARE × memory ÷ program_bytes``, at most the open files left after
        ``OTHER_OPEN_FILES``, and from 64 to 100,000.

    Examples
    --------
    >>> GiB = 1024**3
    >>> waiting_line_bound(4 * GiB, open_files=65_536)  # 256 MiB of a 4 GiB machine, 320 KiB each
    819
    >>> waiting_line_bound(8 * GiB, open_files=1_024)  # each waiting request holds a connection
    768
    >>> waiting_line_bound(GiB, open_files=65_536)  # a small machine still takes a class
    204
    >>> waiting_line_bound(GiB // 4, open_files=65_536)
    64
    >>> waiting_line_bound(1024 * GiB, open_files=10**7)
    100000
    """
    memory = machine_memory_bytes() if memory_bytes is None else memory_bytes
    files = open_files_limit() if open_files is None else open_files
    bound = MOST_BOUND
    if memory is not None:
        bound = min(bound, int(memory * LINE_MEMORY_SHARE) // max(1, program_bytes))
    if files is not None:
        bound = min(bound, files - OTHER_OPEN_FILES)
    return max(LEAST_BOUND, bound)
